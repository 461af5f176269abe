package vsr

import (
	"testing"
)

// viewChangeLogScenario scripts the case that separates (log_view, op) from
// op alone: an isolated old primary keeps a longer log of uncommitted ops
// from a stale view while the majority commits a different op at the same
// position in a newer view; then a view change pairs the old primary with a
// replica of the newer view. It returns the agreement violation, if any.
func viewChangeLogScenario(t *testing.T, bugs BugSet) (violation string) {
	if bugs != 0 {
		defer catchAssertion(&violation)
	}
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Bugs = bugs
	c := newTestCluster(t, cfg)
	settle := func(ticks int) {
		for range ticks {
			c.tick(1)
		}
	}
	// Five clients open sessions.
	for id := uint64(1); id <= 5; id++ {
		if err := c.client(id).Submit(OperationUserMin, []byte{byte('a' + id)}); err != nil {
			t.Fatal(err)
		}
	}
	settle(50)
	// Isolate the primary; three clients reach only it, then vanish.
	c.group = []int{1, 2, 2}
	for id := uint64(3); id <= 5; id++ {
		if err := c.client(id).Submit(OperationUserMin, []byte{'x', byte('0' + id)}); err != nil {
			t.Fatal(err)
		}
	}
	c.deliver(false, 1000)
	for id := uint64(3); id <= 5; id++ {
		delete(c.clients, id)
	}
	// The majority elects r1 in view 1 and commits client 1's op there.
	settle(200)
	if err := c.client(1).Submit(OperationUserMin, []byte("y1")); err != nil {
		t.Fatal(err)
	}
	settle(200)
	// r1 fails; r0 and r2 hold the view change for view 2.
	c.crash(1)
	c.group = []int{0, 0, 0}
	settle(600)
	return c.violation(nil, false)
}

func TestViewChangeLogChoice(t *testing.T) {
	if v := viewChangeLogScenario(t, 0); v != "" {
		t.Fatalf("correct protocol violated agreement: %s", v)
	}
	if v := viewChangeLogScenario(t, BugViewChangeLogByOpOnly); v == "" {
		t.Fatal("choosing the log by op alone went unnoticed")
	} else {
		t.Logf("planted bug caught: %.100s", v)
	}
}
