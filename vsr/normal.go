package vsr

import "fmt"

// onRequest handles a client request. Only the primary in normal status
// admits it; every other outcome is answered with a Disposition.
func (r *Replica) onRequest(m *Message) {
	if !r.Primary() {
		if r.status == StatusNormal {
			r.answer(m, DispositionNotPrimary)
		} else {
			r.answer(m, DispositionViewChange)
		}
		return
	}
	if r.transfer.behind {
		// A primary waiting for a checkpoint cannot judge sessions (its
		// client table is not its commit number's): the client retries.
		r.answer(m, DispositionBehind)
		return
	}
	if m.Operation == OperationReserved || m.Operation == OperationRoot || (m.Operation > OperationRegister && m.Operation < OperationUserMin) {
		r.answer(m, DispositionInvalid)
		return
	}
	if len(m.Body)+HeaderSize > int(r.cfg.MessageSizeMax) {
		r.answer(m, DispositionTooLarge)
		return
	}
	if r.cfg.Sessionless.Has(m.Operation) {
		// At-least-once: no session, no dedup; every arrival is a new op.
		r.admitRequest(m)
		return
	}
	e := r.clients.get(m.Client)
	if m.Operation == OperationRegister {
		if _, ok := registerOwner(m.Body); !ok {
			r.answer(m, DispositionInvalid)
			return
		}
		// A client registers once per id. A register for a session that
		// exists is a retry (answered from the cached reply while the
		// session has no later request) or a late duplicate, which must
		// never open a second session: the client already uses the first.
		if e != nil {
			if e.request == 0 && e.reply != nil {
				r.resendReply(e)
			} else {
				r.answer(m, DispositionAlreadyApplied)
			}
			return
		}
	} else {
		if e == nil || e.session != m.Session {
			// Evict only a session this primary has seen applied and then
			// lost: a lagging primary (or one whose register op is still
			// in the pipeline) answers that it is behind.
			caughtUp := m.Session != 0 && m.Session <= r.commitMin && r.commitMin == r.commitMax
			switch {
			case caughtUp && (e == nil || e.session > m.Session):
				r.sendEviction(m.Client)
			case caughtUp:
				r.answer(m, DispositionInvalid) // a session newer than the client's
			default:
				r.answer(m, DispositionBehind)
			}
			return
		}
		if m.Request <= e.request {
			if reply := e.cached(m.Request); reply != nil {
				r.resendCached(e.client, reply)
			} else {
				r.answer(m, DispositionAlreadyApplied)
			}
			return
		}
	}
	if r.requestInFlight(m) {
		r.answer(m, DispositionInFlight)
		return
	}
	r.admitRequest(m)
}

// admitRequest prepares m, or queues it behind a full pipeline, or answers
// that the primary is overloaded.
func (r *Replica) admitRequest(m *Message) {
	size := uint64(m.EncodedSize())
	if r.pipelineFull(size) {
		// WALBytesMax bounds the prepares above the checkpoint and the
		// requests queued behind them together: a request that would pass
		// it is answered overloaded (the client retries), never queued
		// beyond the bound.
		if len(r.requestQueue) < int(r.cfg.RequestQueueMax) && r.walBytes()+r.queuedBytes+size <= r.cfg.WALBytesMax {
			r.requestQueue = append(r.requestQueue, m.Clone())
			r.queuedBytes += size
		} else {
			r.answer(m, DispositionOverloaded)
		}
		return
	}
	r.prepareRequest(m)
}

// answer tells the client of request (a request, or the header of the
// prepare made of one) that it did not commit here, and why.
func (r *Replica) answer(request *Message, d Disposition) {
	r.answerHeader(&request.Header, request.Checksum, d)
}

// answerHeader answers the request h describes; sum is the request's
// checksum (a prepare's Context).
func (r *Replica) answerHeader(h *Header, sum Uint128, d Disposition) {
	if h.Client.IsZero() {
		return
	}
	a := &Message{Header: Header{
		Command:     CommandReply,
		Cluster:     r.cfg.Cluster,
		Group:       r.cfg.Group,
		Replica:     r.cfg.ReplicaIndex,
		View:        r.view,
		Commit:      r.commitMax,
		Client:      h.Client,
		Context:     sum,
		Request:     h.Request,
		Session:     h.Session,
		Operation:   h.Operation,
		Disposition: d,
	}}
	a.Seal()
	r.network.SendToClient(h.Client, a)
}

// abandonQueue empties the request queue, answering each entry.
func (r *Replica) abandonQueue() {
	for _, q := range r.requestQueue {
		r.answer(q, DispositionDropped)
	}
	r.requestQueue = r.requestQueue[:0]
	r.queuedBytes = 0
}

