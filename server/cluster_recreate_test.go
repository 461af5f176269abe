package server_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/vsr"
)

// recordedFrame is a frame one replica sent another, kept for a replay.
type recordedFrame struct {
	from, to uint8
	frame    busFrame
}

// oldFrameRecorder keeps copies of the frames of one consensus group
// that the replicas send each other (memBus.tap).
type oldFrameRecorder struct {
	mu     sync.Mutex
	group  uint64
	frames []recordedFrame
}

// recordedFramesMax bounds what the recorder keeps.
const recordedFramesMax = 20000

func (r *oldFrameRecorder) tap(from, to uint8, frame busFrame) {
	if !frame.announcements {
		var m vsr.Message
		if m.Decode(frame.b) != nil || m.Group != r.group {
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.frames) < recordedFramesMax {
		r.frames = append(r.frames, recordedFrame{from, to, busFrame{frame.announcements, append([]byte(nil), frame.b...)}})
	}
}

// checkExactly fails unless partition p, polled from its primary, holds
// exactly the acknowledged messages, each at its offset.
func (c *testCluster) checkExactly(p uint32, acked []ackedMessage) {
	c.t.Helper()
	i := c.primary(p)
	got := c.pollAll(i, p)
	for _, a := range acked {
		if got[a.offset] != a.payload {
			c.t.Fatalf("replica %d p%d offset %d: %q, acknowledged %q", i, p, a.offset, got[a.offset], a.payload)
		}
	}
	if len(got) != len(acked) {
		c.t.Fatalf("replica %d p%d serves %d messages, %d were acknowledged: %v", i, p, len(got), len(acked), got)
	}
}

// waitAllApplied waits until every replica applied partition p's ops up
// to offset next, with nothing left uncommitted.
func (c *testCluster) waitAllApplied(p uint32, next uint64) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("every replica to apply p%d up to offset %d", p, next), func() bool {
		for i := range c.nodes {
			if st, ok := c.status(i, p); !ok || st.NextOffset != next || st.CommitNumber != st.OpNumber {
				return false
			}
		}
		return true
	})
}

// groupsOf returns every replica's consensus group id of partition p of
// stream 0 topic 0, and fails unless they agree.
func (c *testCluster) groupsOf(p uint32) uint64 {
	c.t.Helper()
	var g uint64
	for i := range c.nodes {
		st, ok := c.status(i, p)
		if !ok {
			c.t.Fatalf("replica %d has no partition %d", i, p)
		}
		if i > 0 && st.Group != g {
			c.t.Fatalf("p%d: replica %d has consensus group %d, replica 0 group %d", p, i, st.Group, g)
		}
		g = st.Group
	}
	return g
}

