package vsr

import "fmt"

// viewChangeState is what a replica collects during a view change.
type viewChangeState struct {
	// svcFrom has bit i set when replica i sent StartViewChange for view.
	svcFrom uint8
	// dvcSent reports whether this replica has sent its DoViewChange.
	dvcSent bool
	// dvcs holds the DoViewChange messages a new primary received.
	dvcs [ReplicaCountMax]*Message
}

func (v *viewChangeState) reset() { *v = viewChangeState{} }

// startViewChange moves the replica into a view change for view.
func (r *Replica) startViewChange(view uint64) {
	if view < r.view || (view == r.view && r.status == StatusViewChange) {
		return
	}
	r.abandonRequests()
	r.view = view
	r.status = StatusViewChange
	r.viewChange.reset()
	r.viewChange.svcFrom = 1 << r.cfg.ReplicaIndex
	r.timers.stopAll()
	r.timers.viewChange.after = r.viewChangeTimeoutTicks()
	r.timers.viewChange.start()
	r.timers.repair.start()
	r.requestSuperblock()
	r.broadcast(&Message{Header: Header{Command: CommandStartViewChange, View: view}})
	r.maybeSendDoViewChange()
}

// viewChangeBackoffMax caps the doubling of the view-change timeout.
const viewChangeBackoffMax = 3

// viewChangeTimeoutTicks doubles the timeout for every view that failed
// since the last normal one (so that slow networks still complete a view
// change) and staggers replicas by index so that they do not time out in
// lockstep.
func (r *Replica) viewChangeTimeoutTicks() uint64 {
	failed := min(r.view-r.logView-1, viewChangeBackoffMax)
	if r.view <= r.logView {
		failed = 0
	}
	base := r.cfg.ViewChangeTimeoutTicks
	return base<<failed + uint64(r.cfg.ReplicaIndex)*max(base/4, 1)
}

// viewChangeTimeout gives up on a stalled view change and tries the next
// view.
func (r *Replica) viewChangeTimeout() {
	if r.abandonRestart() {
		return // restart.go
	}
	r.startViewChange(r.view + 1)
}

func (r *Replica) onStartViewChange(m *Message) {
	if m.View > r.view {
		r.startViewChange(m.View)
	}
	if m.View != r.view || r.status != StatusViewChange {
		return
	}
	r.viewChange.svcFrom |= 1 << m.Replica
	r.maybeSendDoViewChange()
}

// maybeSendDoViewChange sends this replica's log to the new primary once a
// view-change quorum voted to leave the old view and, in persisted mode,
// the vote is durable.
func (r *Replica) maybeSendDoViewChange() {
	if r.status != StatusViewChange || r.viewChange.dvcSent {
		return
	}
	if bitCount(r.viewChange.svcFrom) < r.viewChangeQuorum {
		return
	}
	if r.logViewLost {
		// The log no longer holds what this replica acked in its log view
		// (a transferred checkpoint cut it): it recovers, never votes.
		panic(fmt.Sprintf("vsr: DoViewChange for view %d with the log of log view %d lost", r.view, r.logView))
	}
	if r.persisted() && !r.sb.viewDurable(r.view, r.logView) && !r.cfg.Bugs.Has(BugVoteBeforeDurableView) {
		r.requestSuperblock()
		return
	}
	if !r.restartVoteDurable() {
		return
	}
	// The planted bug takes out the guard and this assertion both, so that
	// the simulator's own check at the moment of sending must find it.
	if r.persisted() && !r.sb.viewDurable(r.view, r.logView) && !r.cfg.Bugs.Has(BugVoteBeforeDurableView) {
		panic("vsr: DoViewChange before its view is durable")
	}
	r.viewChange.dvcSent = true
	body, count := r.doViewChangeBody()
	dvc := &Message{Header: Header{Command: CommandDoViewChange, View: r.view, LogView: r.logView, Op: r.op, Commit: r.commitMin, CheckpointOp: r.checkpointOp, Context: Uint128{Lo: uint64(count)}}, Body: body}
	r.markRestartVote(dvc)
	primary := r.primaryIndex(r.view)
	if primary == r.cfg.ReplicaIndex {
		r.stamp(dvc)
		dvc.Seal()
		r.recordDoViewChange(dvc)
		return
	}
	r.send(primary, dvc)
}

