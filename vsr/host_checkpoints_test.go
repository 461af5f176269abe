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
