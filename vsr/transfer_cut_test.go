package vsr

import "testing"

// cutTransfer runs TestTransferredCheckpointCutsLogView's history up to
// r2's cutting transfer: r2 acked ops up to the op it returns in view 0,
// then installed r1's checkpoint of another history below it and entered
// recovery; r1 is the primary of view 1 with r0, and r2 is cut off.
func cutTransfer(t *testing.T) (*testCluster, uint64) {
	t.Helper()
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	if err := c.client(1).Submit(OperationUserMin, []byte("a")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; c.client(1).Busy() && ticks < 1000; ticks++ {
		c.tick(1)
	}
	c.tick(50)
	var acked uint64
	c.onSend = func(from int, m *Message) {
		if from == 2 && m.Command == CommandPrepareOk && m.View == 0 {
			acked = max(acked, m.Op)
		}
		if from == 2 && m.Command == CommandDoViewChange && m.LogView == 0 && m.Op < acked {
			t.Errorf("r2 voted for view %d with log view 0 ending at op %d, below op %d it acked in view 0", m.View, m.Op, acked)
		}
	}
	// r1 is cut off and r0's disk stalls: r2 acks three ops nobody commits.
	c.group = []int{1, 2, 1}
	c.stalled = map[int]bool{0: true}
	for id := uint64(2); id <= 4; id++ {
		if err := c.client(id).Submit(OperationUserMin, []byte("lost")); err != nil {
			t.Fatal(err)
		}
	}
	c.deliver(false, 1000)
	r2 := c.nodes[2].replica
	n := r2.OpNumber() - 2
	if acked != n+2 || r2.commitMin != n-1 || c.nodes[0].replica.CommitMax() >= n {
		t.Fatalf("r2 acked op %d, applied %d, log to %d; r0 committed to %d", acked, r2.commitMin, r2.OpNumber(), c.nodes[0].replica.CommitMax())
	}
	c.crash(0)
	delete(c.clients, 2)
	delete(c.clients, 3)
	delete(c.clients, 4)
	delete(c.stalled, 0)
	// r0 restarts without those ops; with r1 it goes on in view 1 and
	// commits other ops n and n+1 while r2 is cut off.
	c.group = []int{1, 1, 2}
	c.start(0)
	if err := c.client(5).Submit(OperationUserMin, []byte("other")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; c.client(5).Busy() && ticks < 3000; ticks++ {
		c.tick(1)
	}
	r1 := c.nodes[1].replica
	k := n + 1
	h, ok := r1.header(k)
	if r1.commitMin != k || !ok || h.Checksum == r2.log.at(k).header.Checksum {
		t.Fatalf("r1 did not commit other ops to %d:\n%s", k, c.status())
	}
	// r2 installs r1's checkpoint at op k by state transfer: its op k is
	// not r2's, so r2's op k+1 does not chain to it.
	r2.transfer.behind = true
	r2.transfer.ready = r1.encodeCheckpoint(h)
	r2.installTransferred()
	c.pumpIO()
	if r2.checkpointOp != k || r2.OpNumber() != k {
		t.Fatalf("r2 installed checkpoint %d, log to %d, want both at op %d", r2.checkpointOp, r2.OpNumber(), k)
	}
	if !r2.sb.durable.LogViewLost || r2.Status() != StatusRecovering {
		t.Fatalf("r2's transferred checkpoint cut its log of log view 0 below its ack of op %d and it runs on: superblock log view %d lost=%v, %s in view %d",
			acked, r2.sb.durable.LogView, r2.sb.durable.LogViewLost, r2.Status(), r2.View())
	}
	return c, acked
}

// TestTransferredCheckpointCutsLogView: a backup acks ops n to n+2 in
// view 0 that never commit (the primary's disk stalls), then installs a
// transferred checkpoint at op n+1 of another history, as a replica that
// cannot take a later view's StartView does (syncTo). The transfer keeps
// above the checkpoint only the ops that chain to it, so the log ends at
// op n+1, below op n+2 acked in log view 0 (seed 655: replica 2 voted for
// view 52 with log view 27 ending at op 22, below its ack of op 24). The
// superblock that makes such a checkpoint durable records that the log of
// the log view is lost, and the replica, then and after a restart,
// recovers a view's log from its peers instead of voting with that log.
func TestTransferredCheckpointCutsLogView(t *testing.T) {
	c, acked := cutTransfer(t)
	c.crash(2)
	c.start(2)
	r2 := c.nodes[2].replica
	if r2.LogView() == 0 && r2.OpNumber() < acked && r2.Status() != StatusRecovering {
		t.Fatalf("r2 restarted %s in log view 0 with a log ending at op %d below its ack of op %d", r2.Status(), r2.OpNumber(), acked)
	}
	// r2 joins the cluster by recovery, never voting with the cut log.
	c.group = []int{0, 0, 0}
	c.tick(2000)
	for i, node := range c.nodes {
		if r := node.replica; r.Status() != StatusNormal || r.LogView() != r.View() {
			t.Fatalf("r%d did not rejoin:\n%s", i, c.status())
		}
	}
	if r2 := c.nodes[2].replica; r2.logViewLost || r2.sb.durable.LogViewLost {
		t.Fatalf("r2 rejoined view %d but still marks its log view lost (superblock %v)", r2.View(), r2.sb.durable.LogViewLost)
	}
	if err := c.client(6).Submit(OperationUserMin, []byte("b")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; c.client(6).Busy() && ticks < 2000; ticks++ {
		c.tick(1)
	}
	if c.client(6).Busy() {
		t.Fatalf("no progress after r2 recovered:\n%s", c.status())
	}
	c.checkAgreement()
}

// TestTransferCutRecoversFromPrimaryAlone: the replica whose log view a
// transferred checkpoint cut recovers while the third replica is cut off,
// from the answer of the primary of the latest view alone (seed 461 of the
// narrowed setting: replica 0 stayed recovering to the end waiting for a
// second answer from replica 2, isolated, while replica 1 ran normal as the
// primary). With its own kept view promise, that answer and this replica
// make a view-change quorum, which meets the quorum of every view that
// started.
func TestTransferCutRecoversFromPrimaryAlone(t *testing.T) {
	c, acked := cutTransfer(t)
	r1, r2 := c.nodes[1].replica, c.nodes[2].replica
	if !r1.Primary() || r1.Status() != StatusNormal {
		t.Fatalf("r1 is not the primary running normal:\n%s", c.status())
	}
	// r0 is cut off: r2 hears only from r1, the primary of view 1.
	c.group = []int{2, 1, 1}
	for ticks := 0; r2.Status() == StatusRecovering && ticks < 2000; ticks++ {
		c.tick(1)
	}
	if r2.Status() != StatusNormal || r2.LogView() != r1.View() || r2.View() != r1.View() {
		t.Fatalf("r2 did not recover from the primary alone:\n%s", c.status())
	}
	if r2.logViewLost {
		t.Fatalf("r2 recovered into view %d but still marks its log view lost", r2.View())
	}
	// The primary commits with r2's acks alone: r2 rejoined as a backup.
	if err := c.client(6).Submit(OperationUserMin, []byte("b")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; c.client(6).Busy() && ticks < 3000; ticks++ {
		c.tick(1)
	}
	if c.client(6).Busy() {
		t.Fatalf("no progress with r0 cut off after r2 recovered:\n%s", c.status())
	}
	for ticks := 0; r2.sb.durable.LogViewLost && ticks < 1000; ticks++ {
		c.tick(1)
	}
	if r2.sb.durable.LogViewLost || r2.OpNumber() <= acked {
		t.Fatalf("r2's superblock still marks its log view lost (%v), or its log ends at op %d, not above op %d", r2.sb.durable.LogViewLost, r2.OpNumber(), acked)
	}
	c.checkAgreement()
}
