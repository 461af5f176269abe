package group_test

import (
	"errors"
	"testing"

	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/vsr"
)

// TestFencedReplicasRepairEachOther: two replicas of a group are fenced
// for missing segment history while the third is down for good, and
// they repair each other. Replica 2, cut off while its peers moved past
// their journals, installs a checkpoint above its segments and is fenced;
// its peers refuse its transfers (RefuseServe) while the group
// commits on, so it applies ops with its history missing. Those flushes
// are withheld (the batches stay in the machine): a segment log never
// gets a hole, and the range the transfer asks for stays put. Then
// replica 1 restarts over segments that lost their tail below its own
// checkpoint, fenced too, and replica 0 goes down for good. Replica 1's files
// still hold the range replica 2 misses, so replica 1, fenced itself,
// serves it; replica 2 lifts its fence, flushes what it applied and serves
// replica 1 in turn. Before the fix replica 2 flushed above its hole
// (grouptest refuses such a flush, and the host failed), and a fenced
// replica refused every request, so the pair stayed fenced for good
// (scenarios/bug_broker_fenced_pair_segment_transfer_ticks6000_2845.txt).
func TestFencedReplicasRepairEachOther(t *testing.T) {
	cfg := testConfig(3, 0, vsr.Replicated)
	cfg.Replica.JournalSlots = 16
	cfg.Replica.CheckpointIntervalOps = 4
	cfg.Partition.MessagesRequiredToSave = 2
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	w.sendCommitted(2)
	c.Isolate(2, true)
	for range 40 {
		w.sendCommitted(2)
	}
	c.Nodes[0].Segments.RefuseServe = true
	c.Nodes[1].Segments.RefuseServe = true
	c.Isolate(2, false)
	c.Tick(100)
	n2 := c.Nodes[2]
	if err := n2.Host.Err(); !errors.Is(err, group.ErrMissingHistory) {
		t.Fatalf("replica 2 is not fenced for missing history: %v\n%s", err, c.Status())
	}
	// The group commits on; replica 2 applies every op, fenced.
	for range 3 {
		w.sendCommitted(2)
	}
	c.Tick(20)
	m2 := n2.Host.Machine()
	want2 := m2.FlushedEnd()
	if err := n2.Host.Err(); !errors.Is(err, group.ErrMissingHistory) {
		t.Fatalf("replica 2 applying fenced: %v\n%s", err, c.Status())
	}
	if n2.Segments.End() >= want2 || m2.NextOffset() <= want2 {
		t.Fatalf("replica 2: segments end at %d, flushed frontier %d, next offset %d: not fenced with ops applied above its hole\n%s",
			n2.Segments.End(), want2, m2.NextOffset(), c.Status())
	}
	t.Logf("replica 2 fenced: segments [0, %d), machine flushed to %d, applied to %d", n2.Segments.End(), want2, m2.NextOffset())

	// Replica 1's files lose their tail down to the end of replica 2's
	// wanted range, below its own checkpoint: it restarts fenced and
	// recovers (replicas 0 and 2 answer). Then replica 0 goes for good.
	c.Crash(1)
	c.Nodes[1].Segments.RefuseServe = false
	c.Nodes[1].Segments.LoseTail(want2)
	if err := c.Start(1); err != nil {
		t.Fatal(err)
	}
	n1 := c.Nodes[1]
	if err := n1.Host.Err(); !errors.Is(err, group.ErrMissingHistory) {
		t.Fatalf("replica 1 is not fenced for missing history after losing its tail: %v\n%s", err, c.Status())
	}
	t.Logf("replica 1 fenced: segments [0, %d), machine flushed to %d", n1.Segments.End(), n1.Host.Machine().FlushedEnd())
	// Replica 0 still refuses: each fenced replica can only be repaired by
	// the other.
	c.Tick(50)
	c.Crash(0)

	c.Tick(600)
	for _, i := range []int{1, 2} {
		if err := c.Nodes[i].Host.Err(); err != nil {
			t.Fatalf("replica %d still fenced: %v (transfer %+v)\n%s", i, err, c.Nodes[i].Host.TransferStats(), c.Status())
		}
		if c.Nodes[i].Host.TransferStats().Installs == 0 {
			t.Fatalf("replica %d installed no transfer\n%s", i, c.Status())
		}
	}
	w.sendCommitted(2)
	c.Tick(50)
	for _, i := range []int{1, 2} {
		w.checkAcked(i)
	}
}
