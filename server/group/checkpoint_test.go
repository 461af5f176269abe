package group_test

import (
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// TestPowerLossOfOneReplicaKeepsItsCheckpointBehindSyncedSegments: a
// replicated topic that flushes every message never syncs its segments on
// a flush, so a power loss takes the segment data since the last sync. A
// checkpoint must therefore name only a segment frontier that was synced
// (the durability seed: "a synced segment and offset frontier"), leaving
// the ops above it in the replicas' journals. Each replica in turn loses
// power and restarts (never more than f at once): it restores its own
// checkpoint over the segments that survived, gets the ops above it back
// from its peers by the recovery protocol, and ends with every
// acknowledged message, never fenced. With the group's checkpoints left
// to vsr (the whole machine at an interval, before the fix: the config
// below names no CheckpointEveryOps), the checkpoint named flushed
// messages whose segments were never synced, and every restarted replica
// was fenced (scenarios/bug_broker_checkpoint_before_segment_sync_1495.txt).
func TestPowerLossOfOneReplicaKeepsItsCheckpointBehindSyncedSegments(t *testing.T) {
	cfg := testConfig(3, 0, vsr.Replicated)
	cfg.Replica.JournalSlots = 32
	cfg.Replica.CheckpointIntervalOps = 4
	cfg.Partition.MessagesRequiredToSave = 1 // flush every message
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	for round := range 3 {
		for range 20 {
			w.sendCommitted(2)
		}
		node := (round + 1) % 3
		if r := c.Nodes[node].Host.Replica(); r.CheckpointOp() == 0 {
			t.Fatalf("round %d: replica %d took no checkpoint\n%s", round, node, c.Status())
		}
		c.PowerLoss(node)
		if err := c.Start(node); err != nil {
			t.Fatal(err)
		}
		c.Tick(200)
		for i, n := range c.Nodes {
			if err := n.Host.Err(); err != nil {
				t.Fatalf("round %d: replica %d fenced after replica %d lost power: %v\n%s", round, i, node, err, c.Status())
			}
		}
		r := c.Nodes[node].Host.Replica()
		if r.Status() != vsr.StatusNormal || r.CommitNumber() != c.Nodes[c.Primary()].Host.Replica().CommitNumber() {
			t.Fatalf("round %d: replica %d did not catch up\n%s", round, node, c.Status())
		}
		w.checkAcked(node)
	}
	for i := range c.Nodes {
		w.checkAcked(i)
	}
}

// TestJournalBytesForceACheckpoint: the host spaces checkpoints by ops,
// but a journal full of large prepares reaches WALBytesMax long before
// CheckpointEveryOps ops; the replica then holds requests back, no op
// commits, and a host that waited for ops would wait forever. The replica
// says it wants a checkpoint (vsr.Replica.CheckpointWanted) once its
// journal holds half of WALBytesMax, and the host flushes, syncs and
// takes one: sends keep committing.
func TestJournalBytesForceACheckpoint(t *testing.T) {
	cfg := testConfig(3, 0, vsr.Replicated)
	cfg.Replica.MessageSizeMax = 64 << 10
	cfg.Replica.WALBytesMax = 256 << 10
	cfg.CheckpointEveryOps = 30
	cfg.Partition.MessagesRequiredToSave = 100_000
	cfg.Partition.SizeOfMessagesRequiredToSaveBytes = 1 << 40
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	payload := make([]byte, 20<<10)
	for i := range 40 {
		var bb wire.BatchBuilder
		if err := bb.Add(wire.MessageID{Low: uint64(i + 1)}, payload, nil, 1); err != nil {
			t.Fatal(err)
		}
		b, err := bb.Finish()
		if err != nil {
			t.Fatal(err)
		}
		body := partition.EncodeSendMessages(partition.Envelope{UserID: 1}, append([]byte(nil), b...))
		committed := false
		for attempt := 0; attempt < 50 && !committed; attempt++ {
			p := c.Primary()
			if p < 0 {
				c.Tick(5)
				continue
			}
			answers := w.submit(p, partition.OperationSendMessages, body)
			if len(answers) == 1 && answers[0].Code == wire.ErrorCodeOK {
				committed = true
				break
			}
			c.Tick(5)
		}
		if !committed {
			t.Fatalf("send %d never committed: the journal's bytes stalled the group\n%s", i, c.Status())
		}
	}
	for i, n := range c.Nodes {
		if n.Host.Replica().CheckpointOp() == 0 || n.Segments.ForcedFlushes == 0 {
			t.Fatalf("replica %d: checkpoint %d after %d forced flushes", i, n.Host.Replica().CheckpointOp(), n.Segments.ForcedFlushes)
		}
	}
}

// TestSegmentStateTransferRepairsAReplicaTooFarBehind: a replica cut off
// while its peers commit far past their journals' reach catches up by
// installing a peer's checkpoint, a descriptor that names flushed messages
// its own segments never got. It is fenced (missing history, never served
// as a shorter log) and repairs its segments from a peer by segment state
// transfer: a manifest of the peer's segment files, chunks read from
// them, staged, verified against the manifest's checksum and put in
// place; the fence then lifts and it holds every acknowledged message.
// A peer whose files differ (CorruptServed) fails the checksum, and the
// transfer starts over from the other peer. A crash in the middle of a
// transfer loses what was staged; the restarted replica restores its
// checkpoint, finds the history missing again and starts over. A peer
// that does not answer is replaced by the next on a timeout. Before
// segment state transfer the replica stayed fenced for good.
func TestSegmentStateTransferRepairsAReplicaTooFarBehind(t *testing.T) {
	for _, variant := range []string{"plain", "corrupt", "crash", "peer-down"} {
		corrupt := variant == "corrupt"
		cfg := testConfig(3, 0, vsr.Replicated)
		cfg.Replica.JournalSlots = 16
		cfg.Replica.CheckpointIntervalOps = 4
		cfg.Partition.MessagesRequiredToSave = 2
		c := newCluster(t, cfg, false)
		w := newWorkload(t, c)
		w.sendCommitted(2)
		c.Isolate(2, true)
		for range 60 {
			w.sendCommitted(2)
		}
		if p := c.Primary(); p == 2 || c.Nodes[p].Host.Replica().CheckpointOp() < 40 {
			t.Fatalf("the peers did not move on\n%s", c.Status())
		}
		if corrupt {
			c.Nodes[1].Segments.CorruptServed = true // the first peer replica 2 asks
		}
		if variant == "peer-down" {
			c.Crash(1) // the first peer replica 2 asks never answers
		}
		c.Isolate(2, false)
		n := c.Nodes[2]
		if variant == "crash" {
			// Tick and deliver a few messages at a time, to stop inside
			// the transfer (Tick delivers until the cluster is quiet).
			for range 4000 {
				for _, node := range c.Nodes {
					node.Host.Tick()
				}
				c.Deliver(3)
				if n.Host.TransferStats().Active && c.Nodes[1].Segments.ChunksServed > 2 {
					break
				}
			}
			if !n.Host.TransferStats().Active {
				t.Fatalf("no transfer in flight to crash\n%s", c.Status())
			}
			c.Crash(2)
			if err := c.Start(2); err != nil {
				t.Fatal(err)
			}
		}
		c.Tick(400)
		if err := n.Host.Err(); err != nil {
			t.Fatalf("%s: replica 2 still fenced: %v (transfer %+v)\n%s", variant, err, n.Host.TransferStats(), c.Status())
		}
		stats := n.Host.TransferStats()
		if n.Segments.Installs == 0 || stats.Installs == 0 {
			t.Fatalf("%s: no segment transfer installed (%+v)\n%s", variant, stats, c.Status())
		}
		if corrupt && (stats.Restarts == 0 || c.Nodes[0].Segments.ChunksServed == 0) {
			t.Fatalf("a corrupted chunk was not caught: %+v, chunks served by replica 0: %d", stats, c.Nodes[0].Segments.ChunksServed)
		}
		t.Logf("%s: %d installs, %d restarts, chunks served %d/%d/%d, checkpoint %d",
			variant, stats.Installs, stats.Restarts, c.Nodes[0].Segments.ChunksServed, c.Nodes[1].Segments.ChunksServed,
			n.Segments.ChunksServed, n.Host.Replica().CheckpointOp())
		w.sendCommitted(2)
		c.Tick(50)
		if r := n.Host.Replica(); r.CommitNumber() != c.Nodes[c.Primary()].Host.Replica().CommitNumber() {
			t.Fatalf("replica 2 did not catch up\n%s", c.Status())
		}
		w.checkAcked(2)
	}
}
