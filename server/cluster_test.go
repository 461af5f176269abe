package server_test

import (
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/vsr"
)

// TestClusterReplicatesAcrossRestartAndViewChange runs three real servers
// whose partition groups span all three over the in-memory replica plane.
// Through real sockets: sends are acknowledged by each partition's
// primary (primaries spread by group) and polled back; a replica is
// stopped and sends go on (a view change moves the primary of its group);
// it comes back over the same data directory, runs the recovery protocol
// and catches up from its peers; then the primary of another group is
// stopped, the returned replica becomes that group's primary, and a poll
// from it returns every acknowledged message, including those sent while
// it was down.
func TestClusterReplicatesAcrossRestartAndViewChange(t *testing.T) {
	const partitions = 3
	// Small flush thresholds and checkpoint interval: the stopped replica
	// restarts from a descriptor checkpoint of its own, with segments
	// beyond it that it cuts back before the recovered ops are applied
	// again.
	c := startCluster(t, 3, server.ClusterOptions{CheckpointEveryOps: 4})
	c.createTopic(partitions, client.Options{}.With(client.OptionMessagesRequiredToSave, client.Uint32Value(10)))

	acked := make([][]ackedMessage, partitions)
	sendRound := func(tag string, batches int) {
		for b := 0; b < batches; b++ {
			for p := uint32(0); p < partitions; p++ {
				acked[p] = append(acked[p], c.send(p, tag, 5)...)
			}
		}
	}
	checkAll := func() {
		for p := uint32(0); p < partitions; p++ {
			c.checkPoll(c.primary(p), p, acked[p])
		}
	}

	// Primaries are spread by group: in view 0 partition p's primary is
	// replica (0 + group) % 3, and the first topic's partitions are the
	// metadata's first consensus groups, 0, 1, 2.
	leaders := map[int]bool{}
	for p := uint32(0); p < partitions; p++ {
		i := c.primary(p)
		st, _ := c.status(i, p)
		if st.Group != uint64(p) {
			t.Fatalf("p%d is of consensus group %d, want %d", p, st.Group, p)
		}
		if want := vsr.PrimaryIndex(st.View, st.Group, 3); uint8(i) != want {
			t.Fatalf("p%d served by replica %d in view %d, the view's primary is %d", p, i, st.View, want)
		}
		leaders[i] = true
	}
	t.Logf("primaries of %d partitions on %d replicas", partitions, len(leaders))

	sendRound("a", 10)
	checkAll()
	// A backup answers 58 TransientNotAccepted (not primary: retry
	// anywhere) to a send and to a poll, never stale applied state.
	backup := (c.primary(0) + 1) % 3
	if _, err := c.nodes[backup].client.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0),
		[]client.Message{{Payload: []byte("x")}}); client.CodeOf(err) != wire.ErrTransientNotAccepted {
		t.Fatalf("send to backup %d: %v, want 58", backup, err)
	}
	if _, err := c.nodes[backup].client.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(0), Count: 10}); client.CodeOf(err) != wire.ErrTransientNotAccepted {
		t.Fatalf("poll from backup %d: %v, want 58", backup, err)
	}
	// Every replica applied every acknowledged op (the primary's commit
	// reaches the backups with the next heartbeat).
	for p := uint32(0); p < partitions; p++ {
		want := uint64(len(acked[p]))
		c.waitFor("every replica to apply round a", func() bool {
			for i := range c.nodes {
				if st, ok := c.status(i, p); !ok || st.NextOffset < want {
					return false
				}
			}
			return true
		})
	}

	// Replica 1 stops: partition 1's group changes view; sends go on.
	for p := uint32(0); p < partitions; p++ {
		if st, _ := c.status(1, p); st.CheckpointOp == 0 {
			t.Fatalf("replica 1 p%d took no checkpoint before it stops: %+v", p, st)
		}
	}
	c.stop(1)
	sendRound("b", 10)
	checkAll()
	// A consumer offset stored meanwhile is an operation of the group too.
	consumer := client.IndividualConsumer(client.ID(7))
	for p := uint32(0); p < partitions; p++ {
		if err := c.nodes[c.primary(p)].client.StoreConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), p, 42+uint64(p)); err != nil {
			t.Fatalf("store offset p%d: %v", p, err)
		}
	}

	// Replica 1 comes back over the same data directory and catches up:
	// its groups recover from their peers and apply everything.
	c.start(1)
	for p := uint32(0); p < partitions; p++ {
		leader := c.primary(p)
		ls, _ := c.status(leader, p)
		c.waitFor("replica 1 to catch up", func() bool {
			st, ok := c.status(1, p)
			return ok && st.Status == vsr.StatusNormal && st.CommitNumber >= ls.CommitNumber && st.NextOffset >= ls.NextOffset
		})
		st, _ := c.status(1, p)
		t.Logf("replica 1 p%d after restart: %+v (primary %d: commit %d, next offset %d)", p, st, leader, ls.CommitNumber, ls.NextOffset)
		if st.NextOffset != ls.NextOffset {
			t.Fatalf("replica 1 p%d holds messages up to offset %d after the replay, the primary %d: ops applied twice", p, st.NextOffset, ls.NextOffset)
		}
	}
	sendRound("c", 5)
	checkAll()

	// Replica 0 stops: the groups it led change view, and replica 1 leads
	// partition 0 in view 1 ((1 + 0) % 3).
	c.stop(0)
	sendRound("d", 5)
	checkAll()
	led := 0
	for p := uint32(0); p < partitions; p++ {
		if c.primary(p) != 1 {
			continue
		}
		led++
		c.checkPoll(1, p, acked[p])
		got, err := c.nodes[1].client.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), p)
		if err != nil || got.StoredOffset != 42+uint64(p) {
			t.Fatalf("replica 1 p%d: stored offset %+v, %v; want %d", p, got, err, 42+p)
		}
	}
	if led == 0 {
		t.Fatalf("the restarted replica leads no group after the view change; %s", c.describe())
	}
}

// TestClusterFallsBehindTheJournal: a replica stopped while its peers
// commit more ops than their journals hold (a small window here) cannot
// get its prepares back and catches up by checkpoint transfer: it installs
// a peer's descriptor checkpoint, which names messages its segments never
// received. It is fenced (never served as a shorter healthy log) until
// segment state transfer brings the segment files from a peer; then the
// fence lifts, it holds every message, and it commits with the group
// again.
func TestClusterFallsBehindTheJournal(t *testing.T) {
	c, acked, lagging := fallBehind(t)
	ls, _ := c.status(c.primary(0), 0)
	c.start(lagging)
	c.waitRepaired(lagging, ls)
	st, _ := c.status(lagging, 0)
	xfer, _ := c.nodes[lagging].srv.PartitionTransferStats(0, 0, 0)
	t.Logf("lagging replica %d after the transfer: %+v, transfer %+v; primary: %+v", lagging, st, xfer, ls)
	if xfer.Installs == 0 {
		t.Fatalf("the lagging replica caught up without a segment transfer: %+v", xfer)
	}

	// The group goes on: sends are acknowledged and every acknowledged
	// message is polled from the primary.
	for b := 0; b < 5; b++ {
		acked = append(acked, c.send(0, "c", 3)...)
	}
	c.checkPoll(c.primary(0), 0, acked)
}