func (r *Replica) onDoViewChange(m *Message) {
	if m.View > r.view {
		r.startViewChange(m.View)
	}
	if m.View != r.view || r.status != StatusViewChange || !r.isPrimaryOf(r.view) {
		return
	}
	r.recordDoViewChange(m.Clone())
}

func (r *Replica) recordDoViewChange(m *Message) {
	r.viewChange.dvcs[m.Replica] = m
	count := 0
	for _, d := range r.viewChange.dvcs {
		if d != nil {
			count++
		}
	}
	if count >= r.viewChangeQuorum && r.viewChange.dvcs[r.cfg.ReplicaIndex] != nil {
		r.startView()
	}
}

// betterLog reports whether the log of a beats that of b: the higher log
// view wins, then the higher op. BugViewChangeLogByOpOnly ignores the log
// view.
func (r *Replica) betterLog(a, b *Message) bool {
	if !r.cfg.Bugs.Has(BugViewChangeLogByOpOnly) && a.LogView != b.LogView {
		return a.LogView > b.LogView
	}
	return a.Op > b.Op
}

// startView makes this replica the primary of its view from the best log of
// the DoViewChange quorum, and tells the backups.
func (r *Replica) startView() {
	if r.restartViewWait() {
		return
	}
	var best *Message
	commit := r.commitMax
	for _, d := range r.viewChange.dvcs {
		if d == nil || r.restartVoteIgnored(d) {
			continue
		}
		if best == nil || r.betterLog(d, best) {
			best = d
		}
		commit = max(commit, d.Commit)
	}
	k := int(best.Context.Lo)
	if k*HeaderSize > len(best.Body) {
		r.viewChange.dvcs[best.Replica] = nil
		return
	}
	headers, err := decodeChain(best.Body[:k*HeaderSize])
	if err != nil {
		// A DoViewChange that passed its checksum but carries a broken
		// chain: drop it and wait for the next round.
		r.viewChange.dvcs[best.Replica] = nil
		return
	}
	op := r.truncateNacked(headers, best.Op, max(commit, r.commitMin))
	holdable := op <= r.opPrepareMax()
	if headers[0].Op > op {
		// Every op of the chain was nacked: the log ends at the parent of
		// its first op, which this replica must hold (or have applied).
		below, ok := r.header(op)
		holdable = holdable && (op <= r.commitMin || (ok && below.Checksum == headers[0].Parent))
		headers = nil
	} else {
		for headers[len(headers)-1].Op > op {
			headers = headers[:len(headers)-1]
		}
		holdable = holdable && r.chainConnects(headers)
	}
	if !holdable || (r.abdicating && !r.restart.active) {
		// This replica cannot hold the view's log: its checkpoint is too
		// far behind the log's head for its journal, or its log does not
		// reach the chain. It must not lead the view (a primary holds every
		// op of its view, durably); the primary of the next view takes over
		// and this replica joins that view by catching up first. So does
		// a replica whose host cannot serve (abdicate.go).
		if r.abdicating {
			r.abdications++
		}
		r.startViewChange(r.view + 1)
		return
	}
	// The log view first: the journal records of the chain's changes name
	// the log view they belong to (journalHeaderChange).
	r.logView = r.view
	r.logViewHead = r.chainHead(headers, op)
	r.installChain(headers, op)
	r.status = StatusNormal
	r.commitMax = max(commit, r.commitMax)
	if r.commitMax > r.op {
		r.commitMax = r.op
	}
	r.enterNormal()
	for op := r.commitMax + 1; op <= r.op; op++ {
		if e := r.log.at(op); e != nil {
			e.oks = 0
		}
	}
	if !r.Primary() || r.commitMax > r.op || r.op > r.opPrepareMax() {
		panic(fmt.Sprintf("vsr: view %d started with commit %d, op %d, window to %d", r.view, r.commitMax, r.op, r.opPrepareMax()))
	}
	r.broadcast(&Message{Header: Header{Command: CommandStartView, View: r.view, LogView: r.logView, Op: r.op, Commit: r.commitMax, CheckpointOp: r.checkpointOp}, Body: r.chainBody()})
	r.repair()
	r.tryCommit()
}

