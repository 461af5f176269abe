package vsr

import "testing"

// TestRecoveryJoinsViewChangeOfLaterLogView: the replica whose log view a
// transferred checkpoint cut recovers while the primary of the latest
// view is cut off and the third replica is in a view change (seeds 39116
// and 14972: a replica stayed recovering, waiting for the word of a
// normal primary, while the replicas in a view change, which a recovering
// replica's vote is missing from, climbed views to the end of the run).
// The answer of the replica in the view change holds a log of a later log
// view than the recovering replica's own (log view 1 against 0), which
// holds every op committed with the recovering replica's acks: the
// recovering replica takes it and joins the view change, and the two
// replicas go on without the third.
func TestRecoveryJoinsViewChangeOfLaterLogView(t *testing.T) {
	c, acked := cutTransfer(t)
	r0, r1, r2 := c.nodes[0].replica, c.nodes[1].replica, c.nodes[2].replica
	if !r1.Primary() || r1.Status() != StatusNormal || r0.LogView() != r1.View() || r2.LogView() >= r0.LogView() {
		t.Fatalf("want r1 the normal primary with r0 in its log view, r2 of an older log view:\n%s", c.status())
	}
	// r1, the primary, is cut off: r0 leaves view 1 and r2 hears only r0.
	c.group = []int{1, 2, 1}
	for ticks := 0; (r2.Status() == StatusRecovering || r0.Status() != StatusNormal) && ticks < 5000; ticks++ {
		c.tick(1)
	}
	if r2.Status() == StatusRecovering || r0.Status() != StatusNormal || r2.Status() != StatusNormal || r0.View() != r2.View() {
		t.Fatalf("r0 and r2 did not start a view together (r2 recovering, r0 in a view change):\n%s", c.status())
	}
	if r2.logViewLost {
		t.Fatalf("r2 joined view %d but still marks its log view lost", r2.View())
	}
	// The two commit a new request without r1.
	if err := c.client(6).Submit(OperationUserMin, []byte("b")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; c.client(6).Busy() && ticks < 3000; ticks++ {
		c.tick(1)
	}
	if c.client(6).Busy() {
		t.Fatalf("no progress with r1 cut off after r2 recovered:\n%s", c.status())
	}
	if r2.OpNumber() <= acked {
		t.Logf("r2's log ends at op %d, acked op %d in log view 0 (lost)", r2.OpNumber(), acked)
	}
	c.group = []int{0, 0, 0}
	c.tick(2000)
	c.checkAgreement()
}