// abandonRequests answers the requests a replica gives up as it leaves its
// view or joins a new one: the queued ones and, if it is the primary, the
// prepares it made that have not committed (they may still commit in the
// new view, so the outcome is unknown to their clients).
func (r *Replica) abandonRequests() {
	r.abandonQueue()
	if !r.Primary() {
		return
	}
	for op := r.commitMax + 1; op <= r.op; op++ {
		if h, ok := r.log.header(op); ok && h.Replica == r.cfg.ReplicaIndex && h.Operation >= OperationRegister {
			r.answerHeader(h, h.Context, DispositionDropped)
		}
	}
}

// requestInFlight reports whether a request of m's client with the same or
// a later number is already prepared but uncommitted, or queued. Sessionless
// requests carry no meaningful number and never count.
func (r *Replica) requestInFlight(m *Message) bool {
	for op := r.commitMin + 1; op <= r.op; op++ {
		h, ok := r.header(op)
		if ok && h.Client == m.Client && h.Request >= m.Request && h.Operation != OperationRoot && !r.cfg.Sessionless.Has(h.Operation) {
			if h.Operation == OperationRegister || m.Operation != OperationRegister {
				return true
			}
		}
	}
	for _, q := range r.requestQueue {
		if q.Client == m.Client && q.Request >= m.Request && !r.cfg.Sessionless.Has(q.Operation) {
			return true
		}
	}
	return false
}

func (r *Replica) resendReply(e *clientEntry) { r.resendCached(e.client, e.reply) }

// resendCached sends client a cached reply again.
func (r *Replica) resendCached(client Uint128, cached *Message) {
	reply := cached.Clone()
	reply.View = r.view
	reply.Replica = r.cfg.ReplicaIndex
	reply.Seal()
	r.network.SendToClient(client, reply)
}

func (r *Replica) sendEviction(client Uint128) {
	m := &Message{Header: Header{Command: CommandEviction, Cluster: r.cfg.Cluster, Group: r.cfg.Group, Replica: r.cfg.ReplicaIndex, View: r.view, Client: client}}
	m.Seal()
	r.network.SendToClient(client, m)
}

// prepareRequest turns a request into the next prepare, logs it and sends
// it to the backups. The pipeline must have room.
func (r *Replica) prepareRequest(m *Message) {
	parent, ok := r.header(r.op)
	if !ok {
		panic("vsr: primary lacks the header of its own op")
	}
	ts := r.clock.RealtimeMicros()
	if ts <= r.timestampMax {
		ts = r.timestampMax + 1
	}
	r.timestampMax = ts
	p := &Message{
		Header: Header{
			Command:   CommandPrepare,
			Cluster:   r.cfg.Cluster,
			Group:     r.cfg.Group,
			Replica:   r.cfg.ReplicaIndex,
			View:      r.view,
			Op:        r.op + 1,
			Commit:    r.commitMax,
			Parent:    parent.Checksum,
			Client:    m.Client,
			Context:   m.Checksum,
			Request:   m.Request,
			Session:   m.Session,
			Operation: m.Operation,
			Timestamp: ts,
		},
		Body: m.Body,
	}
	if !r.cfg.ReleaseApplied {
		// ReleaseApplied: the prepare borrows the request's body while it
		// is applied in this call (a group of one commits at once); below,
		// a prepare still held gets its own copy.
		p.Body = append([]byte(nil), m.Body...)
	}
	// The body is the request's, whose checksum Step verified (or the host
	// computed, Request): only the header is sealed anew. A replica
	// planted with BugAcceptCorruptBody took the request on its header
	// alone and seals the body it got, as before.
	if r.cfg.Bugs.Has(BugAcceptCorruptBody) {
		p.Seal()
	} else {
		p.sealHeader(m.ChecksumBody)
	}
	r.appendPrepare(p)
	for i := uint8(0); i < r.cfg.ReplicaCount; i++ {
		if i != r.cfg.ReplicaIndex {
			r.network.SendToReplica(i, p.Clone())
		}
	}
	if !r.timers.prepare.running {
		r.timers.prepare.start()
	}
	r.tryCommit()
	if r.cfg.ReleaseApplied {
		if e := r.log.at(p.Op); e != nil && e.prepare == p {
			p.Body = append([]byte(nil), p.Body...) // not applied yet: the request's body goes back to its caller
		}
	}
}

