package vsr

import "testing"

// TestAbdicatingReplicaNeverLeads: a replica whose host cannot serve its
// state machine (a fenced partition) calls Abdicate after every input.
// As the primary of view 0 it hands the view on at once; the next view's
// primary leads, requests commit, and the abdicating replica goes on
// acknowledging and applying them as a backup. When the view of its turn
// comes again (its new primary crashed) it hands that one on too, and
// never runs normal as a primary.
func TestAbdicatingReplicaNeverLeads(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	c := newTestCluster(t, cfg)
	r := func(i int) *Replica { return c.nodes[i].replica }
	led := false
	abdicate := func() {
		if n := c.nodes[0]; n.replica != nil {
			led = led || n.replica.Primary()
			n.replica.Abdicate()
		}
	}
	step := func() {
		abdicate()
		c.tick(1)
	}
	tickUntil := func(what string, limit int, done func() bool) {
		t.Helper()
		for ticks := 0; !done(); ticks++ {
			if ticks == limit {
				t.Fatalf("%s: not within %d ticks\n%s", what, limit, c.status())
			}
			step()
		}
	}
	// A backup that abdicates changes no view (it would only pass a view
	// of its own on).
	r(1).SetAbdicating(true)
	if r(1).Abdications() != 0 || r(1).View() != 0 {
		t.Fatalf("a backup abdicated: view %d", r(1).View())
	}
	r(1).SetAbdicating(false)
	// Replica 0 leads view 0 from the start: its first input hands it on.
	abdicate()
	led = false
	cl := c.client(1)
	if err := cl.Submit(OperationUserMin, []byte("a")); err != nil {
		t.Fatal(err)
	}
	tickUntil("a request with replica 0 abdicating", 3000, func() bool { return !cl.Busy() })
	if r(0).Abdications() == 0 || r(0).View() == 0 {
		t.Fatalf("replica 0 did not hand view 0 on: view %d, %d abdications", r(0).View(), r(0).Abdications())
	}
	leader := int(PrimaryIndex(r(1).View(), 0, 3))
	tickUntil("replica 0 applies the request", 1000, func() bool { return r(0).CommitNumber() == r(leader).CommitNumber() })

	// The leader crashes: the next views cycle through replica 0's turn,
	// which it hands on again; the third replica leads with its vote.
	c.crash(leader)
	before := r(0).Abdications()
	if err := cl.Submit(OperationUserMin, []byte("b")); err != nil {
		t.Fatal(err)
	}
	tickUntil("a request after the leader's crash", 20000, func() bool { return !cl.Busy() })
	// The crashed leader comes back and the new one crashes: the next
	// view is replica 0's turn ((view + 0) % 3) once more.
	c.start(leader)
	second := int(PrimaryIndex(r(0).View(), 0, 3))
	tickUntil("the old leader recovers", 5000, func() bool {
		return r(leader).Status() == StatusNormal && r(leader).CommitNumber() == r(second).CommitNumber()
	})
	c.crash(second)
	if err := cl.Submit(OperationUserMin, []byte("c")); err != nil {
		t.Fatal(err)
	}
	tickUntil("a request after the second leader's crash", 20000, func() bool { return !cl.Busy() })
	if r(0).Abdications() == before {
		t.Fatalf("replica 0 did not hand its second turn on: view %d", r(0).View())
	}
	t.Logf("views: replica 0 in %d, %d abdications (%d after the crash)", r(0).View(), r(0).Abdications(), r(0).Abdications()-before)
	if led {
		t.Fatal("the abdicating replica ran normal as a primary")
	}
	c.checkAgreement()
}
