package vsr

import "fmt"

// The assertions of this file run at the three doors of a replica: after
// every input (a tick, a message, a storage completion) they compare the
// state with the state before it, and before every message leaves they
// check what the message claims against what the replica holds. A broken
// invariant crashes the simulator at the input that broke it, instead of
// leaving it to a checker at the end of the run (STYLE.md rule 7). The
// per-input comparisons are cheap and always on; the O(slots) checks of
// assertInvariants run in builds with the invariants tag.

// mark is what an input may only move forward.
type mark struct {
	status       Status
	failed       bool
	view         uint64
	logView      uint64
	op           uint64
	commitMin    uint64
	commitMax    uint64
	checkpointOp uint64
	durable      superblockState
	logGen       uint64
}

func (r *Replica) mark() mark {
	return mark{
		status:       r.status,
		failed:       r.lastError != nil,
		view:         r.view,
		logView:      r.logView,
		op:           r.op,
		commitMin:    r.commitMin,
		commitMax:    r.commitMax,
		checkpointOp: r.checkpointOp,
		durable:      r.sb.durable,
		logGen:       r.log.genNext,
	}
}

// assertTick is assertInput for a tick: most ticks fire no timer and
// change nothing a mark or the log's generation shows, and those skip the
// O(slots) checks (the next message or completion runs them).
func (r *Replica) assertTick(before mark) {
	if r.mark() == before {
		return
	}
	r.assertInput(before)
}

// assertInput checks the replica after one input against the mark taken
// before it: views, commits, checkpoints and the durable superblock never
// go backwards, a replica enters normal status only in a view it holds the
// log of (a backup may be normal in a view whose log it has not joined yet,
// syncing), and a primary never loses an op of its own view.
func (r *Replica) assertInput(before mark) {
	if r.status == StatusOpening {
		return
	}
	r.assertInvariants()
	if before.status == StatusOpening || before.failed {
		return
	}
	r.assertApplied(before)
	if r.view < before.view {
		panic(fmt.Sprintf("vsr: view went back from %d to %d", before.view, r.view))
	}
	// A recovering replica lost its log and adopts a peer's, with that
	// log's view: only then may its log view go down.
	if r.logView < before.logView && before.status != StatusRecovering {
		panic(fmt.Sprintf("vsr: log view went back from %d to %d (view %d, %s)", before.logView, r.logView, r.view, r.status))
	}
	if r.commitMin < before.commitMin || (r.commitMax < before.commitMax && !r.restartDroppedCommits()) {
		panic(fmt.Sprintf("vsr: commit went back from %d/%d to %d/%d", before.commitMin, before.commitMax, r.commitMin, r.commitMax))
	}
	if r.checkpointOp < before.checkpointOp {
		panic(fmt.Sprintf("vsr: checkpoint went back from %d to %d", before.checkpointOp, r.checkpointOp))
	}
	d := &r.sb.durable
	// (Its log view may go down, after a recovering replica adopted a
	// peer's log.)
	if d.Sequence < before.durable.Sequence || d.View < before.durable.View || d.CheckpointOp < before.durable.CheckpointOp {
		panic(fmt.Sprintf("vsr: durable superblock went back from sequence %d view %d log view %d checkpoint %d to sequence %d view %d log view %d checkpoint %d",
			before.durable.Sequence, before.durable.View, before.durable.LogView, before.durable.CheckpointOp, d.Sequence, d.View, d.LogView, d.CheckpointOp))
	}
	if r.status == StatusNormal && r.logView != r.view && before.status == StatusNormal && before.logView == before.view && before.view == r.view {
		panic(fmt.Sprintf("vsr: left the log of view %d while normal in it (log view %d)", r.view, r.logView))
	}
	if r.status == StatusNormal && before.status == StatusNormal && r.view == before.view {
		if r.isPrimaryOf(r.view) && r.op < before.op {
			panic(fmt.Sprintf("vsr: primary of view %d lost ops %d..%d of its view", r.view, r.op+1, before.op))
		}
	}
	if r.persisted() && r.sb.durable.View > r.view {
		panic(fmt.Sprintf("vsr: durable view %d above view %d", r.sb.durable.View, r.view))
	}
}

