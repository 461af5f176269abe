package group

import (
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// The flushed state of a replicated partition group with peers.
//
// A replica's descriptor checkpoint (Config.CheckpointEveryOps) comes
// at most every CheckpointEveryOps ops, so the messages it flushed since
// are in its segment files but named by no checkpoint. When every
// process of the group crashes, every in-memory journal is gone and the
// group restarts from its checkpoints (vsr/restart.go): without more,
// the flushed messages above the last checkpoint would be cut back. So
// after every op whose effects flushed, purged or deleted segments and
// left the machine holding nothing unflushed, the host captures the
// machine's state (the descriptor: the machine state, never the log),
// waits for the binding's sync of the segment and offset writes up to it
// (Syncer.SyncForCheckpoint), and hands the binding the state encoded as
// a vsr checkpoint of that op (vsr.Replica.LocalCheckpointAt) to store
// durably and crash-atomically (FlushedStore). The replica gets it back
// on the restart path only (vsr.LocalCheckpointer), as a local
// checkpoint newer than its durable one.
//
// Why a flushed state is safe to restart from: it is of an op this
// replica applied, so committed; it is written only after the segment
// data it names is synced, so a power loss leaves either it (with its
// data) or the previous one; and the binding removes it (durably) before
// it destroys segment data the state names (a cut back to a restored
// machine below it, a purge, a segment deletion, a transfer install), so
// it is always a prefix of the history the replica's segments hold.
// At most one is waiting for its sync at a time; the next flush after it
// was stored takes the next.

// FlushedStore is an optional interface of Effects for a replicated
// partition group with peers (no prepare WAL): the store of the
// partition's flushed state. Without it the host keeps none, and a
// restart of the group after every replica lost its memory starts from
// the descriptor checkpoints only.
type FlushedStore interface {
	// LoadFlushed returns the flushed state the partition holds, as it
	// was stored by StoreFlushed and read back and verified (version,
	// checksum) at open, or nil. A state that does not verify (torn,
	// never synced) is never returned.
	LoadFlushed() []byte
	// StoreFlushed replaces the flushed state with s, durably and
	// crash-atomically (a crash leaves the old state or the new one). The
	// host calls it only once the segment and offset writes up to s.Op
	// are synced. A failure leaves the previous state (or none): the
	// binding reports it and carries on.
	StoreFlushed(s FlushedState)
}

// FlushedState is the partition's state at an op after which it held
// nothing unflushed.
type FlushedState struct {
	// Op is the op the state is of.
	Op uint64
	// FlushedEnd is the offset where the state's flushed messages end
	// (partition.Machine.FlushedEnd); PurgeGeneration is its purge
	// generation. A binding removes the state before it cuts its segments
	// below them.
	FlushedEnd, PurgeGeneration uint64
	// Data is the state encoded as a vsr checkpoint of Op
	// (vsr.Replica.LocalCheckpointAt): what the replica takes back.
	Data []byte
}

// flushedState is the host's side of the flushed state.
type flushedState struct {
	store FlushedStore
	// candidate is the state waiting for its sync ticket; stored is the
	// op of the last one handed to the store.
	candidate checkpointCandidate
	stored    uint64
	// flushedEnd and purgeGeneration are the candidate's.
	flushedEnd, purgeGeneration uint64
}

// flushedCheckpointer is the host as the replica's vsr.LocalCheckpointer.
type flushedCheckpointer struct{ h *Host }

func (f flushedCheckpointer) LocalCheckpoint() []byte { return f.h.flushed.store.LoadFlushed() }

// setUpFlushed enables the flushed state when the binding stores one and
// the group is replicated with peers (a persisted group's prepare WAL
// keeps what it acked; a group of one trusts its files).
func (h *Host) setUpFlushed() {
	store, ok := h.b.Effects.(FlushedStore)
	if !ok || h.cfg.Replica.Durability != vsr.Replicated || h.cfg.Replica.ReplicaCount < 2 {
		return
	}
	h.flushed.store = store
	h.replica.SetLocalCheckpointer(flushedCheckpointer{h})
}

// flushesSegments reports whether e changes what the segments hold.
func flushesSegments(e partition.Effect) bool {
	return e.Kind == partition.EffectFlush || e.Kind == partition.EffectPurged || e.Kind == partition.EffectSegmentsDeleted
}

// considerFlushed runs after op's effects, flushed reporting whether they
// changed the segments: it captures the machine's state at op when it
// holds nothing unflushed, and starts the sync that state waits for.
func (h *Host) considerFlushed(op uint64, flushed bool) {
	f := &h.flushed
	if f.store == nil || !flushed || f.candidate.set || h.failed != nil || h.missing != nil ||
		h.machine.LastOp() != op || len(h.machine.Unflushed()) > 0 {
		return
	}
	f.candidate = checkpointCandidate{set: true, op: op, state: h.machine.Checkpoint()}
	f.flushedEnd, f.purgeGeneration = h.machine.FlushedEnd(), h.machine.PurgeGeneration()
	f.candidate.ticket = h.b.Effects.SyncForCheckpoint()
}

// storeFlushed hands the store the waiting state once its sync is
// durable (afterInput).
func (h *Host) storeFlushed() {
	f := &h.flushed
	c := &f.candidate
	if !c.set || c.ticket > h.durable || h.failed != nil || h.missing != nil {
		return
	}
	op, state := c.op, c.state
	*c = checkpointCandidate{}
	if op <= f.stored || op <= h.replica.CheckpointOp() {
		return // the durable checkpoint covers it
	}
	data, ok := h.replica.LocalCheckpointAt(op, state)
	if !ok {
		return
	}
	f.store.StoreFlushed(FlushedState{Op: op, FlushedEnd: f.flushedEnd, PurgeGeneration: f.purgeGeneration, Data: data})
	f.stored = op
}

// StoreFlushedNow stores the machine's state at its last applied op as
// the flushed state at once, and reports whether it did. The binding
// calls it on a graceful close, once it flushed every batch (FlushAll)
// and synced the segment and offset writes: without it, the messages a
// close flushed past the last flush that fired were cut back at the
// restart of every replica (the restart starts from the most advanced
// flushed state), and a graceful restart of a cluster lost acknowledged
// messages of a replicated topic.
func (h *Host) StoreFlushedNow() bool {
	f := &h.flushed
	if f.store == nil || h.failed != nil || h.missing != nil || len(h.machine.Unflushed()) > 0 {
		return false
	}
	op := h.machine.LastOp()
	if op <= f.stored || op <= h.replica.CheckpointOp() {
		return false // stored already, or the durable checkpoint covers it
	}
	data, ok := h.replica.LocalCheckpointAt(op, h.machine.Checkpoint())
	if !ok {
		return false
	}
	f.candidate = checkpointCandidate{}
	f.store.StoreFlushed(FlushedState{Op: op, FlushedEnd: h.machine.FlushedEnd(), PurgeGeneration: h.machine.PurgeGeneration(), Data: data})
	f.stored = op
	return true
}

// dropFlushedCandidate forgets the waiting state: the machine was
// restored, and storage follows the restored machine from now on.
func (h *Host) dropFlushedCandidate() {
	h.flushed.candidate = checkpointCandidate{}
	h.flushed.stored = 0
}