// appendPrepare puts p at the head of the log and starts persisting it.
func (r *Replica) appendPrepare(p *Message) {
	if p.Op != r.op+1 {
		panic("vsr: append out of order")
	}
	if parent, ok := r.header(r.op); !ok || parent.Checksum != p.Parent {
		panic(fmt.Sprintf("vsr: op %d appended without its parent", p.Op))
	}
	r.assertInWindow(p.Op)
	r.log.setPrepare(p)
	r.op = p.Op
	r.persist(p.Op)
}

// onPrepare handles a prepare from the primary, or a prepare sent to repair
// a missing body.
func (r *Replica) onPrepare(m *Message) {
	if e := r.log.at(m.Op); e != nil && e.prepare == nil && e.header.Checksum == m.Checksum {
		e.prepare = m.Clone()
		r.persist(m.Op)
		r.afterLogChange()
		return
	}
	if r.fillHole(m) {
		return
	}
	if r.Primary() {
		return
	}
	if m.View > r.view {
		// Its primary made it in normal status: that view started without
		// this replica, which may still be electing an older view's primary
		// (joinStartedView).
		r.requestStartView(m.View)
		return
	}
	if r.status != StatusNormal {
		return
	}
	if r.syncing() {
		return // not in the view's log yet: nothing to append or ack
	}
	if m.View < r.view || m.Op <= r.commitMin {
		// A prepare of an older view, resent by the primary of this view
		// to collect acks for the log it started the view with, or an op
		// we applied already: ack it if it is the op our log holds.
		r.ackHeld(m)
		return
	}
	if m.Replica != r.primaryIndex(r.view) {
		return
	}
	r.timers.normalHeartbeat.reset()
	r.advanceCommitMax(m.Commit)
	switch {
	case m.Op <= r.op:
		h, _ := r.header(m.Op)
		if h == nil || h.Checksum != m.Checksum {
			// Our entry is stale: the primary's log is authoritative.
			r.truncate(m.Op - 1)
			r.appendFromPrimary(m)
		} else {
			r.ackHeld(m)
		}
	case m.Op == r.op+1 && m.Op > r.opPrepareMax():
		// The journal slot still holds an op above our checkpoint: the
		// prepare waits (the primary resends) until our next checkpoint,
		// which the replica asks for (a host's checkpoints come after
		// ops' effects, and none may come while the window is full).
		r.checkpointNow()
	case m.Op == r.op+1:
		r.appendFromPrimary(m)
	default:
		r.requestHeaders()
	}
	r.afterLogChange()
}

// fillHole installs m if the log lacks its op but holds the op after it,
// whose Parent proves m belongs to the chain; it then asks for the op
// below if that is missing too. It reports whether m was used.
func (r *Replica) fillHole(m *Message) bool {
	if m.Op <= r.commitMin || m.Op >= r.op || r.log.at(m.Op) != nil || r.syncing() {
		return false
	}
	next := r.log.at(m.Op + 1)
	if next == nil || next.header.Parent != m.Checksum {
		return false
	}
	r.log.setPrepare(m.Clone())
	r.persist(m.Op)
	if below := m.Op - 1; below > r.commitMin && r.log.at(below) == nil {
		r.requestPrepare(below, m.Parent, r.timers.ticks+below)
	}
	r.afterLogChange()
	return true
}

// ackHeld acks m to the primary if the log holds m at its op: applied
// already, or acked before in this view (the ack was lost).
func (r *Replica) ackHeld(m *Message) {
	if r.syncing() {
		return
	}
	h, ok := r.header(m.Op)
	if ok && h.Checksum != m.Checksum {
		return
	}
	if m.Op > r.commitMin && (!ok || m.Op > r.ackedOp || !r.prepareReady(m.Op, r.ackableHead())) {
		return
	}
	// An applied op is acked only once a restart would reload it too: a
	// backup applies a committed op as soon as its body is present, before
	// the journal write is durable, and an ack says the op is part of the
	// log this replica votes with in the ack's view (the durable checkpoint
	// covers the ops at or below it).
	if m.Op <= r.commitMin && m.Op > r.checkpointOp && r.persisted() && (!ok || !r.prepareReady(m.Op, r.ackableHead())) {
		return
	}
	r.send(r.primaryIndex(r.view), &Message{Header: Header{Command: CommandPrepareOk, View: r.view, Op: m.Op, Commit: r.commitMin, CheckpointOp: r.checkpointOp, Context: m.Checksum, Client: m.Client}})
}

// appendFromPrimary appends m if it chains onto the log, else asks the
// primary for its headers.
func (r *Replica) appendFromPrimary(m *Message) {
	parent, ok := r.header(m.Op - 1)
	if !ok || parent.Checksum != m.Parent {
		r.requestHeaders()
		return
	}
	r.appendPrepare(m.Clone())
}