// assertSend checks a message about to leave the replica against the
// replica's own state: an acknowledgement names an op the replica holds
// (durably, when persisted), a vote and a new view carry the replica's
// current log, and a commit never runs past the sender's log.
func (r *Replica) assertSend(m *Message) {
	// A prepare keeps the index of the primary that made it, also when
	// another replica serves it for repair.
	if m.Cluster != r.cfg.Cluster || m.Group != r.cfg.Group || (m.Replica != r.cfg.ReplicaIndex && m.Command != CommandPrepare) {
		panic(fmt.Sprintf("vsr: %s sealed for cluster %d group %d replica %d", m.Command, m.Cluster, m.Group, m.Replica))
	}
	if m.Size > r.cfg.MessageSizeMax || int(m.Size) != HeaderSize+len(m.Body) {
		panic(fmt.Sprintf("vsr: %s of size %d (body %d, max %d)", m.Command, m.Size, len(m.Body), r.cfg.MessageSizeMax))
	}
	switch m.Command {
	case CommandPrepareOk:
		r.assertSendPrepareOk(m)
	case CommandDoViewChange:
		if r.status != StatusViewChange || m.View != r.view || m.LogView != r.logView || m.Op != r.op || m.Commit > m.Op {
			panic(fmt.Sprintf("vsr: DoViewChange view %d log view %d op %d commit %d from a replica %s in view %d log view %d op %d",
				m.View, m.LogView, m.Op, m.Commit, r.status, r.view, r.logView, r.op))
		}
		if r.primaryIndex(m.View) == r.cfg.ReplicaIndex {
			panic(fmt.Sprintf("vsr: DoViewChange for view %d sent by its own primary", m.View))
		}
		k := int(m.Context.Lo)
		if k > headersPerMessageMax || len(m.Body) != k*HeaderSize+(k+7)/8 {
			panic(fmt.Sprintf("vsr: DoViewChange of %d headers with a body of %d bytes", k, len(m.Body)))
		}
		r.assertHeaders(m, m.Body[:k*HeaderSize])
	case CommandStartView:
		if r.status != StatusNormal || !r.isPrimaryOf(m.View) || m.View != r.view || m.Op != r.op || m.Commit > m.Op || m.Commit != r.commitMax {
			panic(fmt.Sprintf("vsr: StartView view %d op %d commit %d from a replica %s in view %d op %d commit %d",
				m.View, m.Op, m.Commit, r.status, r.view, r.op, r.commitMax))
		}
		r.assertHeadersBody(m)
	case CommandCommit:
		if r.status != StatusNormal || !r.Primary() || m.View != r.view || m.Commit != r.commitMax || m.Commit > r.op {
			panic(fmt.Sprintf("vsr: Commit %d in view %d from a replica %s in view %d, commit %d, op %d", m.Commit, m.View, r.status, r.view, r.commitMax, r.op))
		}
	case CommandCommitOk:
		// An answer to a read round says the replica is a backup in
		// normal status in the round's view.
		if r.status != StatusNormal || r.Primary() || m.View != r.view || m.Context.IsZero() {
			panic(fmt.Sprintf("vsr: CommitOk in view %d from a replica %s in view %d (primary %v)", m.View, r.status, r.view, r.Primary()))
		}
	case CommandPrepare:
		// A primary's prepare of its own view is one its log holds; a
		// prepare served for repair is checked by its checksum at the
		// receiver.
		if r.status == StatusNormal && r.Primary() && m.View == r.view && m.Replica == r.cfg.ReplicaIndex {
			if h, ok := r.header(m.Op); ok && m.Op > r.commitMax && h.Checksum != m.Checksum {
				panic(fmt.Sprintf("vsr: primary of view %d sends a prepare of op %d its log does not hold", r.view, m.Op))
			}
		}
	case CommandHeaders, CommandRecoveryResponse:
		r.assertHeadersBody(m)
	}
}

// assertSendPrepareOk checks an acknowledgement before it leaves: the
// replica is a normal backup of the ack's view, holds the op's prepare
// with the acknowledged checksum, and (persisted) holds it durably with
// every op below it recorded and the view durable. An applied op is
// committed already and only its checksum is checked.
func (r *Replica) assertSendPrepareOk(m *Message) {
	if r.status != StatusNormal || r.Primary() || m.View != r.view || m.Op > r.op || m.Op > r.opPrepareMax() {
		panic(fmt.Sprintf("vsr: PrepareOk of op %d in view %d from a replica %s in view %d at op %d", m.Op, m.View, r.status, r.view, r.op))
	}
	if m.Op <= r.commitMin {
		// The op is applied, so committed: the ack only tells a primary
		// that lost it that this replica holds it.
		if h, ok := r.header(m.Op); ok && h.Checksum != m.Context {
			panic(fmt.Sprintf("vsr: PrepareOk of applied op %d in view %d for another prepare", m.Op, m.View))
		}
		return
	}
	e := r.log.at(m.Op)
	if e == nil || e.prepare == nil || e.header.Checksum != m.Context || e.prepare.Checksum != m.Context {
		panic(fmt.Sprintf("vsr: PrepareOk of op %d in view %d for a prepare the log does not hold", m.Op, m.View))
	}
	if !r.persisted() || r.cfg.Bugs.Has(BugAckPersistedBeforeSync) {
		return
	}
	if !e.durable || !e.recorded || !r.sb.viewDurable(r.view, r.logView) {
		panic(fmt.Sprintf("vsr: persisted PrepareOk of op %d in view %d before it is durable (durable %v, recorded %v, durable view %d/%d)",
			m.Op, m.View, e.durable, e.recorded, r.sb.durable.View, r.sb.durable.LogView))
	}
}

