package vsr

// Idle ticks: a host of many groups (a server with thousands of partition
// groups) need not tick every group every tick. TicksUntilDue says how
// many ticks from now the replica's Tick next does more than count, and
// SkipTicks(n), for n below that, advances the replica exactly as n calls
// of Tick would: every running timer counts n ticks, and a periodic timer
// whose action would change nothing (the repair timer of a replica that
// lacks nothing, the prepare timer of a primary with nothing uncommitted)
// keeps its phase as its firings would have left it. The host then ticks a
// group only when it is due, and brings it up to date (SkipTicks) before
// any other input, so that vsr's decisions are those of ticking every
// tick: the simulator, which ticks every replica every tick, and a host
// that skips, run the same protocol.

// NoDeadline is TicksUntilDue's answer for a replica whose ticks never do
// anything until its next input (opening, or failed).
const NoDeadline = ^uint64(0)

// due is the number of ticks until t fires, NoDeadline when it is stopped.
func (t *timer) due() uint64 {
	if !t.running {
		return NoDeadline
	}
	if t.count >= t.after {
		return 1
	}
	return t.after - t.count
}

// TicksUntilDue returns the number of ticks from now of the first Tick
// that may do more than count (at least 1), or NoDeadline.
func (r *Replica) TicksUntilDue() uint64 {
	due, _, _ := r.idleTimers()
	return due
}

// idleTimers returns TicksUntilDue, and whether the repair and the prepare
// timer fire with nothing to do (they then keep their phase across a
// skip).
func (r *Replica) idleTimers() (due uint64, idleRepair, idlePrepare bool) {
	if r.status == StatusOpening || r.lastError != nil {
		return NoDeadline, false, false
	}
	ts := &r.timers
	due = NoDeadline
	switch r.status {
	case StatusNormal:
		if r.Primary() {
			due = min(due, ts.commitHeartbeat.due())
			if !r.readRoundsIdle() {
				return 1, false, false
			}
			if ts.prepare.running && r.prepareIdle() && ts.prepare.count < ts.prepare.after {
				idlePrepare = true
			} else {
				due = min(due, ts.prepare.due())
			}
		} else {
			due = min(due, ts.normalHeartbeat.due())
		}
		if ts.repair.running && r.repairIdle() && ts.repair.count < ts.repair.after {
			idleRepair = true
		} else {
			due = min(due, ts.repair.due())
		}
	case StatusViewChange:
		due = ts.viewChange.due()
	case StatusRecovering:
		due = ts.recovery.due()
	}
	return max(due, 1), idleRepair, idlePrepare
}

// readRoundsIdle: tickReadRounds would do nothing (no admitted read waits
// for a round a quorum has not answered).
func (r *Replica) readRoundsIdle() bool {
	s := &r.read
	return s.view != r.view || s.want == 0 || r.readConfirmed() >= s.want
}

// prepareIdle: a prepare timeout would change nothing (checkStuck finds
// nothing uncommitted and nothing to reset; resendUncommitted resends
// nothing and restarts the timer, as its firing did).
func (r *Replica) prepareIdle() bool {
	return r.commitMax == r.op && r.stuckCommit == r.commitMax && r.stuckRounds == 0
}

// repairIdle: repair would send nothing (a normal replica that holds and
// applied every op it knows of, is not behind and not syncing).
func (r *Replica) repairIdle() bool {
	return r.solo() || (!r.transfer.behind && !r.syncing() && r.commitMin == r.op && r.commitMax <= r.op)
}

// SkipTicks advances the replica by n ticks in which it is not due: as n
// calls of Tick would, when n is below TicksUntilDue (it panics
// otherwise: a host that skips a due tick would change the protocol).
func (r *Replica) SkipTicks(n uint64) {
	if n == 0 {
		return
	}
	due, idleRepair, idlePrepare := r.idleTimers()
	if due == NoDeadline {
		return // Tick would not even count
	}
	if n >= due {
		panic("vsr: SkipTicks past a due tick")
	}
	ts := &r.timers
	ts.ticks += n
	for _, t := range ts.all() {
		if t.running {
			t.count += n
		}
	}
	// A periodic timer whose firings did nothing restarted at each.
	if idleRepair {
		ts.repair.count %= ts.repair.after
	}
	if idlePrepare {
		ts.prepare.count %= ts.prepare.after
	}
}

// OnCommitAnnouncement handles a commit heartbeat that reached the replica
// inside a host's coalesced announcement (CommitAnnouncer) rather than as
// its own message: exactly as Step handles the Commit message of replica
// from in view with that commit number and checkpoint. The host verified
// the announcement's checksum.
func (r *Replica) OnCommitAnnouncement(from uint8, view, commit, checkpointOp uint64) {
	m := &r.announcement
	*m = Message{Header: Header{Command: CommandCommit, Cluster: r.cfg.Cluster, Group: r.cfg.Group, Replica: from,
		View: view, Commit: commit, CheckpointOp: checkpointOp}}
	r.step(m)
	*m = Message{}
}
