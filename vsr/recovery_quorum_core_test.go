package vsr

import (
	"slices"
	"testing"
)

// TestRecoveryWaitsForViewChangeQuorumOfMemoryfulPeers: in six replicas
// (replication quorum 3, view-change quorum 4) an op commits with the
// acks of r3 and r5 only, and r3 then loses its memory. The four replicas
// r1, r2, r3 and r4, cut off from r0 and r5, must neither recover r3 (its
// recovery needs a view-change quorum of answers from other replicas, and
// the three memoryful ones are one short) nor start a view: r1, r2 and r4
// do not hold the op, and a view they started with r3's vote would lose
// it. Once r5 rejoins, the four memoryful replicas start a view that
// holds the op and r3 recovers into it. This is why the simulator's
// liveness core must hold a view-change quorum of a group's memoryful
// replicas besides one still recovering (sim's coreCanRecover, seed 2002
// at --ticks 6000).
func TestRecoveryWaitsForViewChangeQuorumOfMemoryfulPeers(t *testing.T) {
	cfg := DefaultConfig(7, 6, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Replicated
	c := newTestCluster(t, cfg)
	commit := func(client uint64, body string) {
		t.Helper()
		if err := c.client(client).Submit(OperationUserMin, []byte(body)); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; c.client(client).Busy() && ticks < 2000; ticks++ {
			c.tick(1)
		}
		if c.client(client).Busy() {
			t.Fatalf("%q did not commit:\n%s", body, c.status())
		}
	}
	commit(1, "a")
	c.tick(20)
	// Op b commits in view 0 with the acks of r3 and r5: r1, r2 and r4
	// hear nothing from them.
	c.group = []int{1, 2, 2, 1, 2, 1}
	commit(2, "b")
	opB := c.nodes[0].replica.CommitNumber()
	for _, i := range []int{1, 2, 4} {
		if slices.Contains(c.nodes[i].sm.entries, "b") || c.nodes[i].replica.OpNumber() >= opB {
			t.Fatalf("r%d holds op %d:\n%s", i, opB, c.status())
		}
	}
	// r3 loses its memory; r0 and r5 are cut off from the rest.
	c.crash(3)
	c.group = []int{1, 2, 2, 2, 2, 3}
	c.start(3)
	for range 3000 {
		c.tick(1)
		for _, i := range []int{1, 2, 4} {
			if r := c.nodes[i].replica; r.Status() == StatusNormal && r.View() > 0 {
				t.Fatalf("r%d started view %d without op %d and without a view-change quorum of memoryful replicas:\n%s", i, r.View(), opB, c.status())
			}
		}
		if st := c.nodes[3].replica.Status(); st != StatusRecovering {
			t.Fatalf("r3 left recovery (%s) with three memoryful peers:\n%s", st, c.status())
		}
	}
	// r5, which holds op b, rejoins: the view starts with it and r3
	// recovers.
	c.group[5] = 2
	converged := func() bool {
		view := c.nodes[1].replica.View()
		for _, i := range []int{1, 2, 3, 4, 5} {
			r := c.nodes[i].replica
			if r.Status() != StatusNormal || r.View() != view || r.CommitNumber() < opB {
				return false
			}
		}
		return true
	}
	for ticks := 0; !converged() && ticks < 5000; ticks++ {
		c.tick(1)
	}
	if !converged() {
		t.Fatalf("r1..r5 did not start a view holding op %d once r5 rejoined:\n%s", opB, c.status())
	}
	for _, i := range []int{1, 2, 3, 4, 5} {
		if !slices.Contains(c.nodes[i].sm.entries, "b") {
			t.Fatalf("r%d lacks b:\n%s", i, c.status())
		}
	}
	c.checkAgreement()
}
