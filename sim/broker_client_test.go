package sim

import "testing"

// TestBrokerClientStaysWithOverloadedPrimary: a 58 whose hint names the
// node asked is the primary's "not now" (its pipeline and request queue
// are full), not "not here": the client keeps asking that node for up to
// its call's timeout, then tries another. Moving on at once sent broker
// seed 16565's clients to a backup that redirected them back, or to a node
// cut off from them, where they waited out a whole (backed-off) timeout
// while the primary admitted one other client per round: client 3 never
// got its store-offset admitted (scenarios/bug_broker_overloaded_primary_client_moves_away_16565.txt).
func TestBrokerClientStaysWithOverloadedPrimary(t *testing.T) {
	const timeout = 100
	w := &brokerWorld{n: 3, groups: 1, params: &Params{RequestTimeoutTicks: timeout, ThinkTicksMax: 4}}
	c := newBrokerClient(w, 0, NewPRNG(1))
	c.call = &brokerCall{group: 0, timeout: timeout}
	c.target[0] = 1

	w.now = 1000
	c.retry(true, 1) // node 1: 58, "the primary is node 1"
	if c.target[0] != 1 {
		t.Fatalf("after an overloaded answer from the primary the client asks node %d, want 1 (the primary)", c.target[0])
	}
	w.now += timeout // still within the call's timeout of the first busy answer
	c.retry(true, 1)
	if c.target[0] != 1 {
		t.Fatalf("within its timeout the client moved on to node %d, want 1", c.target[0])
	}
	w.now++ // past it: the primary may be cut off from its backups
	c.retry(true, 1)
	if c.target[0] != 2 {
		t.Fatalf("past its timeout the client asks node %d, want 2 (the next node)", c.target[0])
	}

	// A redirect goes to the node named; an answer naming none, on.
	c.retry(true, 0)
	if c.target[0] != 0 {
		t.Fatalf("after a redirect to node 0 the client asks node %d", c.target[0])
	}
	c.retry(true, -1)
	if c.target[0] != 1 {
		t.Fatalf("after a 58 without a hint the client asks node %d, want 1", c.target[0])
	}
	// A 57 keeps the node.
	c.retry(false, 2)
	if c.target[0] != 1 {
		t.Fatalf("after a 57 the client asks node %d, want 1", c.target[0])
	}
	// A busy run restarts after another answer: node 1 busy again is
	// given a whole timeout again.
	w.now += 10 * timeout
	c.retry(true, 1)
	w.now += timeout
	c.retry(true, 1)
	if c.target[0] != 1 {
		t.Fatalf("a new run of overloaded answers moved the client on to node %d, want 1", c.target[0])
	}
}