// assertHeadersBody checks a body of headers: each decodes and is a
// prepare header of this cluster, and there are no more than a message may
// carry.
func (r *Replica) assertHeadersBody(m *Message) {
	r.assertHeaders(m, m.Body)
}

func (r *Replica) assertHeaders(m *Message, body []byte) {
	if !invariants {
		return
	}
	if len(body)%HeaderSize != 0 || len(body)/HeaderSize > headersPerMessageMax {
		panic(fmt.Sprintf("vsr: %s with %d bytes of headers", m.Command, len(body)))
	}
	top := uint64(0)
	for i := 0; i < len(body); i += HeaderSize {
		var h Header
		if err := h.Decode(body[i : i+HeaderSize]); err != nil || h.Command != CommandPrepare || h.Cluster != r.cfg.Cluster {
			panic(fmt.Sprintf("vsr: %s carries a header that is not a prepare's of this cluster (%v)", m.Command, err))
		}
		top = max(top, h.Op)
	}
	if (m.Command == CommandDoViewChange || m.Command == CommandStartView) && len(body) > 0 && top != m.Op {
		panic(fmt.Sprintf("vsr: %s of view %d claims op %d but its log ends at op %d", m.Command, m.View, m.Op, top))
	}
}

// assertReply checks a reply before it leaves for its client: a result
// answers an op the replica applied; a disposition (the request did not
// commit here) names no op.
func (r *Replica) assertReply(m *Message) {
	if m.Group != r.cfg.Group || (m.Command != CommandReply && m.Command != CommandEviction) {
		panic(fmt.Sprintf("vsr: %s of group %d sent to a client", m.Command, m.Group))
	}
	if m.Command == CommandEviction {
		return
	}
	if m.Disposition != 0 {
		if m.Op != 0 || len(m.Body) != 0 {
			panic(fmt.Sprintf("vsr: disposition %d naming op %d with a body of %d bytes", m.Disposition, m.Op, len(m.Body)))
		}
		return
	}
	if m.Op > r.commitMin || m.Op == 0 {
		panic(fmt.Sprintf("vsr: reply for op %d beyond applied op %d", m.Op, r.commitMin))
	}
}

// assertedStorage runs assertInput after every storage completion, the
// third kind of input besides ticks and messages.
type assertedStorage struct {
	Storage
	r *Replica
}

func (s assertedStorage) done(done func(error)) func(error) {
	return func(err error) {
		before := s.r.mark()
		done(err)
		s.r.assertInput(before)
	}
}

func (s assertedStorage) Read(zone Zone, offset uint64, buf []byte, done func(error)) {
	s.Storage.Read(zone, offset, buf, s.done(done))
}

func (s assertedStorage) Write(zone Zone, offset uint64, data []byte, done func(error)) {
	s.Storage.Write(zone, offset, data, s.done(done))
}

func (s assertedStorage) Sync(done func(error)) {
	s.Storage.Sync(s.done(done))
}

// assertedNetwork checks every message before it leaves the replica.
type assertedNetwork struct {
	Network
	r *Replica
}

func (n assertedNetwork) SendToReplica(replica uint8, m *Message) {
	n.r.assertSend(m)
	n.Network.SendToReplica(replica, m)
}

func (n assertedNetwork) SendToClient(client Uint128, m *Message) {
	n.r.assertReply(m)
	n.Network.SendToClient(client, m)
}

// appliedMark is the checksum of an applied op, kept in a ring of the
// journal's length (invariants builds only).
type appliedMark struct {
	op       uint64
	checksum Uint128
}

// assertApplied records the ops applied since before and checks that
// every applied op the log still holds is the one that was applied: a
// committed op never changes, whatever a view change, repair or state
// transfer installs.
func (r *Replica) assertApplied(before mark) {
	if !invariants || r.commitMin == 0 {
		return
	}
	if r.applied == nil {
		// Allocated once the replica applies, so that an idle group
		// holds no journal-sized array in the invariants build either.
		r.applied = make([]appliedMark, r.cfg.JournalSlots)
	}
	n := uint64(len(r.applied))
	for op := max(before.commitMin+1, r.commitMin+1-min(r.commitMin, n)); op <= r.commitMin; op++ {
		if h, ok := r.header(op); ok {
			r.applied[op%n] = appliedMark{op: op, checksum: h.Checksum}
		}
	}
	r.log.each(func(_ uint64, e *logEntry) {
		if !e.present || e.header.Op > r.commitMin {
			return
		}
		if a := r.applied[e.header.Op%n]; a.op == e.header.Op && a.checksum != e.header.Checksum {
			panic(fmt.Sprintf("vsr: applied op %d replaced in the log by another prepare", e.header.Op))
		}
	})
}
