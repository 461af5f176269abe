package vsr

// recoveryState is what a recovering replica collects.
type recoveryState struct {
	nonce     uint64
	responses [ReplicaCountMax]*Message
	// viewKept is set when r.view is still the replica's promise: at
	// least every view it sent a DoViewChange in or ran normal in (a
	// persisted replica reads it from its superblock, which records a
	// view before it votes in it; a running one keeps it in memory). A
	// replica restarted in memory mode has lost it.
	viewKept bool
}

// startRecovery begins the VSR recovery protocol: the replica has lost its
// in-memory prepares and may neither ack nor vote until a view-change
// quorum of peers, including the primary of the latest view, answered
// (or, when viewKept, one fewer: recoveryFromPrimary).
func (r *Replica) startRecovery(viewKept bool) {
	r.status = StatusRecovering
	r.recovery = recoveryState{nonce: r.recovery.nonce + 1 + r.clock.RealtimeMicros()<<8 | uint64(r.cfg.ReplicaIndex), viewKept: viewKept}
	r.timers.stopAll()
	r.timers.recovery.start()
	r.sendRecovery()
}

func (r *Replica) sendRecovery() {
	if r.transfer.behind {
		r.requestCheckpoint()
	}
	r.broadcast(&Message{Header: Header{Command: CommandRecovery, View: r.view, Context: Uint128{Lo: r.recovery.nonce}}})
}

// recoveryResponseViewChange marks (in Context.Hi) a RecoveryResponse from
// a replica that is itself in a view change.
const recoveryResponseViewChange = 1

// onRecovery answers a recovering peer, if this replica holds its log:
// normal, or in a view change (which the recovering replica may need to
// join when every other replica is in one).
func (r *Replica) onRecovery(m *Message) {
	if r.restartAnswer(m) {
		return // restart.go
	}
	if r.status != StatusNormal && r.status != StatusViewChange {
		return
	}
	context := Uint128{Lo: m.Context.Lo}
	if r.status == StatusViewChange {
		context.Hi = recoveryResponseViewChange
	}
	r.send(m.Replica, &Message{Header: Header{
		Command: CommandRecoveryResponse, View: r.view, LogView: r.logView, Op: r.op,
		Commit: r.commitMax, CheckpointOp: r.checkpointOp, Context: context,
	}, Body: r.chainBody()})
}

// recoveryQuorum is the number of responses (from other replicas) that
// end recovery: a view-change quorum, capped by the number of peers.
func (r *Replica) recoveryQuorum() int {
	return min(r.viewChangeQuorum, int(r.cfg.ReplicaCount)-1)
}

// recoveryFromPrimary reports whether count responses, one fewer than a
// view-change quorum, end recovery: with this replica they make one, so
// they meet the quorum of every view that started. A replica that kept
// its view promise (viewKept) knows every view it took part in; so when
// the primary of the latest view any of them reports answered (from),
// normal in that view, and that view is no older than the promise, no
// later view started and the primary's log holds every committed op. A
// view-change quorum of other replicas is more than a cluster of three
// can give while one replica is down or cut off, and a replica that must
// recover (a transferred checkpoint cut its log view, a damaged journal)
// would otherwise wait for it however long the primary runs normally.
func (r *Replica) recoveryFromPrimary(from *Message, latest uint64, count int) bool {
	return (r.recovery.viewKept || r.othersLostMemory(latest)) && count >= r.viewChangeQuorum-1 &&
		from != nil && latest >= r.view
}

// recoveryFromLaterLogView reports whether the best log the count answers
// hold (best) ends recovery, with no answer of the primary of the latest
// view normal in it, into a view change: when this replica kept its view
// promise, one fewer than a view-change quorum of peers answered, and
// best is of a log view later than this replica's own. Such a replica
// acked ops only in views up to its log view (a persisted one records a
// log view durably before it acks in it), so every op that committed with
// its ack committed in a view before best's log view and is in the log
// of that view, of which best is a prefix; any other committed op was
// acked by a replication quorum of the other replicas, which every later
// view-change quorum meets without this replica. Taking best (its ops
// never nacked) and voting with it is then as safe as the vote of a
// replica that holds it. Without this, replicas in a view change (which
// answer with their log, but do not lead the recovering replica back
// into a view) and a recovering replica (which takes no part in the
// view change) wait for each other forever once only they are up (seeds
// 14972, 39116).
//
// Only answers of replicas in a view change count: while one answered as
// normal, the primary of its view may be running and answer too, and the
// view change this replica would start would disrupt that view for nothing.
func (r *Replica) recoveryFromLaterLogView(best *Message, count int) bool {
	if !r.recovery.viewKept || count < r.viewChangeQuorum-1 || best == nil || best.LogView <= r.logView {
		return false
	}
	for _, resp := range r.recovery.responses {
		if resp != nil && resp.Context.Hi != recoveryResponseViewChange {
			return false
		}
	}
	return true
}

