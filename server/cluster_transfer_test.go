package server_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/vsr"
)

// fallBehind starts 3 replicas of one partition with a small journal
// window, sends, and stops a backup while its peers commit more ops than
// their journals hold (and checkpoint past its window). The lagging
// replica is stopped on return.
func fallBehind(t *testing.T) (c *testCluster, acked []ackedMessage, lagging int) {
	t.Helper()
	c = startCluster(t, 3, server.ClusterOptions{JournalSlots: 64, CheckpointEveryOps: 16})
	c.createTopic(1, client.Options{})
	for b := 0; b < 10; b++ {
		acked = append(acked, c.send(0, "a", 3)...)
	}
	leader := c.primary(0)
	lagging = (leader + 2) % 3
	c.stop(lagging)
	for b := 0; b < 200; b++ {
		acked = append(acked, c.send(0, "b", 3)...)
	}
	ls, _ := c.status(c.primary(0), 0)
	if ls.CheckpointOp <= 64 {
		t.Fatalf("the primary's checkpoint is at op %d, not past the lagging replica's journal window", ls.CheckpointOp)
	}
	return c, acked, lagging
}

// waitRepaired waits until replica i installed a checkpoint at least as
// recent as primary's, committed as far, holds as many messages and is
// not fenced (its segments hold the history the checkpoint names).
func (c *testCluster) waitRepaired(i int, primary server.ReplicaStatus) {
	c.t.Helper()
	c.waitFor("the lagging replica to install a peer's checkpoint and its segments", func() bool {
		st, ok := c.status(i, 0)
		return ok && st.Status == vsr.StatusNormal && st.CheckpointOp >= primary.CheckpointOp && st.CommitNumber >= primary.CommitNumber &&
			st.NextOffset >= primary.NextOffset && st.Fenced == ""
	})
}

// leadWith moves partition 0's lead to replica i: the primary stops (a
// view change elects the next view's primary) and comes back (start), until i
// leads. Primaries rotate by view, so at most a few rounds are needed.
func (c *testCluster) leadWith(i int, start func(int)) {
	c.t.Helper()
	for round := 0; round < 6; round++ {
		p := c.primary(0)
		if p == i {
			return
		}
		c.stop(p)
		next := c.primary(0)
		start(p)
		ls, _ := c.status(next, 0)
		c.waitFor("the stopped primary to catch up", func() bool {
			st, ok := c.status(p, 0)
			return ok && st.Status == vsr.StatusNormal && st.CommitNumber >= ls.CommitNumber
		})
	}
	c.t.Fatalf("replica %d does not lead after 6 view changes; %s", i, c.describe())
}

// TestClusterTransferRepairsAndServes: a replica that fell behind the
// journals restores a peer's checkpoint, fetches the segment files its
// own segments miss from a peer (segment state transfer: a manifest,
// chunks read from the peer's files and verified by checksum, staged and
// renamed into place), and then, as the primary of a later view, serves
// polls of every acknowledged message from its own segments, including
// those it never received as prepares.
func TestClusterTransferRepairsAndServes(t *testing.T) {
	c, acked, lagging := fallBehind(t)
	ls, _ := c.status(c.primary(0), 0)
	c.start(lagging)
	c.waitRepaired(lagging, ls)
	xfer, _ := c.nodes[lagging].srv.PartitionTransferStats(0, 0, 0)
	t.Logf("replica %d repaired: transfer %+v", lagging, xfer)
	if xfer.Installs == 0 {
		t.Fatalf("no segment transfer was installed: %+v", xfer)
	}
	for b := 0; b < 5; b++ {
		acked = append(acked, c.send(0, "c", 3)...)
	}
	c.leadWith(lagging, c.start)
	for b := 0; b < 5; b++ {
		acked = append(acked, c.send(0, "d", 3)...)
	}
	c.checkPoll(lagging, 0, acked)

	// A transfer a crash interrupted leaves its staging directory: the
	// next open removes it, and the partition opens as it was.
	c.stop(lagging)
	staging := filepath.Join(c.dirs[lagging], "streams/0/topics/0/partitions/0", storage.TransferStagingDir)
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staging, storage.SegmentLogName(0)), []byte("half a transfer"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.start(lagging)
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Fatalf("the staging directory is still there after the restart: %v", err)
	}
	c.waitCaughtUpTo(lagging)
	if st, _ := c.status(lagging, 0); st.Fenced != "" {
		t.Fatalf("the partition is fenced after a restart over a staging leftover: %+v", st)
	}
}

// waitCaughtUpTo waits until replica i runs normal and has applied what
// partition 0's primary committed.
func (c *testCluster) waitCaughtUpTo(i int) {
	c.t.Helper()
	ls, _ := c.status(c.primary(0), 0)
	c.waitFor("the replica to catch up", func() bool {
		st, ok := c.status(i, 0)
		return ok && st.Status == vsr.StatusNormal && st.CommitNumber >= ls.CommitNumber
	})
}

// TestClusterTransferRejectsACorruptChunk: the first chunk a peer serves
// is damaged on its way (a byte flipped after it was read from the file).
// The receiver's checksum of the file differs from the manifest's: the
// transfer starts over from another peer, never installs the damaged
// file, and the repaired replica serves every acknowledged message.
func TestClusterTransferRejectsACorruptChunk(t *testing.T) {
	c, acked, lagging := fallBehind(t)
	var corrupted atomic.Int32
	for i, node := range c.nodes {
		if node == nil || i == lagging {
			continue
		}
		node.srv.SetTransferServeHook(func(chunk []byte) {
			if len(chunk) > 0 && corrupted.CompareAndSwap(0, 1) {
				chunk[len(chunk)/2] ^= 0x40
			}
		})
	}
	ls, _ := c.status(c.primary(0), 0)
	c.start(lagging)
	c.waitRepaired(lagging, ls)
	xfer, _ := c.nodes[lagging].srv.PartitionTransferStats(0, 0, 0)
	t.Logf("replica %d repaired: transfer %+v, corrupted chunks %d", lagging, xfer, corrupted.Load())
	if corrupted.Load() != 1 {
		t.Fatalf("%d chunks corrupted, want 1", corrupted.Load())
	}
	if xfer.Installs == 0 || xfer.Restarts == 0 {
		t.Fatalf("the corrupt chunk was not rejected and refetched: %+v", xfer)
	}
	c.leadWith(lagging, c.start)
	c.checkPoll(lagging, 0, acked)
}