// enterNormal resets timers and per-view state after the replica became
// normal in r.view.
func (r *Replica) enterNormal() {
	r.sb.logViewOp = r.op
	r.timers.stopAll()
	r.viewChange.reset()
	r.ackedOp = 0
	r.abandonQueue()
	if r.cfg.Bugs.Has(BugForgetClientTableOnViewChange) {
		r.clients.forgetRequests()
	}
	if r.isPrimaryOf(r.view) {
		r.timers.commitHeartbeat.start()
		r.timers.prepare.start()
	} else {
		r.timers.normalHeartbeat.start()
	}
	r.timers.repair.start()
	r.requestSuperblock()
	r.endRestart()
}

func (r *Replica) onStartView(m *Message) {
	if m.View < r.view || (m.View == r.view && r.status == StatusNormal && !r.syncing()) {
		return
	}
	if r.isPrimaryOf(m.View) || m.Replica != r.primaryIndex(m.View) {
		return
	}
	headers, err := decodeChain(m.Body)
	if err != nil || headers[len(headers)-1].Op != m.Op {
		return
	}
	r.abandonRequests() // a primary of an older view learns of this one
	r.advanceCommitMax(m.Commit)
	if !r.chainHoldable(headers, m.Op) {
		r.syncTo(m.View, r.chainConnects(headers), m.Op)
		return
	}
	r.view = m.View
	r.status = StatusNormal
	r.logView = m.View // before the journal records of the chain's changes
	r.logViewHead = r.chainHead(headers, m.Op)
	r.installChain(headers, m.Op)
	if r.op != m.Op {
		panic(fmt.Sprintf("vsr: joined view %d at op %d, its log ends at %d", m.View, r.op, m.Op))
	}
	r.enterNormal()
	r.repair()
	r.afterLogChange()
}

// syncing reports whether the replica is a backup in normal status that
// has not joined its view's log yet (syncTo): it keeps the log of an older
// log view, and acks, applies and installs nothing until it has.
func (r *Replica) syncing() bool {
	return r.status == StatusNormal && r.logView != r.view
}

// syncTo makes a backup that cannot hold the log of view (chainHoldable)
// follow view without joining its log: it keeps its log and log view (so
// that it never votes with a log view whose log it does not hold), and
// moves its checkpoint forward first, locally when what it applied
// connects to the chain and lets its journal reach op, else by state
// transfer. repair then asks for the StartView again.
func (r *Replica) syncTo(view uint64, connects bool, op uint64) {
	if view > r.view || r.status != StatusNormal {
		r.view = view
		r.status = StatusNormal
		r.enterNormal()
	}
	if r.sb.checkpoint != nil || r.transfer.installing {
		return // a checkpoint is on its way: its window may suffice
	}
	if connects && op <= r.commitMin+r.cfg.JournalSlots && r.commitMin > r.checkpointOp && !r.transfer.behind {
		r.checkpointNow()
		return
	}
	r.transfer.behind = true
	r.repair()
}

// requestStartView asks the primary of view for its StartView; a replica
// calls it when it hears of a view it did not take part in.
func (r *Replica) requestStartView(view uint64) {
	if r.isPrimaryOf(view) {
		return
	}
	// Heartbeats of the later view arrive every few ticks: one request per
	// view and repair round is enough (a StartView carries a whole log).
	// (The tick is kept plus one, so that zero means never.)
	if view == r.lastStartViewRequest.view && r.lastStartViewRequest.tick != 0 && r.timers.ticks+1-r.lastStartViewRequest.tick < r.cfg.RepairTimeoutTicks/2 {
		return
	}
	r.lastStartViewRequest.view, r.lastStartViewRequest.tick = view, r.timers.ticks+1
	r.send(r.primaryIndex(view), &Message{Header: Header{Command: CommandRequestStartView, View: view}})
}