func (r *Replica) onRecoveryResponse(m *Message) {
	if r.onRestartAnswer(m) {
		return // restart.go
	}
	if r.status != StatusRecovering || m.Context.Lo != r.recovery.nonce || m.Context.Hi > recoveryResponseViewChange {
		return
	}
	if old := r.recovery.responses[m.Replica]; old == nil || old.View <= m.View {
		r.recovery.responses[m.Replica] = m.Clone()
	}
	count := 0
	var latest uint64
	for _, resp := range r.recovery.responses {
		if resp != nil {
			count++
			latest = max(latest, resp.View)
		}
	}
	primary := r.primaryIndex(latest)
	from := r.recovery.responses[primary]
	if from != nil && (from.View != latest || from.Context.Hi == recoveryResponseViewChange) {
		from = nil
	}
	var best *Message
	for _, resp := range r.recovery.responses {
		if resp != nil && (best == nil || r.betterLog(resp, best)) {
			best = resp
		}
	}
	laterLog := from == nil && r.recoveryFromLaterLogView(best, count)
	if count < r.recoveryQuorum() && !r.recoveryFromPrimary(from, latest, count) && !laterLog {
		return
	}
	if from == nil && (count == int(r.cfg.ReplicaCount)-1 || laterLog) {
		// Every other replica answered (the primary of the latest view is
		// this replica, or its answer is stale): the best of their logs,
		// as in a view change, holds every committed op. Or the best log
		// is of a later log view than this replica's own
		// (recoveryFromLaterLogView).
		from = best
	}
	if r.cfg.Bugs.Has(BugRecoverWithoutPrimary) {
		// The planted bug trusts whichever quorum member answered with the
		// shortest log instead of the primary of the latest view.
		from = nil
		for _, resp := range r.recovery.responses {
			if resp != nil && (from == nil || resp.Op < from.Op) {
				from = resp
			}
		}
	}
	if from == nil {
		return
	}
	headers, err := decodeChain(from.Body)
	if err != nil || headers[len(headers)-1].Op != from.Op {
		r.recovery.responses[from.Replica] = nil
		return
	}
	if !r.chainHoldable(headers, from.Op) {
		// The cluster's log is beyond what this replica's checkpoint can
		// reach: fetch a checkpoint first, then recover on a later round.
		if r.sb.checkpoint == nil && !r.transfer.installing {
			r.transfer.behind = true
			r.requestCheckpoint()
		}
		r.recovery.responses = [ReplicaCountMax]*Message{}
		return
	}
	// The view this replica last recorded durably may be one that never
	// started (no quorum reached it): having promised it, the replica must
	// not act in an older view, so it never goes back below it.
	promised := r.view
	r.view = max(latest, promised)
	r.logViewLost = false // the superblock clears it once the log is recorded (logViewRecorded)
	r.logView = from.LogView
	r.logViewHead = r.chainHead(headers, from.Op)
	r.installChain(headers, from.Op)
	r.sb.logViewOp = r.op
	// This replica may have acked these ops before it lost them: it must
	// never nack them in a view change, after a restart either, so the
	// journal records them as it records a prepare that was durable and
	// then read back faulty (a HeaderDurable record, in both zones).
	for op := r.commitMin + 1; op <= r.op; op++ {
		if e := r.log.at(op); e != nil && e.prepare == nil {
			e.faulty = true
			if r.persisted() {
				r.journalRecordFaulty(e)
			}
		}
	}
	// A durable prepare the journal reloaded without its seal is sealed
	// now: an open that found the log of its log view lost left the
	// journal as it was (rerecordLoaded does not run then), and a prepare
	// the recovered log keeps is otherwise never recorded, so the
	// superblock that makes the recovered log view durable would wait for
	// it forever (seed 68044: replica 0's op 33, durable, unsealed, held
	// recordedHead at 32 below the log view's op 38 through every later
	// view change).
	if r.persisted() {
		for op := r.checkpointOp + 1; op <= r.op; op++ {
			if e := r.log.at(op); e != nil && e.prepare != nil && e.durable && !e.sealWritten && !e.recorded {
				r.writeRedundantHeader(e)
			}
		}
	}
	if from.Replica != primary || from.Context.Hi == recoveryResponseViewChange || promised > latest {
		// Without the primary's word (or when it promised a later view)
		// this replica cannot rejoin the view as it stands: it takes the
		// log into a new view change.
		r.advanceCommitMax(min(from.Commit, r.op))
		r.recovery.responses = [ReplicaCountMax]*Message{}
		r.memoryRecovered()
		r.startViewChange(max(latest+1, promised))
		return
	}
	r.logView = from.View
	r.status = StatusNormal
	r.memoryRecovered()
	r.advanceCommitMax(from.Commit)
	r.recovery.responses = [ReplicaCountMax]*Message{}
	r.enterNormal()
	r.repair()
	r.afterLogChange()
}
