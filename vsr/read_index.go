package vsr

// The read index: a primary serves a read from applied state only once it
// has shown that it was still the primary of its view after the read
// arrived, and has applied every op its log held then.
//
// A primary of an old view does not know it was deposed until it hears of
// the new view; meanwhile the new view may commit (and acknowledge) writes
// the old primary never sees, so its applied state is stale. To serve a
// read, the primary admits it with ReadIndex, which names a round and the
// read's op (ReadTicket), and the host serves it once ReadReady says so.
//
// Rounds. A round is a commit heartbeat (CommandCommit) whose Context
// carries a nonce: Lo the round number, Hi the primary's read epoch. A
// backup in normal status in the same view answers it with CommandCommitOk
// (same view, same Context). A round counts as confirmed when a
// replication quorum (the primary included) answered it, or a later
// round, in the primary's view. Rounds are batched per tick: the first
// read of a tick sends one at once; the reads that arrive after it in the
// same tick share the next, which the next tick sends (a round sent before
// a read arrived proves nothing about the time after). A round whose
// answers were lost is followed, after CommitHeartbeatTicks, by a new one
// (a later round confirms the earlier ones).
//
// Safety. A replica answers a round only in normal status in the round's
// view, so each of the quorum was in that view after the round was sent,
// hence after the read arrived. A later view starts only with the
// DoViewChange of a view-change quorum, each sent after its replica left
// the view, and every view-change quorum meets every replication quorum
// (ViewChangeQuorum): had a later view started before the read arrived,
// one replica would have answered in the old view after leaving it. Views
// never go back (a persisted replica votes only with its view durable, a
// restarted replicated one recovers its view from its peers): this is the
// argument by which a prepare acked in a view commits, no weaker. So no
// view after the primary's started before the read arrived, and every
// write acknowledged before the read committed in a view up to the
// primary's: its op is in the primary's log. The read's op is therefore the
// primary's op when the read arrived (not its commit number: after a view
// change the new primary's log holds committed ops it has not yet seen
// committed), and the read is served once the replica applied it. The
// nonce's epoch is taken from the clock at the first round of a replica's
// incarnation, so that an answer to a round of an earlier incarnation
// (same view, same round number) never counts; a restarted primary does
// not lead its old view anyway (resume starts a view change).
//
// A group of one is its own quorum: its rounds are confirmed as they are
// admitted, and a read waits only for what it has not applied.

// ReadTicket names a read a primary admitted (Replica.ReadIndex).
type ReadTicket struct {
	view  uint64
	round uint64
	op    uint64
}

// readIndex is a primary's state of its read rounds.
type readIndex struct {
	// view is the view the answers below were given in; they are
	// forgotten when the replica's view moves on.
	view uint64
	// epoch is the nonce's high half, from the clock at the first round.
	epoch uint64
	// sent is the latest round sent; round numbers only grow.
	sent     uint64
	sentTick uint64
	// want is the highest round an admitted read waits for.
	want uint64
	// acked is, per replica, the latest round it answered in view.
	acked [ReplicaCountMax]uint64
}

// readRounds returns the read state, its answers forgotten if they were
// given in an older view.
func (r *Replica) readRounds() *readIndex {
	s := &r.read
	if s.view != r.view {
		s.view = r.view
		s.want = 0
		s.acked = [ReplicaCountMax]uint64{}
	}
	return s
}

// readConfirmed returns the latest round a replication quorum answered in
// the current view (the primary answers its own rounds as it sends them).
func (r *Replica) readConfirmed() uint64 {
	s := r.readRounds()
	need := r.replicationQuorum - 1 // besides the primary
	if need <= 0 {
		return s.sent
	}
	// The need-th highest answer among the peers.
	var top [ReplicaCountMax]uint64
	n := 0
	for i := uint8(0); i < r.cfg.ReplicaCount; i++ {
		if i != r.cfg.ReplicaIndex {
			top[n] = s.acked[i]
			n++
		}
	}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && top[j] > top[j-1]; j-- {
			top[j], top[j-1] = top[j-1], top[j]
		}
	}
	if need > n {
		return 0
	}
	return top[need-1]
}