func (r *Replica) onRequestStartView(m *Message) {
	if !r.Primary() || m.View != r.view {
		return
	}
	r.send(m.Replica, &Message{Header: Header{Command: CommandStartView, View: r.view, LogView: r.logView, Op: r.op, Commit: r.commitMax, CheckpointOp: r.checkpointOp}, Body: r.chainBody()})
}

// chainHeaders returns the longest hash chain of headers ending at r.op,
// at most JournalSlots of them, newest first.
func (r *Replica) chainHeaders() []*Header {
	var chain []*Header
	op := r.op
	for range r.cfg.JournalSlots {
		h, ok := r.header(op)
		if !ok || (len(chain) > 0 && chain[len(chain)-1].Parent != h.Checksum) {
			break
		}
		chain = append(chain, h)
		if op == 0 {
			break
		}
		op--
	}
	return chain
}

// chainBody encodes chainHeaders oldest first.
func (r *Replica) chainBody() []byte {
	chain := r.chainHeaders()
	body := make([]byte, len(chain)*HeaderSize)
	for i := range chain {
		chain[len(chain)-1-i].Encode(body[i*HeaderSize:])
	}
	return body
}

// doViewChangeBody encodes the chain followed by a presence bitmap: bit i
// is set when this replica holds (or may have acked) the prepare of the
// i-th header. A clear bit is a nack: this replica never acked that op.
func (r *Replica) doViewChangeBody() (body []byte, count int) {
	chain := r.chainHeaders()
	n := len(chain)
	body = make([]byte, n*HeaderSize+(n+7)/8)
	for i := range chain {
		h := chain[n-1-i]
		h.Encode(body[i*HeaderSize:])
		e := r.log.at(h.Op)
		if h.Op <= r.commitMin || e == nil || e.prepare != nil || e.faulty {
			body[n*HeaderSize+i/8] |= 1 << (i % 8)
		}
	}
	return body, n
}

// truncateNacked returns the op at which the new view's log ends: below
// the lowest uncommitted op that at least n - ReplicationQuorum(n) + 1
// DoViewChanges nacked. Those replicas never acked it, so fewer than a
// replication quorum held it: it never committed, and neither did any op
// after it. Without this rule a header whose prepare nobody can supply
// (held only by replicas whose copy is faulty, which never nack) would
// block the view forever; demanding a nack from every vote did just that.
func (r *Replica) truncateNacked(best []Header, bestOp, commit uint64) uint64 {
	type dvcLog struct {
		headers []Header
		present []byte
	}
	var logs []dvcLog
	for _, d := range r.viewChange.dvcs {
		if d == nil || r.restartVoteIgnored(d) {
			continue // a restart vote lost what it acked: it nacks nothing
		}
		k := int(d.Context.Lo)
		if k*HeaderSize > len(d.Body) || len(d.Body) != k*HeaderSize+(k+7)/8 {
			return bestOp
		}
		headers, err := decodeChain(d.Body[:k*HeaderSize])
		if err != nil {
			return bestOp
		}
		logs = append(logs, dvcLog{headers, d.Body[k*HeaderSize:]})
	}
	for i := range best {
		h := &best[i]
		if h.Op <= commit {
			continue
		}
		nacks := 0
		for _, l := range logs {
			j := int(h.Op) - int(l.headers[0].Op)
			if j < 0 || j >= len(l.headers) || l.headers[j].Checksum != h.Checksum || l.present[j/8]&(1<<(j%8)) == 0 {
				nacks++
			}
		}
		if nacks >= int(r.cfg.ReplicaCount)-r.replicationQuorum+1 {
			return h.Op - 1
		}
	}
	return bestOp
}