// truncate removes every op above op (never below commitMin).
func (r *Replica) truncate(op uint64) {
	op = max(op, r.commitMin)
	for o := r.op; o > op; o-- {
		r.removeOp(o)
	}
	r.op = min(r.op, op)
	r.ackedOp = min(r.ackedOp, op)
}

// afterLogChange runs whatever a change of the log, of durability or of
// the commit number may unblock.
func (r *Replica) afterLogChange() {
	if r.status != StatusNormal {
		return
	}
	if r.Primary() {
		r.tryCommit()
	} else {
		r.sendPrepareOks()
		r.applyCommitted()
	}
}

// prepareReady reports whether this replica may count op as held: the body
// is present and, in persisted mode, durable and sealed (its HeaderDurable
// record is durable too, writeRedundantHeader), with every op from the
// checkpoint up to it recorded in the journal (recorded is ackableHead()),
// so that a restart reloads a log that reaches op.
func (r *Replica) prepareReady(op, recorded uint64) bool {
	e := r.log.at(op)
	if e == nil || e.prepare == nil {
		return false
	}
	if r.transfer.installing {
		// A transferred checkpoint is on its way: the superblock that makes
		// it durable judged, when its state was taken, whether it cuts the
		// log (superblockSnapshot); an op acked since could be cut unseen.
		return false
	}
	if r.persisted() && !r.cfg.Bugs.Has(BugAckPersistedBeforeSync) {
		held := e.sealed || (r.cfg.SealLazily && e.durable)
		return held && op <= recorded && r.sb.viewDurable(r.view, r.logView)
	}
	return true
}

// sendPrepareOks acknowledges, in order, every op the backup holds beyond
// what it acked already; an ack for op means it holds every op up to op.
func (r *Replica) sendPrepareOks() {
	if r.status != StatusNormal || r.Primary() || r.syncing() {
		return
	}
	if r.persisted() && !r.sb.viewDurable(r.view, r.logView) {
		r.requestSuperblock()
		return
	}
	primary := r.primaryIndex(r.view)
	recorded := r.ackableHead()
	for op := max(r.ackedOp, r.commitMax) + 1; op <= r.op; op++ {
		if !r.prepareReady(op, recorded) {
			break
		}
		if r.persisted() && op > recorded && !r.cfg.Bugs.Has(BugAckPersistedBeforeSync) {
			panic(fmt.Sprintf("vsr: ack of op %d the journal does not record (recorded to %d)", op, recorded))
		}
		h, _ := r.header(op)
		ok := &Message{Header: Header{Command: CommandPrepareOk, View: r.view, Op: op, Commit: r.commitMin, CheckpointOp: r.checkpointOp, Context: h.Checksum, Client: h.Client}}
		r.send(primary, ok)
		r.ackedOp = op
	}
}

// onPrepareOk counts a backup's acknowledgement at the primary.
func (r *Replica) onPrepareOk(m *Message) {
	if !r.Primary() || m.View != r.view {
		if m.View > r.view && r.status == StatusNormal {
			r.requestStartView(m.View)
		}
		return
	}
	if m.Op <= r.commitMax || m.Op > r.op {
		return
	}
	e := r.log.at(m.Op)
	if e == nil || e.header.Checksum != m.Context {
		return
	}
	// A backup acks in op order, holding every op up to the one it acks,
	// so the ack counts for the uncommitted ops before it too.
	for op := r.commitMax + 1; op <= m.Op; op++ {
		if prior := r.log.at(op); prior != nil {
			prior.oks |= 1 << m.Replica
		}
	}
	r.tryCommit()
}

// onCommit handles the primary's commit heartbeat.
func (r *Replica) onCommit(m *Message) {
	if m.View < r.view {
		return
	}
	if m.View > r.view || r.status != StatusNormal {
		r.joinStartedView(m)
		return
	}
	if r.Primary() || m.Replica != r.primaryIndex(r.view) {
		return
	}
	r.timers.normalHeartbeat.reset()
	r.answerReadRound(m)
	r.advanceCommitMax(m.Commit)
	if m.Commit > r.op {
		r.requestHeaders()
	}
	r.applyCommitted()
}

// joinStartedView handles a commit heartbeat of a view this replica is not
// normal in: only the primary of m.View in normal status sends one, so that
// view started without this replica, which is behind it or still electing a
// primary for it (after a restart, or having missed the StartView). It asks
// that primary for its StartView. A replica that waited in its view change
// instead would join only by timing out view after view past the cluster's
// view, which the cluster's normal replicas never do: in a core of exactly a
// view-change quorum, the view's replicas and the electing ones then stall
// each other for as many timeouts as views lie between them.
func (r *Replica) joinStartedView(m *Message) {
	if m.Replica != r.primaryIndex(m.View) {
		return
	}
	if m.View == r.view && r.status != StatusViewChange {
		return
	}
	r.requestStartView(m.View)
}

