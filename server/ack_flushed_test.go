package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
)

// The replicated/replicated cell "process crash of all" past the last
// checkpoint: with the default descriptor checkpoint interval (256 ops),
// the messages the replicas flushed since their last checkpoint are
// named only by each replica's flushed state (flushed.state,
// server/group/flushed.go), which the restart of the group takes as its
// restart log (vsr/restart.go).

// flushedOp returns the op of replica i's flushed state of partition p
// (0 when it has none or it does not verify).
func (c *ackCluster) flushedOp(i int, p uint32) uint64 {
	d := c.disks[i]
	d.mu.Lock()
	defer d.mu.Unlock()
	image, ok := d.fs.ReadFile(ackPartitionDir(p) + "/" + server.FlushedStateFileName)
	if !ok {
		return 0
	}
	op, err := server.FlushedStateOp(image)
	if err != nil {
		return 0
	}
	return op
}

// waitFlushed waits until replica i's flushed state of partition p is of
// op at least.
func (c *ackCluster) waitFlushed(i int, p uint32, op uint64) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("replica %d's flushed state of p%d at op %d", i, p, op), func() bool { return c.flushedOp(i, p) >= op })
}

// flushedCluster starts 3 replicas with the default checkpoint interval
// and a topic whose partition flushes every 10 messages, and sends 20
// batches of 5: 100 messages, all flushed, none under a checkpoint. It
// returns the acknowledged messages and the op of the last send.
func flushedCluster(t *testing.T) (*ackCluster, []ackedMessage, uint64) {
	c := startAckCluster(t, 3, server.ClusterOptions{})
	c.createTopic(1, client.Options{}.With(client.OptionMessagesRequiredToSave, client.Uint32Value(10)))
	var acked []ackedMessage
	for b := 0; b < 20; b++ {
		acked = append(acked, c.send(0, "a", 5)...)
	}
	c.waitApplied(0, 100)
	st, _ := c.status(0, 0)
	return c, acked, st.CommitNumber
}

// restartAll crashes every replica (with powerLoss, their machines'
// power too) and boots them all again.
func (c *ackCluster) restartAll(powerLoss bool) {
	for i := range c.nodes {
		c.crash(i, powerLoss)
	}
	for i := range c.nodes {
		c.boot(i)
	}
}

// checkRestarted checks the group after a restart of all: it serves
// every message of keep at its offset, no offset holds another message
// than the one acknowledged for it, and a new send gets the offset after
// what it serves. It returns how many messages the group serves.
func (c *ackCluster) checkRestarted(acked []ackedMessage, keep int) int {
	c.t.Helper()
	leader := c.primary(0)
	got := c.pollAll(leader, 0)
	for _, a := range acked[:keep] {
		if got[a.offset] != a.payload {
			c.t.Fatalf("offset %d after the restart of every process: %q, acknowledged and flushed %q; %s", a.offset, got[a.offset], a.payload, c.describe())
		}
	}
	for _, a := range acked[keep:] {
		if m, ok := got[a.offset]; ok && m != a.payload {
			c.t.Fatalf("offset %d after the restart of every process: %q, acknowledged %q", a.offset, m, a.payload)
		}
	}
	more := c.send(0, "after", 2)
	if more[0].offset != uint64(len(got)) {
		c.t.Fatalf("a send after the restart got offset %d, the group serves %d messages", more[0].offset, len(got))
	}
	c.waitApplied(0, more[1].offset+1)
	served := make([]ackedMessage, 0, len(got)+2)
	for _, a := range acked {
		if a.offset < uint64(len(got)) {
			served = append(served, a)
		}
	}
	for i := range c.nodes {
		c.waitCaughtUp(i, 0)
	}
	c.checkPoll(c.primary(0), 0, append(served, more...))
	return len(got)
}

// TestAckReplicatedClusterCrashOfAllKeepsFlushedPastCheckpoint: 100
// messages flushed, no descriptor checkpoint (the default interval, 256
// ops, is not reached), and 3 more unflushed; every process crashes. The
// restart of the group keeps all 100 flushed messages at their offsets
// (every replica's flushed state names them), and new sends get the
// offsets after what the group serves.
func TestAckReplicatedClusterCrashOfAllKeepsFlushedPastCheckpoint(t *testing.T) {
	c, acked, lastOp := flushedCluster(t)
	for i := range c.nodes {
		c.waitFlushed(i, 0, lastOp)
		if st, _ := c.status(i, 0); st.CheckpointOp != 0 {
			t.Fatalf("replica %d: checkpoint at op %d, want none (the default interval)", i, st.CheckpointOp)
		}
	}
	acked = append(acked, c.send(0, "tail", 3)...)
	c.waitApplied(0, uint64(len(acked)))
	c.restartAll(false)
	served := c.checkRestarted(acked, 100)
	for i := range c.nodes {
		st, _ := c.status(i, 0)
		t.Logf("replica %d after the restart: checkpoint %d, commit %d, next offset %d", i, st.CheckpointOp, st.CommitNumber, st.NextOffset)
	}
	t.Logf("after the crash of every process: %d messages served, 100 flushed, 3 unflushed acknowledged", served)
}

