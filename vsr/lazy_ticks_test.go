package vsr

import (
	"fmt"
	"testing"
)

// lazyTicks drives a test cluster's replicas as a host of many groups
// does: a replica is ticked only on the tick TicksUntilDue names, and is
// brought up to date with SkipTicks before every other input (a message,
// an IO completion). digest sums every message the replicas send, in
// order, so that two runs of a seed that send the same messages have the
// same digest.
type lazyTicks struct {
	on      bool
	now     uint64
	at      []uint64
	digest  uint64
	ticked  uint64
	skipped uint64
	sent    uint64
}

func (l *lazyTicks) record(from, to int, m *Message) {
	l.sent++
	for _, v := range [...]uint64{m.Checksum.Lo, uint64(m.Command), m.View, m.Op, m.Commit, uint64(uint8(from))<<8 | uint64(uint8(to))} {
		l.digest = (l.digest ^ v) * 1099511628211
	}
}

func (l *lazyTicks) started(i int) {
	for len(l.at) <= i {
		l.at = append(l.at, 0)
	}
	l.at[i] = l.now
}

func (l *lazyTicks) report(to *lazyTicks) {
	if to != nil {
		on := to.on
		*to = *l
		to.on = on
	}
}

// tickReplica ticks replica i for the cluster's tick lazy.now: every tick,
// or, lazily, only when it is due.
func (c *testCluster) tickReplica(i int) {
	l := &c.lazy
	r := c.nodes[i].replica
	if !l.on {
		l.ticked++
		r.Tick()
		return
	}
	due := r.TicksUntilDue()
	if due == NoDeadline || l.now-l.at[i] < due {
		l.skipped++
		return
	}
	if l.now-l.at[i] > due {
		c.t.Fatalf("replica %d due at tick %d, ticked at %d", i, l.at[i]+due, l.now)
	}
	r.SkipTicks(l.now - 1 - l.at[i])
	l.at[i] = l.now
	l.ticked++
	r.Tick()
}

// catchUp brings replica i's timers to the cluster's tick before an input.
func (c *testCluster) catchUp(i int) {
	l := &c.lazy
	if !l.on || i < 0 || i >= len(c.nodes) || c.nodes[i].replica == nil {
		return
	}
	if n := l.now - l.at[i]; n > 0 {
		c.nodes[i].replica.SkipTicks(n)
		l.at[i] = l.now
	}
}

// TestSkipTicksIsTicking runs the randomized swarm's seeds twice, ticking
// every replica every tick and ticking each only when TicksUntilDue says
// it is due (SkipTicks before every other input): the replicas must send
// exactly the same messages in the same order (the digests agree), so a
// host that skips idle groups' ticks runs the same protocol as the
// simulator, which ticks every replica.
func TestSkipTicksIsTicking(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 6
	}
	var ticked, skipped uint64
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			var eager, lazy lazyTicks
			lazy.on = true
			runRandomizedTicks(t, seed, 0, &eager)
			eager.on = false
			runRandomizedTicks(t, seed, 0, &lazy)
			if eager.digest != lazy.digest || eager.sent != lazy.sent {
				t.Fatalf("ticking every tick sent %d messages (digest %x), ticking when due %d (digest %x)", eager.sent, eager.digest, lazy.sent, lazy.digest)
			}
			ticked += lazy.ticked
			skipped += lazy.skipped
		})
	}
	t.Logf("ticking when due: %d ticks run, %d skipped (%.0f%%)", ticked, skipped, 100*float64(skipped)/float64(max(ticked+skipped, 1)))
}

// TestTicksUntilDueIdle: an idle group's backups are never due while
// their primary's heartbeats arrive, and its primary is due once per
// commit heartbeat; a skip past a due tick panics.
func TestTicksUntilDueIdle(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 32
	c := newTestCluster(t, cfg)
	c.tick(300) // settle: a view, nothing in flight
	var primary *Replica
	for _, n := range c.nodes {
		if n.replica.Primary() {
			primary = n.replica
		}
	}
	if primary == nil {
		t.Fatalf("no primary:\n%s", c.status())
	}
	for i, n := range c.nodes {
		r := n.replica
		due := r.TicksUntilDue()
		switch {
		case r == primary && (due < 1 || due > cfg.CommitHeartbeatTicks):
			t.Fatalf("primary r%d due in %d ticks, want 1..%d", i, due, cfg.CommitHeartbeatTicks)
		case r != primary && due <= cfg.RepairTimeoutTicks:
			t.Fatalf("idle backup r%d due in %d ticks, want only its heartbeat timeout (%d)", i, due, cfg.NormalHeartbeatTimeoutTicks)
		}
	}
	due := primary.TicksUntilDue()
	defer func() {
		if recover() == nil {
			t.Fatalf("SkipTicks(%d) with the replica due in %d ticks did not panic", due, due)
		}
	}()
	primary.SkipTicks(due)
}

// TestCommitAnnouncement: a commit announcement is a Commit heartbeat: a
// backup that gets one from its primary restarts its heartbeat timeout and
// learns the commit number; one from a replica that is not the view's
// primary changes nothing.
func TestCommitAnnouncement(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 32
	c := newTestCluster(t, cfg)
	c.tick(300)
	var primary, backup *Replica
	for _, n := range c.nodes {
		if n.replica.Primary() {
			primary = n.replica
		} else {
			backup = n.replica
		}
	}
	if primary == nil || backup == nil {
		t.Fatalf("no primary:\n%s", c.status())
	}
	for range 50 {
		backup.Tick() // no heartbeat for 50 ticks
	}
	before := backup.TicksUntilDue()
	other := 3 - primary.Index() - backup.Index()
	backup.OnCommitAnnouncement(other, backup.View(), backup.CommitMax()+5, 0)
	if backup.TicksUntilDue() != before || backup.CommitMax() != primary.CommitMax() {
		t.Fatalf("an announcement of a replica that is not the primary changed the backup: due %d (was %d), commit max %d", backup.TicksUntilDue(), before, backup.CommitMax())
	}
	backup.OnCommitAnnouncement(primary.Index(), backup.View(), backup.CommitMax(), primary.CheckpointOp())
	if got := backup.TicksUntilDue(); got <= before || got != cfg.NormalHeartbeatTimeoutTicks {
		t.Fatalf("after its primary's announcement the backup is due in %d ticks (was %d), want %d", got, before, cfg.NormalHeartbeatTimeoutTicks)
	}
	if backup.Status() != StatusNormal || backup.View() != primary.View() {
		t.Fatalf("backup left the view: %s", c.status())
	}
}