// ReadIndex admits a read at the primary: the returned ticket is ready
// (ReadReady) once a round sent after this call is confirmed and the
// replica applied its op. A replica that cannot serve reads answers with
// the disposition a request would get: not the primary, in a view change
// or recovering, or behind (waiting for a checkpoint).
func (r *Replica) ReadIndex() (ReadTicket, Disposition) {
	// A group of one that failed a storage write still holds what it
	// committed, and nothing else can commit: it goes on serving reads, as
	// it did before reads went through the replica.
	switch {
	case r.status == StatusOpening || (r.lastError != nil && !r.solo()):
		return ReadTicket{}, DispositionNotPrimary
	case r.status != StatusNormal:
		return ReadTicket{}, DispositionViewChange
	case !r.Primary():
		return ReadTicket{}, DispositionNotPrimary
	case r.Behind():
		return ReadTicket{}, DispositionBehind
	}
	if r.solo() {
		// Its own quorum: every acknowledged op is applied, and none past
		// the commit number is known committed.
		return ReadTicket{view: r.view, op: r.commitMax}, DispositionNone
	}
	s := r.readRounds()
	t := ReadTicket{view: r.view, op: r.op, round: s.sent + 1}
	s.want = max(s.want, t.round)
	if s.sent == 0 || s.sentTick != r.timers.ticks {
		r.sendReadRound() // the tick's first read: its round goes now
	}
	return t, DispositionNone
}

// ReadReady reports whether the read t names may be served from applied
// state now. A disposition other than DispositionNone means it never will
// be here (the replica left the view it was admitted in, or is not its
// primary any more): the reader retries elsewhere.
func (r *Replica) ReadReady(t ReadTicket) (bool, Disposition) {
	switch {
	case r.status == StatusOpening || (r.lastError != nil && !r.solo()):
		return false, DispositionNotPrimary
	case r.view != t.view:
		if r.status == StatusNormal {
			return false, DispositionNotPrimary
		}
		return false, DispositionViewChange
	case !r.Primary():
		return false, DispositionViewChange
	}
	if t.round > 0 && r.readConfirmed() < t.round {
		return false, DispositionNone
	}
	return r.commitMin >= t.op && !r.Behind(), DispositionNone
}

// sendReadRound sends the next read round: a commit heartbeat with its
// nonce, to every backup.
func (r *Replica) sendReadRound() {
	s := r.readRounds()
	if s.epoch == 0 {
		s.epoch = max(r.clock.RealtimeMicros(), 1)
	}
	s.sent++
	s.sentTick = r.timers.ticks
	r.timers.commitHeartbeat.reset() // this is a heartbeat too
	r.broadcast(&Message{Header: Header{Command: CommandCommit, View: r.view, Commit: r.commitMax, CheckpointOp: r.checkpointOp,
		Context: Uint128{Lo: s.sent, Hi: s.epoch}}})
}

// tickReadRounds sends the round the reads of the last tick wait for, and
// resends one whose answers did not come back while a read waits for it.
func (r *Replica) tickReadRounds() {
	s := r.readRounds()
	if s.want == 0 || r.readConfirmed() >= s.want {
		return
	}
	if s.sent < s.want || r.timers.ticks-s.sentTick >= max(r.cfg.CommitHeartbeatTicks, 1) {
		r.sendReadRound() // a later round confirms the earlier ones
	}
}

// answerReadRound answers a read round of the primary of this replica's
// view (onCommit checked that m is one).
func (r *Replica) answerReadRound(m *Message) {
	if m.Context.IsZero() {
		return // a plain heartbeat
	}
	r.send(m.Replica, &Message{Header: Header{Command: CommandCommitOk, View: r.view, Context: m.Context}})
}

// onCommitOk counts a backup's answer to a read round.
func (r *Replica) onCommitOk(m *Message) {
	if !r.Primary() || m.View != r.view {
		if m.View > r.view && r.status == StatusNormal {
			r.requestStartView(m.View)
		}
		return
	}
	s := r.readRounds()
	if m.Context.Hi != s.epoch || m.Context.Lo > s.sent || s.epoch == 0 {
		return
	}
	s.acked[m.Replica] = max(s.acked[m.Replica], m.Context.Lo)
}
