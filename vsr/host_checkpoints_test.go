package vsr

import (
	"strings"
	"testing"
)

// TestHostCheckpointsWantedAtHalfTheJournalBytes: with HostCheckpoints
// the replica never checkpoints its state machine itself (the host knows
// when a state is safe to record: a partition's segments synced), but its
// journal's bytes are the replica's to watch: once they reach half of
// WALBytesMax it reports CheckpointWanted, and a checkpoint the host
// takes through CheckpointAt clears it. Without the report a host that
// spaced its checkpoints by ops waited forever behind a full journal.
func TestHostCheckpointsWantedAtHalfTheJournalBytes(t *testing.T) {
	cfg := groupTestConfig(1, 0)
	cfg.HostCheckpoints = true
	cfg.Sessionless.Add(OperationUserMin)
	cfg.JournalSlots = 32
	cfg.MessageSizeMax = 16 << 10
	cfg.WALBytesMax = 64 << 10
	c := newTestCluster(t, cfg)
	r := c.nodes[0].replica
	body := strings.Repeat("x", 6<<10)
	for req := uint64(1); req <= 3; req++ {
		c.rawRequest(9, 0, OperationUserMin, 0, req, body)
		c.deliverCollect(9)
	}
	if r.CheckpointWanted() || r.CheckpointPending() {
		t.Fatalf("3 ops of 6 KiB (under half of 64 KiB): wanted %v, pending %v", r.CheckpointWanted(), r.CheckpointPending())
	}
	for req := uint64(4); req <= 8; req++ {
		c.rawRequest(9, 0, OperationUserMin, 0, req, body)
		c.deliverCollect(9)
	}
	if r.CommitNumber() == 0 {
		t.Fatalf("nothing committed\n%s", c.status())
	}
	if !r.CheckpointWanted() {
		t.Fatalf("journal of %d ops of 6 KiB, WALBytesMax 64 KiB: no checkpoint wanted", r.CommitNumber())
	}
	if r.CheckpointPending() || r.CheckpointOp() != 0 {
		t.Fatal("the replica checkpointed by itself under HostCheckpoints")
	}
	if !r.CheckpointAt(r.CommitNumber(), c.nodes[0].sm.Checkpoint()) {
		t.Fatal("CheckpointAt refused the last applied op")
	}
	if r.CheckpointWanted() {
		t.Fatal("still wanted after the host's checkpoint")
	}
	c.pumpIO()
	if r.CheckpointOp() != r.CommitNumber() {
		t.Fatalf("checkpoint op %d, commit %d", r.CheckpointOp(), r.CommitNumber())
	}
}

// TestHostCheckpointsWantedWhenTheJournalWindowIsFull: a host that let
// its replica's journal window fill without a checkpoint (the broker host
// takes none while its partition is fenced, and took none for ops applied
// then) gets no more ops to take one after: the window holds them back.
// The replica asks (CheckpointWanted) when the window stops the next op,
// at the primary (a queued request) and at a backup (a prepare it must
// leave for later); once the hosts checkpoint, the queued request
// commits. Found by the broker scenario 37856 (a client's store-offset
// waited through the liveness phase at a primary whose journal window
// was full).
func TestHostCheckpointsWantedWhenTheJournalWindowIsFull(t *testing.T) {
	cfg := groupTestConfig(3, 0)
	cfg.HostCheckpoints = true
	cfg.Sessionless.Add(OperationUserMin)
	cfg.JournalSlots = 16
	cfg.CheckpointIntervalOps = 8
	c := newTestCluster(t, cfg)
	p := c.nodes[0].replica
	for req := uint64(1); req <= cfg.JournalSlots; req++ {
		c.rawRequest(9, 0, OperationUserMin, 0, req, "x")
		c.deliverCollect(9)
	}
	c.tick(50) // the commit heartbeat brings the backups' commit up
	c.deliverCollect(9)
	if p.OpNumber() != cfg.JournalSlots || p.CommitNumber() != cfg.JournalSlots {
		t.Fatalf("primary op %d commit %d, want both %d\n%s", p.OpNumber(), p.CommitNumber(), cfg.JournalSlots, c.status())
	}
	if p.CheckpointWanted() {
		t.Fatal("a checkpoint wanted before the window stopped an op")
	}
	c.rawRequest(9, 0, OperationUserMin, 0, cfg.JournalSlots+1, "x")
	if got := c.deliverCollect(9); len(got) != 0 {
		t.Fatalf("a request beyond the journal window answered at once: %v", got[0].Header)
	}
	if p.OpNumber() != cfg.JournalSlots {
		t.Fatalf("primary prepared op %d beyond its journal window %d", p.OpNumber(), cfg.JournalSlots)
	}
	if !p.CheckpointWanted() {
		t.Fatalf("primary's journal window full (checkpoint %d, op %d), the next request queued: no checkpoint wanted", p.CheckpointOp(), p.OpNumber())
	}
	if !p.CheckpointAt(p.CommitNumber(), c.nodes[0].sm.Checkpoint()) {
		t.Fatal("the primary's CheckpointAt refused its last applied op")
	}
	c.deliverCollect(9)
	if p.CheckpointOp() != cfg.JournalSlots || p.OpNumber() != cfg.JournalSlots+1 {
		t.Fatalf("after the primary's checkpoint: checkpoint %d op %d, want %d and the queued request prepared", p.CheckpointOp(), p.OpNumber(), cfg.JournalSlots)
	}
	for i := 1; i < 3; i++ {
		b := c.nodes[i].replica
		if b.OpNumber() != cfg.JournalSlots {
			t.Fatalf("backup %d took op %d beyond its journal window", i, b.OpNumber())
		}
		if !b.CheckpointWanted() {
			t.Fatalf("backup %d's journal window full (checkpoint %d, op %d, commit %d), a prepare left for later: no checkpoint wanted", i, b.CheckpointOp(), b.OpNumber(), b.CommitNumber())
		}
		if !b.CheckpointAt(b.CommitNumber(), c.nodes[i].sm.Checkpoint()) {
			t.Fatalf("backup %d's CheckpointAt refused its last applied op", i)
		}
	}
	for round := 0; round < 20 && p.CommitNumber() <= cfg.JournalSlots; round++ {
		c.tick(10) // the primary resends the prepare the backups left
	}
	if p.CommitNumber() != cfg.JournalSlots+1 {
		t.Fatalf("the queued request did not commit after the checkpoints: commit %d\n%s", p.CommitNumber(), c.status())
	}
}
