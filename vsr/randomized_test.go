package vsr

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// deliverRandom delivers up to count queued messages in random order,
// dropping dropPct percent of them, running IO in between.
func (c *testCluster) deliverRandom(rng *rand.Rand, dropPct, count int) {
	for range count {
		// IO completes in order but lags behind the messages, so that a
		// crash can catch writes that completed but were never synced.
		for k := rng.IntN(3); k > 0 && len(c.io) > 0; k-- {
			op := c.io[0]
			c.io = c.io[1:]
			c.catchUp(op.owner)
			op.f()
		}
		if len(c.queue) == 0 {
			continue
		}
		i := rng.IntN(min(len(c.queue), 8))
		e := c.queue[i]
		c.queue = append(c.queue[:i], c.queue[i+1:]...)
		if rng.IntN(100) < dropPct {
			continue
		}
		c.deliverEnvelope(e, false)
	}
}

// TestRandomizedSafety is a small seeded swarm over the in-package cluster:
// random loss, reordering, partitions, crashes and restarts (power loss in
// persisted mode), then a quiet phase in which everything must converge.
// It checks commit-prefix agreement, exactly-once application, durability
// of acknowledged operations, and liveness.
func TestRandomizedSafety(t *testing.T) {
	seeds := 25
	if testing.Short() {
		seeds = 10
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runRandomized(t, seed, 0) })
	}
}

func runRandomized(t *testing.T, seed uint64, bugs BugSet) (violation string) {
	return runRandomizedTicks(t, seed, bugs, nil)
}