// TestClusterRecreatedTopicIgnoresTheOldIncarnation: a topic deleted and
// created again on every replica of a 3-replica cluster gets the same
// stream, topic and partition ids but a new consensus group on every
// replica, all agreeing. The old incarnation's messages (its prepares,
// commits, the start views and view change messages of a view change it
// went through, its commit announcements), recorded off the replica
// plane and delivered to every replica after the re-create, reach no
// group: each is dropped and counted unroutable, and the new group's
// view, log and data stay as they were (without the fix, the new group
// has the old group's id and adopts the old view). Then every replica
// restarts, and the re-created topic serves what it was sent, takes new
// sends, and holds none of the old incarnation's messages.
func TestClusterRecreatedTopicIgnoresTheOldIncarnation(t *testing.T) {
	// Persisted: every acknowledged op is in a quorum's prepare WAL, so
	// a restart of every replica keeps it (a replicated topic keeps only
	// what a synced flush covered).
	persisted := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	c := startCluster(t, 3, server.ClusterOptions{})
	c.createTopic(1, persisted)
	oldGroup := c.groupsOf(0)
	recorder := &oldFrameRecorder{group: oldGroup}
	tap := recorder.tap
	c.bus.tap.Store(&tap)

	// The old incarnation commits sends, and changes view once (its
	// primary stops), so that what was recorded holds start views of a
	// view above the new incarnation's. Every replica applies what was
	// acknowledged before a stop, and sends after a view change wait for
	// a settled primary (its whole log committed): a primary that commits
	// a previous view's op while a send of its own waits can pair the
	// op's reply with that send (the partition plane's request numbers
	// are each host's own), which this test is not about.
	var old []ackedMessage
	old = append(old, c.send(0, "old-a", 5)...)
	c.waitAllApplied(0, uint64(len(old)))
	first := c.primary(0)
	c.stop(first)
	c.settledPrimary(0)
	old = append(old, c.send(0, "old-b", 5)...)
	c.start(first)
	c.waitFor("the stopped replica to catch up", func() bool {
		st, ok := c.status(first, 0)
		leader, _ := c.status(c.primary(0), 0)
		return ok && st.Status == vsr.StatusNormal && st.CommitNumber >= leader.CommitNumber && st.NextOffset == uint64(len(old))
	})
	oldView := uint64(0)
	for i := range c.nodes {
		st, _ := c.status(i, 0)
		oldView = max(oldView, st.View)
	}
	if oldView == 0 {
		t.Fatalf("the old incarnation did not change view; %s", c.describe())
	}
	c.checkExactly(0, old)
	c.bus.tap.Store(nil)

	// Delete and re-create the topic on every replica: the same ids (the
	// lowest free), a new group, the same on every replica.
	for i, node := range c.nodes {
		if err := node.client.DeleteTopic(ctx(t), client.ID(0), client.ID(0)); err != nil {
			t.Fatalf("replica %d: delete topic: %v", i, err)
		}
		if _, err := node.client.CreateTopic(ctx(t), client.ID(0), "t", 1, persisted); err != nil {
			t.Fatalf("replica %d: create topic: %v", i, err)
		}
	}
	newGroup := c.groupsOf(0)
	if newGroup == oldGroup {
		t.Fatalf("the re-created topic's partition has the old consensus group %d", oldGroup)
	}
	t.Logf("old incarnation: group %d, up to view %d; new incarnation: group %d", oldGroup, oldView, newGroup)
	var acked []ackedMessage
	acked = append(acked, c.send(0, "new-a", 5)...)
	c.waitAllApplied(0, uint64(len(acked)))

	// Every recorded frame of the old incarnation is delivered to the
	// replica it was sent to, through the replica plane's receiving side.
	recorder.mu.Lock()
	frames := recorder.frames
	recorder.mu.Unlock()
	expected := make([]uint64, len(c.nodes))
	startViews := 0
	for _, f := range frames {
		if f.frame.announcements {
			decoded, err := group.DecodeAnnouncements(f.frame.b)
			if err != nil {
				t.Fatal(err)
			}
			for i := range decoded.Len() {
				if decoded.Entry(i).Group == oldGroup {
					expected[f.to]++
				}
			}
			continue
		}
		var m vsr.Message
		if err := m.Decode(f.frame.b); err != nil {
			t.Fatal(err)
		}
		if m.Command == vsr.CommandStartView && m.View > 0 {
			startViews++
		}
		expected[f.to]++
	}
	if startViews == 0 {
		t.Fatalf("no start view of the old incarnation's view change was recorded (%d frames)", len(frames))
	}
	before := make([]uint64, len(c.nodes))
	statusBefore := make([]string, len(c.nodes))
	for i, node := range c.nodes {
		before[i] = node.srv.ReplicaPlaneStats().Unroutable
		st, _ := c.status(i, 0)
		statusBefore[i] = replicaState(st)
	}
	for _, f := range frames {
		srv := c.nodes[f.to].srv
		if f.frame.announcements {
			srv.ReceiveAnnouncements(f.frame.b)
			continue
		}
		var m vsr.Message
		if err := m.Decode(f.frame.b); err != nil {
			t.Fatal(err)
		}
		srv.ReceiveReplica(&m)
	}
	// A status read runs on the partition's owning shard after every
	// step the deliveries queued there.
	for i, node := range c.nodes {
		st, _ := c.status(i, 0)
		if got := replicaState(st); got != statusBefore[i] {
			t.Fatalf("replica %d: the new incarnation's group went from %s to %s after the old incarnation's messages", i, statusBefore[i], got)
		}
		if got := node.srv.ReplicaPlaneStats().Unroutable - before[i]; got != expected[i] {
			t.Fatalf("replica %d: %d of the old incarnation's messages and announcements counted unroutable, %d delivered", i, got, expected[i])
		}
	}
	t.Logf("%d frames of the old incarnation (%d start views above view 0) delivered after the re-create, all dropped", len(frames), startViews)
	acked = append(acked, c.send(0, "new-b", 5)...)
	c.checkExactly(0, acked)

	// Every replica restarts: the re-created topic keeps its group and
	// what it was sent, takes sends, and never held an old message.
	for i := range c.nodes {
		c.stop(i)
	}
	for i := range c.nodes {
		c.start(i)
	}
	if g := c.groupsOf(0); g != newGroup {
		t.Fatalf("after the restart the partition's group is %d, it was %d", g, newGroup)
	}
	c.settledPrimary(0)
	acked = append(acked, c.send(0, "new-c", 5)...)
	c.checkExactly(0, acked)
	for _, a := range old {
		for _, b := range acked {
			if a.payload == b.payload {
				t.Fatalf("an old incarnation's message %q is served by the new one", a.payload)
			}
		}
	}
}

// replicaState sums up where a replica's group stands and what it holds.
func replicaState(st server.ReplicaStatus) string {
	return fmt.Sprintf("view %d status %v op %d commit %d checkpoint %d next offset %d fenced %q",
		st.View, st.Status, st.OpNumber, st.CommitNumber, st.CheckpointOp, st.NextOffset, st.Fenced)
}