// decodeChain decodes and verifies a chain of headers: each a valid prepare
// header whose Parent is the checksum of the one before.
func decodeChain(body []byte) ([]Header, error) {
	if len(body)%HeaderSize != 0 || len(body) == 0 {
		return nil, fmt.Errorf("%w: chain of %d bytes", ErrMessageInvalid, len(body))
	}
	headers := make([]Header, len(body)/HeaderSize)
	for i := range headers {
		if err := headers[i].Decode(body[i*HeaderSize:]); err != nil {
			return nil, err
		}
		if headers[i].Command != CommandPrepare {
			return nil, fmt.Errorf("%w: chain holds %s", ErrMessageInvalid, headers[i].Command)
		}
		if i > 0 && (headers[i].Op != headers[i-1].Op+1 || headers[i].Parent != headers[i-1].Checksum) {
			return nil, fmt.Errorf("%w: broken chain at op %d", ErrMessageInvalid, headers[i].Op)
		}
	}
	return headers, nil
}

// chainConnects reports whether the authoritative chain headers (oldest
// first, not empty) connects to what the replica applied: it reaches down
// to commitMin, agreeing with the applied op there, or its first op sits
// right above an op the log holds, with the checksum the chain names as
// its parent (the log is a chain down to commitMin).
func (r *Replica) chainConnects(headers []Header) bool {
	first, last := &headers[0], &headers[len(headers)-1]
	if first.Op > r.commitMin+1 {
		below, ok := r.header(first.Op - 1)
		return ok && below.Checksum == first.Parent
	}
	if last.Op < r.commitMin {
		return false // a chain of a log that lacks an applied op
	}
	applied, ok := r.header(r.commitMin)
	if !ok {
		panic(fmt.Sprintf("vsr: no header of applied op %d", r.commitMin))
	}
	agrees := applied.Checksum == first.Parent
	if first.Op <= r.commitMin {
		agrees = headers[r.commitMin-first.Op].Checksum == applied.Checksum
	}
	if !agrees && invariants {
		panic(fmt.Sprintf("vsr: a view's log disagrees with applied op %d", r.commitMin))
	}
	return agrees
}

// chainHoldable reports whether the log can take the chain headers ending
// at op: op is within the journal window (opPrepareMax) and the chain
// connects to what the replica applied.
func (r *Replica) chainHoldable(headers []Header, op uint64) bool {
	return op <= r.opPrepareMax() && r.chainConnects(headers)
}

// chainHead returns the header at op of the chain headers (oldest first)
// that a log is about to take, or of the log if op is below the chain.
func (r *Replica) chainHead(headers []Header, op uint64) Header {
	if n := len(headers); n > 0 && headers[0].Op <= op && op <= headers[n-1].Op {
		return headers[op-headers[0].Op]
	}
	if h, ok := r.header(op); ok {
		return *h
	}
	panic(fmt.Sprintf("vsr: no header of the head op %d of a log", op))
}

// installChain makes the log match the authoritative chain headers that
// ends at op, which the replica can hold (chainHoldable): headers that
// differ replace ours (losing their bodies, to be repaired) and ops above
// op are truncated. headers may be empty when the log ends below the
// chain at an op it holds.
func (r *Replica) installChain(headers []Header, op uint64) {
	if op > r.opPrepareMax() {
		panic(fmt.Sprintf("vsr: chain to op %d beyond the journal window of checkpoint %d", op, r.checkpointOp))
	}
	for i := range headers {
		if headers[i].Op <= r.commitMin || headers[i].Op > op {
			continue
		}
		r.installHeader(&headers[i])
		if e := r.log.at(headers[i].Op); e != nil && e.prepare != nil && !e.written {
			r.persist(headers[i].Op)
		}
	}
	old := r.op
	r.op = max(op, r.commitMin)
	for o := old; o > r.op && old-o < r.cfg.JournalSlots; o-- {
		r.removeOp(o)
	}
	r.dropStrays()
	r.assertLogChain()
}
