package vsr

import (
	"slices"
	"testing"
)

// TestStateMissingUntilCheckpointFetched: a persisted replica whose
// checkpoint no longer reads back restarts with its commit number at the
// checkpoint's op and an empty state machine, and says so (StateMissing)
// until a peer's checkpoint is installed. The simulator's liveness checker
// counted such a replica as caught up because its view and commit matched
// the core's; the durability check then found its state empty (seed 33219,
// scenarios/bug_liveness_converged_without_state_33219.txt).
func TestStateMissingUntilCheckpointFetched(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.Durability = Persisted
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.CheckpointIntervalOps = 8
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	c := newTestCluster(t, cfg)
	r2 := func() *Replica { return c.nodes[2].replica }
	cl := c.client(1)
	for i := 0; r2().CheckpointOp() == 0; i++ {
		if i == 40 {
			t.Fatalf("no checkpoint after %d requests\n%s", i, c.status())
		}
		if err := cl.Submit(OperationUserMin, []byte{byte('a' + i%26)}); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; cl.Busy() && ticks < 500; ticks++ {
			c.tick(1)
		}
	}
	for range 50 {
		c.tick(1)
	}
	checkpoint := r2().CheckpointOp()
	c.crash(2)
	// Damage the checkpoint where the superblock says it is.
	for i := range c.nodes[2].storage.durable[ZoneCheckpoint] {
		c.nodes[2].storage.durable[ZoneCheckpoint][i] ^= 0x5a
	}
	c.start(2)
	if !r2().StateMissing() || r2().CommitNumber() != r2().CheckpointOp() || len(c.nodes[2].sm.entries) != 0 {
		t.Fatalf("restarted with an unreadable checkpoint at op %d: state missing %v, commit %d, checkpoint %d, %d entries applied",
			checkpoint, r2().StateMissing(), r2().CommitNumber(), r2().CheckpointOp(), len(c.nodes[2].sm.entries))
	}
	for ticks := 0; r2().StateMissing(); ticks++ {
		if ticks == 2000 {
			t.Fatalf("still missing its state after %d ticks\n%s", ticks, c.status())
		}
		c.tick(1)
	}
	for ticks := 0; r2().CommitNumber() < c.nodes[0].replica.CommitNumber() && ticks < 2000; ticks++ {
		c.tick(1)
	}
	if !slices.Equal(c.nodes[2].sm.entries, c.nodes[0].sm.entries) {
		t.Fatalf("state after the fetch: %v, primary's %v", c.nodes[2].sm.entries, c.nodes[0].sm.entries)
	}
}
