package vsr

import "fmt"

// pipelineBlock says why the primary must hold back a new prepare.
type pipelineBlock uint8

const (
	blockNone pipelineBlock = iota
	// blockPipeline: the pipeline of uncommitted prepares is at its limit.
	blockPipeline
	// blockWindow: the journal slot the prepare would take still holds an
	// op not yet checkpointed.
	blockWindow
	// blockBytes: the journal's bytes would pass WALBytesMax.
	blockBytes
)

// pipelineBlocked reports whether, and why, the primary must hold back a
// new prepare of size bytes. This is the backpressure point: nothing
// acknowledged is ever dropped to make room.
func (r *Replica) pipelineBlocked(size uint64) pipelineBlock {
	switch {
	case r.op-r.commitMax >= uint64(r.cfg.PipelinePrepareMax):
		return blockPipeline
	case r.op+1 > r.opPrepareMax():
		return blockWindow
	case r.walBytes()+size > r.cfg.WALBytesMax:
		return blockBytes
	}
	return blockNone
}

// pipelineFull is pipelineBlocked that also starts what frees a blocked
// journal: only a checkpoint frees a window slot or journal bytes. With
// HostCheckpoints the host takes its checkpoints after ops' effects, so
// one that let ops pass without one (a partition fenced while its
// segments were repaired) would wait for ops this very bound holds back:
// the replica asks for one (37856). The checkpoint due at half of
// WALBytesMax may not have started either (one was in flight then).
func (r *Replica) pipelineFull(size uint64) bool {
	switch r.pipelineBlocked(size) {
	case blockNone:
		return false
	case blockWindow:
		r.checkpointNow()
	case blockBytes:
		r.maybeCheckpoint()
	}
	return true
}

// walBytes sums the sizes of the prepares not covered by the checkpoint
// (with Config.ReleaseApplied, of those not applied: the others' bodies
// are gone). The log keeps the sum as it changes (log.bytesAbove): it
// is read on every request and apply, and costs O(1) there, not O(ops).
func (r *Replica) walBytes() uint64 {
	floor := r.checkpointOp
	if r.cfg.ReleaseApplied {
		floor = max(floor, r.commitMin)
	}
	n := r.log.bytesAbove(floor)
	if invariants {
		var sum uint64
		for op := floor + 1; op <= r.op; op++ {
			if h, ok := r.log.header(op); ok {
				sum += uint64(h.Size)
			}
		}
		if sum != n {
			panic(fmt.Sprintf("vsr: log bytes above op %d counted %d, hold %d (head %d)", floor, n, sum, r.op))
		}
	}
	return n
}

// tryCommit advances the primary's commit number over every prepare held
// by a replication quorum, applies them, and refills the pipeline.
func (r *Replica) tryCommit() {
	if !r.Primary() {
		return
	}
	quorum := r.replicationQuorum
	if r.cfg.Bugs.Has(BugCommitWithoutQuorum) {
		quorum = 1
	}
	recorded := r.ackableHead()
	for r.commitMax < r.op {
		op := r.commitMax + 1
		e := r.log.at(op)
		if e == nil || e.prepare == nil {
			break
		}
		acks := bitCount(e.oks)
		if r.prepareReady(op, recorded) {
			acks++
		}
		if acks < quorum {
			break
		}
		r.commitMax = op
	}
	r.applyCommitted()
	if r.commitMax == r.op {
		r.timers.prepare.stop()
	}
	for len(r.requestQueue) > 0 && !r.pipelineFull(uint64(r.requestQueue[0].EncodedSize())) {
		m := r.requestQueue[0]
		r.requestQueue = r.requestQueue[1:]
		r.queuedBytes -= uint64(m.EncodedSize())
		r.onRequest(m)
	}
}

// primaryStuckRoundsMax is how many prepare timeouts a primary waits for a
// missing prepare body that no peer supplies before it steps down: the
// view change that follows truncates ops that a quorum nacks.
const primaryStuckRoundsMax = 16

// checkStuck counts prepare timeouts without commit progress while an
// uncommitted op lacks its body, and starts a view change past the limit.
func (r *Replica) checkStuck() bool {
	if r.commitMax != r.stuckCommit || r.commitMax == r.op {
		r.stuckCommit = r.commitMax
		r.stuckRounds = 0
		return false
	}
	missing := false
	for op := r.commitMax + 1; op <= r.op; op++ {
		if r.log.prepare(op) == nil {
			missing = true
			break
		}
	}
	if !missing {
		r.stuckRounds = 0
		return false
	}
	r.stuckRounds++
	if r.stuckRounds < primaryStuckRoundsMax {
		return false
	}
	r.stuckRounds = 0
	r.startViewChange(r.view + 1)
	return true
}

// resendUncommitted resends every uncommitted prepare to the backups that
// have not acknowledged it.
func (r *Replica) resendUncommitted() {
	for op := r.commitMax + 1; op <= r.op; op++ {
		e := r.log.at(op)
		if e == nil || e.prepare == nil {
			continue
		}
		for i := uint8(0); i < r.cfg.ReplicaCount; i++ {
			if i != r.cfg.ReplicaIndex && e.oks&(1<<i) == 0 {
				r.network.SendToReplica(i, e.prepare.Clone())
			}
		}
	}
	r.timers.prepare.start()
}

func bitCount(b uint8) int {
	n := 0
	for ; b != 0; b &= b - 1 {
		n++
	}
	return n
}
