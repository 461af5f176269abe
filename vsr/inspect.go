package vsr

// SuperblockCopy is what one superblock copy records, as the simulator
// reads it from a replica's durable storage to check that a message never
// claims more than the replica's disk holds.
type SuperblockCopy struct {
	Sequence     uint64
	View         uint64
	LogView      uint64
	Commit       uint64
	CheckpointOp uint64
}

// DecodeSuperblockCopy decodes and verifies one superblock sector (the
// zone holds superblockCopies of them, one per sector). It never panics.
func DecodeSuperblockCopy(sector []byte) (SuperblockCopy, error) {
	s, err := decodeSuperblock(sector)
	if err != nil {
		return SuperblockCopy{}, err
	}
	return SuperblockCopy{Sequence: s.Sequence, View: s.View, LogView: s.LogView, Commit: s.Commit, CheckpointOp: s.CheckpointOp}, nil
}

// SuperblockCopies is the number of superblock copies in ZoneSuperblock,
// one per sector.
const SuperblockCopies = superblockCopies

// LogChain returns the chain of headers the replica's log holds, oldest
// first, ending at its op: what a DoViewChange from it would carry. The
// simulator reads it to judge the log a new primary starts a view with
// against the primary's own vote, which never crosses the network.
func (r *Replica) LogChain() []Header {
	chain := r.chainHeaders()
	out := make([]Header, len(chain))
	for i, h := range chain {
		out[len(chain)-1-i] = *h
	}
	return out
}

// StateMissing reports whether the replica lacks the state machine state
// of its checkpoint: it could not read the checkpoint back at open, so it
// applies nothing, although its commit number is the checkpoint's op,
// until it has fetched a checkpoint from a peer.
func (r *Replica) StateMissing() bool { return r.stateMissing }

// Prepared returns the prepare this replica's log holds at op, committed
// or not (an uncommitted one may still be truncated by a view change): for
// the simulator's planted bug of a read past the commit frontier, and for
// inspection. The body is the log's; the caller must not modify it.
func (r *Replica) Prepared(op uint64) (CommittedEntry, bool) {
	if op == 0 || op > r.op {
		return CommittedEntry{}, false
	}
	p := r.log.prepare(op)
	if p == nil {
		return CommittedEntry{}, false
	}
	return CommittedEntry{Op: op, Operation: p.Operation, Checksum: p.Checksum, Body: p.Body}, true
}

// Behind reports whether the replica lacks the state of the ops it counts
// as applied: its checkpoint did not read back (it waits for a peer's), or
// it waits for a checkpoint to catch up by state transfer. Such a replica
// may be primary and commit, but its state machine must not serve reads.
func (r *Replica) Behind() bool { return r.stateMissing || r.transfer.behind }

// WALBytes returns the bytes Config.WALBytesMax bounds: the prepares above
// the checkpoint (journaled, in flight) and the requests queued behind
// them. A host that takes its own checkpoints (Config.HostCheckpoints)
// reads it to checkpoint before the bound pushes requests back for long.
func (r *Replica) WALBytes() uint64 { return r.walBytes() + r.queuedBytes }

// RecoveryAnswered reports whether the replica, recovering, holds an
// answer of peer in its current round: it drops the answers it has when
// the log they lead to is beyond what its checkpoint can reach (it then
// fetches a checkpoint and collects afresh), so the simulator judges the
// log a recovery ends with against the answers the replica still held.
func (r *Replica) RecoveryAnswered(peer int) bool {
	return r.status == StatusRecovering && peer >= 0 && peer < len(r.recovery.responses) && r.recovery.responses[peer] != nil
}
