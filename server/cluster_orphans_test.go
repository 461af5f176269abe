package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/vsr"
)

// shutdownFirst shuts replica i down before its client's connection
// closes: a connection closed by a shutdown keeps its session, so the
// metadata journal ends with the last operation the test committed (a
// logout committed by the close would come after it).
func (c *testCluster) shutdownFirst(i int) {
	c.t.Helper()
	node := c.nodes[i]
	c.nodes[i] = nil
	c.bus.nodes[i].srv.Store(nil)
	sctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	if err := node.srv.Shutdown(sctx); err != nil {
		c.t.Errorf("replica %d: shutdown: %v", i, err)
	}
	_ = node.client.Close()
}

// isolate cuts every link to and from replica i (none when i < 0).
func (c *testCluster) isolate(i int) {
	if i < 0 {
		c.bus.cut.Store(nil)
		return
	}
	r := uint8(i)
	cut := func(from, to uint8) bool { return from != to && (from == r || to == r) }
	c.bus.cut.Store(&cut)
}

// TestClusterOrphanedPartitionRecreatedNeverVotesFresh: a replica whose
// metadata lost an acknowledged CreateTopic (the last journal entry
// damaged) moves the topic's directory aside at boot, and the topic,
// created on it again as on every server, gets the same partition and
// consensus group ids. That replica acknowledged the group's ops (its
// superblocks.sb slot holds the group's superblock): its new partition
// must open as a replica that lost its memory, which neither acks nor
// votes before the recovery protocol gave it a view and a log, never as
// a fresh member of view 0 with an empty log. Otherwise it and a backup
// that missed the ops form a view-change quorum without them, and
// acknowledged messages are lost (without the fix: the poll after the
// heal finds none of them).
func TestClusterOrphanedPartitionRecreatedNeverVotesFresh(t *testing.T) {
	for _, durability := range []string{client.DurabilityPersisted, "replicated"} {
		t.Run(durability, func(t *testing.T) {
			testOrphanedPartitionRecreated(t, client.Options{}.With(client.OptionDurability, client.StringValue(durability)))
		})
	}
}

func testOrphanedPartitionRecreated(t *testing.T, options client.Options) {
	c := startClusterOn(t, 3, server.ClusterOptions{}, nil, []string{"STRATA_PARTITION_WAL_BYTES_MAX=1 MiB"})
	c.createTopic(1, options)
	primary := c.primary(0)
	orphaned, behind := (primary+1)%3, (primary+2)%3
	st, _ := c.status(orphaned, 0)
	group := st.Group

	// The messages are acknowledged by the primary and the replica whose
	// metadata will lose the topic: the third replica is cut off.
	c.isolate(behind)
	acked := c.send(0, "a", 20)
	acked = append(acked, c.send(0, "b", 20)...)

	// The replica's metadata forgets the topic; the primary is cut off,
	// holding the messages, and the replica that missed them is back.
	c.shutdownFirst(orphaned)
	damageLastEntry(t, c.dirs[orphaned], 1024, wire.OpCreateTopic)
	c.isolate(primary)
	c.start(orphaned)
	node := c.nodes[orphaned]
	if !strings.Contains(node.logs.String(), "moved aside, not deleted") {
		t.Fatalf("replica %d: the topic directory was not moved aside:\n%s", orphaned, node.logs.String())
	}
	if _, err := node.client.CreateTopic(ctx(t), client.ID(0), "t", 1, options); err != nil {
		t.Fatalf("replica %d: create the topic again: %v", orphaned, err)
	}
	st, ok := c.status(orphaned, 0)
	if !ok || st.Group != group {
		t.Fatalf("replica %d: the re-created partition %+v (found %v), want group %d", orphaned, st, ok, group)
	}
	// Its only reachable peer is not the primary of the latest view: it
	// cannot have recovered, and must not take part.
	if st.Status != vsr.StatusRecovering || st.Fenced == "" {
		t.Errorf("replica %d: the re-created partition of group %d opened as %+v: a replica that acknowledged the group's ops "+
			"takes part with an empty log", orphaned, group, st)
		// What follows: it and the replica that missed the messages make
		// a view without them, and serve it.
		serving := -1
		c.waitFor("a primary among the replicas the old primary is cut off from", func() bool {
			for _, i := range []int{orphaned, behind} {
				if st, ok := c.status(i, 0); ok && st.Serving {
					serving = i
					return true
				}
			}
			return false
		})
		c.checkPoll(serving, 0, acked)
	}

	c.isolate(-1)
	leader := c.primary(0)
	c.checkPoll(leader, 0, acked)
	c.waitCaughtUp(orphaned, 0)
	c.waitCaughtUp(behind, 0)
	// The re-created replica holds the messages again: with the primary
	// gone, it and the other backup serve them.
	c.stop(leader)
	c.checkPoll(c.primary(0), 0, acked)
}
