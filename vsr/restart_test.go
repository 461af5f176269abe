package vsr

import (
	"fmt"
	"slices"
	"testing"
)

// restartCluster is a 3-replica replicated (in-memory journal) cluster
// with a checkpoint every 4 ops, that committed 11 ops (a client's
// register and 10 requests): each replica's durable checkpoint is at op 8,
// ops 9 to 11 are in memory only.
func restartCluster(t *testing.T) *testCluster {
	t.Helper()
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.CheckpointIntervalOps = 4
	if cfg.Durability != Replicated {
		t.Fatalf("default durability %d, want replicated", cfg.Durability)
	}
	c := newTestCluster(t, cfg)
	submit(t, c, 1, 10, "a")
	c.tick(50)
	for i, n := range c.nodes {
		if n.replica.CommitNumber() != 11 || n.replica.CheckpointOp() != 8 {
			t.Fatalf("r%d before the crash: commit %d, checkpoint %d, want 11 and 8\n%s", i, n.replica.CommitNumber(), n.replica.CheckpointOp(), c.status())
		}
	}
	return c
}

// submit commits count ops of client id with bodies prefix-N.
func submit(t *testing.T, c *testCluster, id uint64, count int, prefix string) {
	t.Helper()
	for i := range count {
		if err := c.client(id).Submit(OperationUserMin, []byte(fmt.Sprintf("%s-%d", prefix, i))); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; c.client(id).Busy() && ticks < 2000; ticks++ {
			c.tick(1)
		}
		if c.client(id).Busy() {
			t.Fatalf("op %s-%d did not commit:\n%s", prefix, i, c.status())
		}
	}
}

// TestRestartAfterEveryReplicaLostItsMemory: every replica of a replicated
// group crashes at once, so every in-memory journal is gone. On restart
// each is recovering and no peer holds a log to recover from; the group
// restarts from its checkpoints (restart.go): it keeps every op up to the
// checkpoint, loses the three ops only the journals held (the loss the
// durability seed allows), takes new ops at the numbers after the
// checkpoint, and every replica agrees.
func TestRestartAfterEveryReplicaLostItsMemory(t *testing.T) {
	c := restartCluster(t)
	views := 0
	c.onSend = func(from int, m *Message) {
		if m.Command == CommandStartView {
			views++
		}
	}
	before := slices.Clone(c.nodes[0].sm.entries)
	for i := range c.nodes {
		c.crash(i)
	}
	c.queue = nil
	for i := range c.nodes {
		c.start(i)
		if c.nodes[i].replica.Status() != StatusRecovering {
			t.Fatalf("r%d restarted %s, want recovering", i, c.nodes[i].replica.Status())
		}
	}
	for ticks := 0; ticks < 2000 && !c.normal(); ticks++ {
		c.tick(1)
	}
	if !c.normal() {
		t.Fatalf("the group did not restart:\n%s", c.status())
	}
	t.Logf("restarted (%d StartViews):\n%s", views, c.status())
	for i, n := range c.nodes {
		if r := n.replica; r.CommitNumber() != 8 || r.OpNumber() != 8 || r.Restarting() {
			t.Fatalf("r%d after the restart: commit %d op %d restarting %v, want the checkpoint's op 8", i, r.CommitNumber(), r.OpNumber(), r.Restarting())
		}
		if !slices.Equal(n.sm.entries, before[:7]) {
			t.Fatalf("r%d after the restart applied %v, want the checkpoint's %v", i, n.sm.entries, before[:7])
		}
	}
	submit(t, c, 2, 3, "b")
	c.tick(50)
	c.checkAgreement()
	for i, n := range c.nodes {
		if r := n.replica; r.CommitNumber() != 12 {
			t.Fatalf("r%d: commit %d after a register and 3 new ops, want 12\n%s", i, r.CommitNumber(), c.status())
		}
		if got := n.sm.entries[7:]; !slices.Equal(got, []string{"b-0", "b-1", "b-2"}) {
			t.Fatalf("r%d applied %v after the checkpoint", i, got)
		}
	}
}

// TestRestartNotWhileAReplicaHoldsTheLog: two of three replicas restart
// while the third runs normal with the whole log in memory. They recover
// it from that replica; the group never restarts from a checkpoint, and
// ops 9 to 11, which only memory held, stay committed.
func TestRestartNotWhileAReplicaHoldsTheLog(t *testing.T) {
	c := restartCluster(t)
	restarts := 0
	c.onSend = func(from int, m *Message) {
		if m.Command == CommandDoViewChange && m.Context.Hi == doViewChangeRestart {
			restarts++
		}
	}
	before := slices.Clone(c.nodes[0].sm.entries)
	primary := -1
	for i, n := range c.nodes {
		if n.replica.Primary() {
			primary = i
		}
	}
	for i := range c.nodes {
		if i != primary {
			c.crash(i)
		}
	}
	for i := range c.nodes {
		if i != primary {
			c.start(i)
		}
	}
	for ticks := 0; ticks < 2000 && !c.normal(); ticks++ {
		c.tick(1)
	}
	if !c.normal() || restarts != 0 {
		t.Fatalf("normal %v, %d restart votes, want recovery from r%d:\n%s", c.normal(), restarts, primary, c.status())
	}
	submit(t, c, 2, 1, "b")
	c.tick(50)
	c.checkAgreement()
	for i, n := range c.nodes {
		if !slices.Equal(n.sm.entries[:10], before) || n.replica.CommitNumber() != 13 {
			t.Fatalf("r%d applied %v (commit %d), want %v then b-0", i, n.sm.entries, n.replica.CommitNumber(), before)
		}
	}
}

