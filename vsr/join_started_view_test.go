package vsr

import "testing"

// TestElectingReplicaJoinsStartedView: a persisted replica that restarts
// in a view change for a view below the one the cluster runs in joins the
// running view as soon as it hears its primary's commit heartbeat. It used
// to ignore every message of the running view while electing, so it only
// got there by timing out view after view (each timeout doubled, up to 8x)
// until it passed the cluster's view; a liveness core of exactly a
// view-change quorum with two such replicas stalled for the whole liveness
// phase (seed 20647, scenarios/bug_liveness_core_lags_commit_20647.txt).
func TestElectingReplicaJoinsStartedView(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.Durability = Persisted
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	c := newTestCluster(t, cfg)
	r := func(i int) *Replica { return c.nodes[i].replica }
	tickUntil := func(what string, limit int, done func() bool) {
		t.Helper()
		for ticks := 0; !done(); ticks++ {
			if ticks == limit {
				t.Fatalf("%s: not within %d ticks\n%s", what, limit, c.status())
			}
			c.tick(1)
		}
	}
	cl := c.client(1)
	if err := cl.Submit(OperationUserMin, []byte("a")); err != nil {
		t.Fatal(err)
	}
	tickUntil("first request", 500, func() bool { return !cl.Busy() })

	// r2, cut off, starts a view change of its own (durably), and crashes
	// in it.
	c.group = []int{1, 1, 2}
	tickUntil("r2 electing", 2000, func() bool {
		return r(2).Status() == StatusViewChange && r(2).sb.viewDurable(r(2).View(), r(2).LogView())
	})
	electing := r(2).View()
	c.crash(2)

	// r0 and r1, cut off from each other, let r1 climb views alone; healed,
	// they start a view far above r2's.
	c.group = []int{1, 2, 3}
	tickUntil("r1 climbing", 20000, func() bool { return r(1).View() >= electing+8 })
	c.group = []int{0, 0, 0}
	tickUntil("view above r2's", 5000, func() bool {
		return r(0).Status() == StatusNormal && r(1).Status() == StatusNormal && r(0).View() == r(1).View()
	})
	view := r(0).View()
	if err := cl.Submit(OperationUserMin, []byte("b")); err != nil {
		t.Fatal(err)
	}
	tickUntil("request in the new view", 500, func() bool { return !cl.Busy() })
	commit := r(int(view % 3)).CommitNumber()

	c.start(2)
	if r(2).Status() != StatusViewChange || r(2).View() >= view {
		t.Fatalf("r2 restarted %s in view %d, want a view change below view %d", r(2).Status(), r(2).View(), view)
	}
	t.Logf("r2 restarted electing view %d; the cluster runs view %d at commit %d", r(2).View(), view, commit)
	// A few commit heartbeats and repair rounds; timing out to view
	// view+1 from r2's view takes many times this (each view-change
	// timeout is 60 ticks or more).
	limit := int(4*cfg.CommitHeartbeatTicks + 4*cfg.RepairTimeoutTicks)
	tickUntil("r2 joining the running view", limit, func() bool {
		return r(2).Status() == StatusNormal && r(2).View() == view && r(2).CommitNumber() == commit
	})
	if r(0).View() != view || r(1).View() != view {
		t.Fatalf("the cluster left view %d\n%s", view, c.status())
	}
	c.checkAgreement()
}