// runRandomizedTicks is runRandomized; with lazy set, its replicas are
// ticked only when due (lazy_ticks_test.go) and *lazy gets the run's
// digest.
func runRandomizedTicks(t *testing.T, seed uint64, bugs BugSet, lazy *lazyTicks) (violation string) {
	if bugs != 0 {
		// A planted bug may trip an assertion before a checker sees it:
		// that counts as found.
		defer catchAssertion(&violation)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := 1 + rng.IntN(5)
	cfg := DefaultConfig(7, uint8(n), 0)
	cfg.JournalSlots = 32
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 16 << 10
	cfg.WALBytesMax = 4 << 20
	cfg.Bugs = bugs
	if rng.IntN(2) == 0 {
		cfg.Durability = Persisted
	}
	c := newTestClusterTicks(t, cfg, lazy)
	defer c.lazy.report(lazy)
	dropPct := rng.IntN(20)
	rq, vq := ReplicationQuorum(n), ViewChangeQuorum(n)
	upMin := max(rq, vq)
	inflight := map[uint64]string{}
	var acked []string
	next := map[uint64]int{}
	clientIDs := []uint64{1, 2, 3}
	for _, id := range clientIDs {
		c.client(id)
	}
	collect := func() {
		for _, id := range clientIDs {
			cl := c.clients[id]
			if body, ok := inflight[id]; ok && !cl.Busy() {
				if !cl.Evicted() {
					acked = append(acked, body)
				}
				delete(inflight, id)
			}
		}
	}
	// down counts replicas that are crashed or still rebuilding lost state.
	// Under replicated durability a replica that recovered only the headers
	// of its log counts until it holds every prepare above its commit again
	// (as in sim's fault model): it may have acked those ops before it lost
	// them, so it must never nack them, and were the last holders of a
	// committed op to crash meanwhile, more than f replicas would have lost
	// it.
	down := func() int {
		k := 0
		for _, node := range c.nodes {
			r := node.replica
			if node.down || r.Status() == StatusRecovering ||
				(cfg.Durability == Replicated && (r.Status() != StatusNormal || r.CommitNumber() < r.CommitMax() || !r.HoldsLog())) {
				k++
			}
		}
		return k
	}
	for step := range 2500 {
		for _, id := range clientIDs {
			cl := c.clients[id]
			if !cl.Busy() && !cl.Evicted() && rng.IntN(10) == 0 {
				body := fmt.Sprintf("c%d-%d", id, next[id])
				next[id]++
				if cl.Submit(OperationUserMin, []byte(body)) == nil {
					inflight[id] = body
				}
			}
		}
		c.deliverRandom(rng, dropPct, 1+rng.IntN(20))
		if step%2 == 0 {
			c.lazy.now++
			for i, node := range c.nodes {
				if !node.down {
					c.tickReplica(i)
				}
			}
			for _, id := range clientIDs {
				c.clients[id].Tick()
			}
		}
		collect()
		switch x := rng.IntN(1000); {
		case x < 4 && n-down()-1 >= upMin && (n > 1 || cfg.Durability == Persisted):
			i := rng.IntN(n)
			if !c.nodes[i].down {
				c.crash(i)
			}
		case x < 6 && cfg.Durability == Persisted:
			for i := range n {
				if !c.nodes[i].down {
					c.crash(i)
				}
			}
		case x < 30:
			for i, node := range c.nodes {
				if node.down && rng.IntN(4) == 0 {
					c.start(i)
				}
			}
		case x < 33 && n > 2:
			for i := range c.group {
				c.group[i] = 1 + rng.IntN(2)
			}
		case x < 40:
			for i := range c.group {
				c.group[i] = 0
			}
		}
		if v := c.violation(acked, false); v != "" {
			return report(t, bugs, seed, v)
		}
	}
	// Liveness: heal everything and let the cluster converge.
	for i := range c.group {
		c.group[i] = 0
	}
	for i, node := range c.nodes {
		if node.down {
			c.start(i)
		}
	}
	for range 4000 {
		c.tick(1)
		collect()
		if len(inflight) == 0 && c.converged() {
			break
		}
	}
	if v := c.violation(acked, true); v != "" {
		if debugHook != nil {
			debugHook(c)
		}
		return report(t, bugs, seed, v+"\n"+c.status())
	}
	if len(inflight) != 0 || !c.converged() {
		if debugHook != nil {
			debugHook(c)
		}
		return report(t, bugs, seed, fmt.Sprintf("liveness: %d requests outstanding, status:\n%s", len(inflight), c.status()))
	}
	return ""
}

var debugHook func(*testCluster)

// catchAssertion turns a panic of the replica (a broken invariant) into
// the violation *v; a test that plants a bug defers it.
func catchAssertion(v *string) {
	if p := recover(); p != nil {
		*v = fmt.Sprintf("assertion: %v", p)
	}
}

func report(t *testing.T, bugs BugSet, seed uint64, v string) string {
	if bugs == 0 {
		t.Fatalf("seed=%d: %s", seed, v)
	}
	return v
}

// converged reports whether every replica is normal with the same commit.
func (c *testCluster) converged() bool {
	first := c.nodes[0].replica
	for _, node := range c.nodes {
		r := node.replica
		if r.Status() != StatusNormal || r.View() != first.View() || r.CommitNumber() != first.CommitNumber() || r.CommitNumber() != r.OpNumber() {
			return false
		}
	}
	return true
}

// violation checks commit-prefix agreement, exactly-once application and
// (when final) that every acknowledged operation was applied everywhere.
func (c *testCluster) violation(acked []string, final bool) string {
	for i, a := range c.nodes {
		seen := map[string]bool{}
		for _, e := range a.sm.entries {
			if seen[e] {
				return fmt.Sprintf("r%d applied %s twice", i, e)
			}
			seen[e] = true
		}
		for _, b := range c.nodes[i+1:] {
			k := min(len(a.sm.entries), len(b.sm.entries))
			if !slices.Equal(a.sm.entries[:k], b.sm.entries[:k]) {
				return fmt.Sprintf("commit prefixes diverge:\n%v\n%v", a.sm.entries, b.sm.entries)
			}
		}
		if final {
			for _, body := range acked {
				if !seen[body] {
					return fmt.Sprintf("r%d lost acknowledged %s", i, body)
				}
			}
		}
	}
	return ""
}
