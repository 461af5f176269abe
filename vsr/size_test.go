package vsr

import (
	"bytes"
	"testing"
)

// TestMessageSizeMaxFitsIggyFrame commits a prepare whose body is a whole
// 64 MiB Iggy frame through a replicated group of three, and checks that
// replicated mode asks for no journal zones and a bounded checkpoint area.
func TestMessageSizeMaxFitsIggyFrame(t *testing.T) {
	const frame = 64 << 20 // net/wire.MaxFrameSize
	cfg := DefaultConfig(7, 3, 0)
	cfg.MessageSizeMax = MessageSizeMaxLimit
	cfg.CheckpointSizeMax = 1 << 20
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.Sessionless.Add(OperationUserMin)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a 64 MiB frame with the default 256 MiB WALBytesMax: %v", err)
	}
	for _, z := range []Zone{ZoneWALHeaders, ZoneWALPrepares} {
		if n := cfg.ZoneSize(z); n != 0 {
			t.Fatalf("replicated mode asks %d bytes of zone %d", n, z)
		}
	}
	if n := cfg.ZoneSize(ZoneCheckpoint); n != 2<<20 {
		t.Fatalf("checkpoint zone of %d bytes", n)
	}
	persisted := cfg
	persisted.Durability = Persisted
	if n := persisted.ZoneSize(ZoneWALPrepares); n != 64*uint64(MessageSizeMaxLimit) {
		t.Fatalf("persisted prepares zone of %d bytes", n)
	}
	c := newTestCluster(t, cfg)
	body := bytes.Repeat([]byte{0xa5}, frame)
	c.nodes[0].replica.Step(c.request(9, 0, OperationUserMin, 0, 1, body))
	replies := c.deliverCollect(9)
	if len(replies) != 1 || replies[0].Disposition != DispositionNone || replies[0].Op != 1 {
		t.Fatalf("replies %v", replies)
	}
	c.tick(20)
	for i, n := range c.nodes {
		if len(n.sm.entries) != 1 || len(n.sm.entries[0]) != frame {
			t.Fatalf("replica %d applied %d entries", i, len(n.sm.entries))
		}
	}
	// One byte more than the limit allows is refused, with an answer.
	c.expectAnswer(t, 0, c.request(9, 0, OperationUserMin, 0, 2, make([]byte, MessageSizeMaxLimit-HeaderSize+1)), DispositionTooLarge)
}

// TestWALBytesBackpressureCheckpoints fills WALBytesMax while a checkpoint
// taken for the op interval (at few bytes) is in flight: once it lands the
// journal above it still holds more than half of WALBytesMax and the next
// request does not fit (it is answered overloaded). The backpressure
// point starts the checkpoint that frees the room instead of waiting for
// an apply that never comes, and the retry commits.
func TestWALBytesBackpressureCheckpoints(t *testing.T) {
	cfg := DefaultConfig(7, 1, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 128 << 10
	cfg.CheckpointIntervalOps = 2
	cfg.Sessionless.Add(OperationUserMin)
	c := newTestCluster(t, cfg)
	r := c.nodes[0].replica
	step := func(n int) { r.Step(c.request(9, 0, OperationUserMin, 0, 1, make([]byte, n))) }
	step(100)
	step(100) // op 2: the interval checkpoint starts; its IO waits
	if r.sb.checkpoint == nil {
		t.Fatal("no checkpoint in flight at op 2")
	}
	for range 3 {
		step(40 << 10) // ops 3..5 commit
	}
	c.takeClientMessages()
	// The sixth does not fit WALBytesMax, which bounds queued requests
	// too: it is answered overloaded (the client retries), not queued.
	c.expectAnswer(t, 0, c.request(9, 0, OperationUserMin, 0, 1, make([]byte, 40<<10)), DispositionOverloaded)
	if r.CommitNumber() != 5 || len(r.requestQueue) != 0 {
		t.Fatalf("commit %d, queued %d", r.CommitNumber(), len(r.requestQueue))
	}
	// The client retries: the checkpoint of op 2 lands, the next retry
	// still finds ops 3..5 above it and starts the checkpoint of op 5
	// (the backpressure point), after which a retry fits.
	for retry := 0; retry < 3 && r.CommitNumber() < 6; retry++ {
		c.pumpIO()
		c.tick(5)
		step(40 << 10)
		c.pumpIO()
		c.tick(5)
	}
	if r.CommitNumber() != 6 {
		t.Fatalf("stalled at commit %d with checkpoint %d and %d queued", r.CommitNumber(), r.CheckpointOp(), len(r.requestQueue))
	}
}
