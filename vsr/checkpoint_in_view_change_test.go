package vsr

import "testing"

// TestRecoveringReplicaFetchesCheckpointFromViewChange: a recovering
// replica whose journal window cannot hold the log of the only peer up
// fetches that peer's checkpoint while the peer is in a view change
// (seed 3263: replica 2, recovering with a damaged journal at checkpoint
// 0, could not take replica 1's log to op 127 beyond its window of 80
// slots; replica 1, in a view change that needed replica 2's vote, served
// checkpoints only when normal, so replica 2 asked for one to the end of
// the run and neither moved). The peer's durable checkpoint is of
// committed ops whatever its status; serving it ends the wait: the
// recovering replica installs it, takes the peer's log of a later log
// view (recoveryFromLaterLogView) and the two start a view without the
// third replica.
func TestRecoveringReplicaFetchesCheckpointFromViewChange(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 32
	cfg.PipelinePrepareMax = 4
	cfg.CheckpointIntervalOps = 8
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	submit := func(id uint64, body string) {
		t.Helper()
		if err := c.client(id).Submit(OperationUserMin, []byte(body)); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; c.client(id).Busy() && ticks < 3000; ticks++ {
			c.tick(1)
		}
		if c.client(id).Busy() {
			t.Fatalf("request %q of client %d not committed:\n%s", body, id, c.status())
		}
	}
	for i := range 5 {
		submit(1, string(rune('a'+i)))
	}
	c.tick(50)
	r2 := c.nodes[2].replica
	head := r2.OpNumber()
	lost := head - 2
	if r2.CheckpointOp() >= lost || r2.LogView() != 0 {
		t.Fatalf("r2: checkpoint %d, log view %d, want op %d above its checkpoint in log view 0", r2.CheckpointOp(), r2.LogView(), lost)
	}
	// r2 goes down with its slot of op lost corrupt in both zones and later
	// ops recorded beyond it: when it restarts it must recover.
	c.crash(2)
	s := c.nodes[2].storage
	slot := lost % cfg.JournalSlots
	s.durable[ZoneWALHeaders][slot*SectorSize+60] ^= 0xff
	s.durable[ZoneWALPrepares][slot*uint64(cfg.MessageSizeMax)+100] ^= 0xff
	// r0, the primary of view 0, restarts: it and r1 start view 1.
	c.crash(0)
	c.start(0)
	for ticks := 0; c.nodes[1].replica.LogView() == 0 && ticks < 3000; ticks++ {
		c.tick(1)
	}
	r1 := c.nodes[1].replica
	if r1.LogView() == 0 {
		t.Fatalf("r0 and r1 did not start a new view:\n%s", c.status())
	}
	// They commit far beyond r2's journal window.
	for i := 0; r1.CommitMax() <= r2.CheckpointOp()+2*cfg.JournalSlots; i++ {
		submit(2+uint64(i%4), "x")
	}
	// r0 goes down; r1 restarts into a view change it cannot finish alone.
	c.tick(50)
	c.crash(0)
	c.crash(1)
	c.start(1)
	r1 = c.nodes[1].replica
	if r1.Status() != StatusViewChange || r1.OpNumber() <= r2.CheckpointOp()+cfg.JournalSlots || r1.CheckpointOp() <= r2.CheckpointOp() {
		t.Fatalf("want r1 in a view change with a log beyond r2's journal window:\n%s", c.status())
	}
	c.start(2)
	r2 = c.nodes[2].replica
	if r2.Status() != StatusRecovering {
		t.Fatalf("r2 restarted %s, want recovering", r2.Status())
	}
	for ticks := 0; (r2.Status() != StatusNormal || r1.Status() != StatusNormal) && ticks < 5000; ticks++ {
		c.tick(1)
	}
	if r2.Status() != StatusNormal || r1.Status() != StatusNormal || r1.View() != r2.View() {
		t.Fatalf("r1 (in a view change) and r2 (recovering, needing a checkpoint) did not start a view together:\n%s", c.status())
	}
	if r2.CheckpointOp() == 0 {
		t.Fatalf("r2 runs without a fetched checkpoint:\n%s", c.status())
	}
	submit(9, "after")
	c.checkAgreement()
}