// TestAckReplicatedClusterCrashOfAllRestartsFromMostFlushed: the
// replicas' flushed states differ (the stores of two of them fail from
// some point on: one at the 40th message, one at the 70th), and every
// process crashes. The group restarts from the most advanced one: all
// 100 flushed messages are served, and the replicas whose flushed states
// lagged catch up to it.
func TestAckReplicatedClusterCrashOfAllRestartsFromMostFlushed(t *testing.T) {
	c := startAckCluster(t, 3, server.ClusterOptions{})
	c.createTopic(1, client.Options{}.With(client.OptionMessagesRequiredToSave, client.Uint32Value(10)))
	leader := c.primary(0)
	// The lagging ones: the primary (so that the restart view must pass
	// to another) and one backup.
	lagging := []int{leader, (leader + 1) % 3}
	ahead := (leader + 2) % 3
	var acked []ackedMessage
	ops := map[int]uint64{}
	for b := 0; b < 20; b++ {
		acked = append(acked, c.send(0, "a", 5)...)
		if b == 7 || b == 13 {
			i := lagging[0]
			if b == 13 {
				i = lagging[1]
			}
			c.waitApplied(0, uint64(len(acked)))
			st, _ := c.status(0, 0)
			c.waitFlushed(i, 0, st.CommitNumber)
			ops[i] = c.flushedOp(i, 0)
			d := c.disks[i]
			d.mu.Lock()
			d.failCreate = func(path string) bool { return strings.HasSuffix(path, server.FlushedStateFileName+".tmp") }
			d.mu.Unlock()
		}
	}
	c.waitApplied(0, 100)
	st, _ := c.status(0, 0)
	c.waitFlushed(ahead, 0, st.CommitNumber)
	for _, i := range lagging {
		if got := c.flushedOp(i, 0); got != ops[i] {
			t.Fatalf("replica %d: flushed state at op %d, want it held at %d", i, got, ops[i])
		}
	}
	t.Logf("flushed states: replica %d at op %d, replica %d at op %d, replica %d at op %d", lagging[0], ops[lagging[0]], lagging[1], ops[lagging[1]], ahead, c.flushedOp(ahead, 0))
	c.restartAll(false)
	c.checkRestarted(acked, 100)
}

// TestAckReplicatedPowerLossOfAllIgnoresUnsyncedFlushed: the replicas'
// stores of their flushed states stop reaching the disk (their syncs
// report success and sync nothing), and every machine loses power: each
// flushed.state is torn (empty), is ignored at the restart, and the group
// restarts from the descriptor checkpoints (none here): it serves no
// message its state cannot vouch for, and new sends take the offsets
// from there.
func TestAckReplicatedPowerLossOfAllIgnoresUnsyncedFlushed(t *testing.T) {
	c, acked, lastOp := flushedCluster(t)
	for i := range c.nodes {
		c.waitFlushed(i, 0, lastOp)
	}
	for _, d := range c.disks {
		d.mu.Lock()
		d.skipSync = func(path string) bool { return strings.HasSuffix(path, server.FlushedStateFileName+".tmp") }
		d.mu.Unlock()
	}
	for b := 0; b < 4; b++ {
		acked = append(acked, c.send(0, "b", 5)...)
	}
	c.waitApplied(0, uint64(len(acked)))
	st, _ := c.status(0, 0)
	// The torn state is renamed into place: its name is durable, its
	// bytes are not.
	c.waitFor("every replica to store its last flushed state", func() bool {
		for i := range c.nodes {
			if c.flushedOp(i, 0) != st.CommitNumber {
				return false
			}
		}
		return true
	})
	c.restartAll(true)
	for i := range c.nodes {
		if op := c.flushedOp(i, 0); op != 0 {
			t.Fatalf("replica %d: a flushed state of op %d survived the power loss", i, op)
		}
		if !strings.Contains(c.nodes[i].logs.String(), "does not verify") {
			t.Fatalf("replica %d did not report its torn flushed state:\n%s", i, c.nodes[i].logs.String())
		}
	}
	served := c.checkRestarted(acked, 0)
	if served != 0 {
		t.Fatalf("the group serves %d messages after the power loss, want none: only a torn flushed state named them", served)
	}
}

// stop shuts replica i down gracefully (Server.Shutdown with its disk and
// the replica plane still there), as an operator's restart does.
func (c *ackCluster) stop(i int) {
	node := c.nodes[i]
	if node == nil {
		return
	}
	_ = node.client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := node.srv.Shutdown(ctx); err != nil {
		c.t.Fatalf("replica %d: shutdown: %v", i, err)
	}
	c.bus.nodes[i].srv.Store(nil)
	c.nodes[i] = nil
}

// TestAckReplicatedClusterGracefulRestartKeepsEverything: a replicated
// topic, 100 messages flushed and 3 acknowledged but unflushed; every
// node is shut down gracefully, one after the other, and booted again.
// A graceful restart loses nothing: all 103 messages are served at their
// offsets, and a new send gets offset 103.
func TestAckReplicatedClusterGracefulRestartKeepsEverything(t *testing.T) {
	c, acked, _ := flushedCluster(t)
	acked = append(acked, c.send(0, "tail", 3)...)
	c.waitApplied(0, uint64(len(acked)))
	for i := range c.nodes {
		c.waitCaughtUp(i, 0)
	}
	for i := range c.nodes {
		c.stop(i)
	}
	for i := range c.nodes {
		c.boot(i)
	}
	served := c.checkRestarted(acked, len(acked))
	if served != len(acked) {
		t.Fatalf("%d messages served after a graceful restart, %d acknowledged", served, len(acked))
	}
}