// TestRestartAnswerIsNotAPromiseOfTheLog: a recovering replica that heard
// "recovering" from every peer but one whose answer is stale (that peer
// recovered the log from the replica that held it, which then crashed)
// restarts, but the peer that holds the log votes with it, and the new
// view keeps every committed op: restart votes never outrank a real one.
func TestRestartAnswerIsNotAPromiseOfTheLog(t *testing.T) {
	c := restartCluster(t)
	before := slices.Clone(c.nodes[0].sm.entries)
	primary := -1
	for i, n := range c.nodes {
		if n.replica.Primary() {
			primary = i
		}
	}
	a, z := (primary+1)%3, (primary+2)%3
	// a and z lose their memory. The answers to a's Recovery are lost for
	// now, so z recovers the log from the primary (its answer and a's
	// "recovering" one) while a still recovers.
	c.crash(a)
	c.crash(z)
	c.queue = nil
	c.start(a)
	c.start(z)
	nonce := c.nodes[a].replica.recovery.nonce
	late := false // every answer to a is lost; later, all but the primary's "recovering" one
	c.drop = func(from int, m *Message) bool {
		return m.Command == CommandRecoveryResponse && m.Context.Lo == nonce &&
			(!late || from != primary || m.Context.Hi != recoveryResponseRecovering)
	}
	recovered := func() bool {
		r := c.nodes[z].replica
		return r.Status() == StatusNormal && r.HoldsLog() && r.CommitNumber() == 11
	}
	for ticks := 0; ticks < 2000 && !recovered(); ticks++ {
		c.tick(1)
	}
	if !recovered() || c.nodes[a].replica.Status() != StatusRecovering {
		t.Fatalf("z did not recover while a recovers:\n%s", c.status())
	}
	// z's "recovering" answer to a's nonce, as z sent it before it
	// recovered, arrives late.
	stale := &Message{Header: Header{Command: CommandRecoveryResponse, Cluster: c.cfg.Cluster, Replica: uint8(z),
		Op: 8, Commit: 8, CheckpointOp: 8, Context: Uint128{Lo: nonce, Hi: recoveryResponseRecovering}}}
	h, _ := c.nodes[a].replica.header(8)
	stale.Body = make([]byte, HeaderSize)
	h.Encode(stale.Body)
	stale.Seal()
	c.nodes[a].replica.Step(stale)
	// Then the primary crashes and restarts: a hears it is recovering
	// (z's fresh answers, and the primary's once it recovered, stay lost),
	// and restarts the group; z, which holds every committed op, votes
	// with its log.
	c.crash(primary)
	c.start(primary)
	late = true
	restartRounds := 0
	c.onSend = func(from int, m *Message) {
		// (The primary of the view records its own vote without sending
		// it: the StartViewChange a restart starts with tells.)
		if from == a && m.Command == CommandStartViewChange && c.nodes[a].replica.Restarting() {
			restartRounds++
		}
	}
	for ticks := 0; ticks < 500 && c.nodes[a].replica.Status() == StatusRecovering; ticks++ {
		c.tick(1)
	}
	if restartRounds == 0 {
		t.Fatalf("a did not restart on the stale answer:\n%s", c.status())
	}
	c.drop = nil
	for ticks := 0; ticks < 3000 && !c.normal(); ticks++ {
		c.tick(1)
	}
	if !c.normal() {
		t.Fatalf("no normal view:\n%s", c.status())
	}
	submit(t, c, 2, 1, "b")
	c.tick(50)
	c.checkAgreement()
	for i, n := range c.nodes {
		if !slices.Equal(n.sm.entries[:10], before) {
			t.Fatalf("r%d applied %v, want %v first: ops that z held in memory were lost\n%s", i, n.sm.entries, before, c.status())
		}
	}
	t.Logf("%s", c.status())
}

// normal reports whether every replica is up and normal in one view and
// holds its view's log.
func (c *testCluster) normal() bool {
	view := c.nodes[0].replica.View()
	for _, n := range c.nodes {
		if n.down || n.replica.Status() != StatusNormal || n.replica.View() != view || n.replica.LogView() != view {
			return false
		}
	}
	return true
}
