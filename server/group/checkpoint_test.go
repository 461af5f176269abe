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