func (r *Replica) advanceCommitMax(commit uint64) {
	if commit > r.commitMax {
		r.commitMax = commit
	}
}

func (r *Replica) sendCommitHeartbeat() {
	if r.announcer != nil {
		r.announcer.AnnounceCommit(r.view, r.commitMax, r.checkpointOp)
		return
	}
	r.broadcast(&Message{Header: Header{Command: CommandCommit, View: r.view, Commit: r.commitMax, CheckpointOp: r.checkpointOp}})
}

// applyCommitted applies committed ops in order while their bodies are
// present; the primary replies to clients.
func (r *Replica) applyCommitted() {
	if r.transfer.behind || r.transfer.installing || r.syncing() {
		// Only a checkpoint can bring the state forward (or the ops above
		// it are not known to be the view's yet).
		return
	}
	for r.commitMin < r.commitMax && r.status == StatusNormal {
		p := r.log.prepare(r.commitMin + 1)
		if p == nil {
			return
		}
		if below, ok := r.header(r.commitMin); !ok || below.Checksum != p.Parent {
			panic(fmt.Sprintf("vsr: op %d applied without chaining to applied op %d", p.Op, r.commitMin))
		}
		reply := r.apply(p)
		r.commitMin = p.Op
		if r.cfg.ReleaseApplied {
			r.log.at(p.Op).prepare = nil
			r.releaseBelow(p.Op)
		}
		if reply != nil && r.Primary() {
			r.network.SendToClient(p.Client, reply)
		}
		r.maybeCheckpoint()
	}
}

// apply executes one committed prepare against the client table and the
// state machine, and returns the reply for the client (nil for none).
func (r *Replica) apply(p *Message) *Message {
	switch {
	case p.Operation == OperationRegister:
		if r.clients.get(p.Client) != nil {
			// A duplicate register prepared by a primary that had not yet
			// applied the first: the session stands, and the client got
			// (or gets on retry) the first register's reply.
			return nil
		}
		owner, _ := registerOwner(p.Body)
		evicted, did := r.clients.register(p.Client, owner, p.Op)
		if did && r.Primary() {
			r.sendEviction(evicted)
		}
		e := r.clients.get(p.Client)
		reply := r.makeReply(p, nil)
		reply.Session = p.Op
		reply.Seal()
		r.clients.setReply(e, reply)
		r.trimClients(p.Client)
		return reply.Clone()
	case r.cfg.Sessionless.Has(p.Operation):
		// Never deduplicated, never cached: the client table is the
		// sessioned operations' alone.
		return r.makeReply(p, r.sm.Apply(p.Op, p.Timestamp, p.Operation, p.Body))
	case p.Operation >= OperationUserMin:
		e := r.clients.get(p.Client)
		if e != nil && p.Request <= e.request {
			return nil // a duplicate prepared twice: never apply twice
		}
		body := r.sm.Apply(p.Op, p.Timestamp, p.Operation, p.Body)
		reply := r.makeReply(p, body)
		if e != nil && r.cfg.EndsSession.Has(p.Operation) {
			// The session ends with its op: nothing stays to answer a
			// duplicate from (it is evicted, as any request of a client
			// without a session).
			r.clients.remove(p.Client)
			return reply
		}
		if e != nil {
			e.request = p.Request
			e.lastOp = p.Op
			r.clients.commitReply(e, reply)
			r.trimClients(p.Client)
			return reply.Clone()
		}
		return reply
	}
	return nil
}

// trimClients keeps the client table within its bytes after an op of
// client committed (clientTable.trim); a primary tells the sessions it
// ended, as a register's eviction.
func (r *Replica) trimClients(client Uint128) {
	for _, evicted := range r.clients.trim(client) {
		if r.Primary() {
			r.sendEviction(evicted)
		}
	}
}

func (r *Replica) makeReply(p *Message, body []byte) *Message {
	reply := &Message{
		Header: Header{
			Command:   CommandReply,
			Cluster:   r.cfg.Cluster,
			Group:     r.cfg.Group,
			Replica:   r.cfg.ReplicaIndex,
			View:      r.view,
			Op:        p.Op,
			Commit:    p.Op,
			Client:    p.Client,
			Context:   p.Context,
			Request:   p.Request,
			Session:   p.Session,
			Operation: p.Operation,
			Timestamp: p.Timestamp,
		},
		Body: append([]byte(nil), body...),
	}
	reply.Seal()
	return reply
}
