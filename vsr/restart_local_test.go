package vsr

import (
	"slices"
	"testing"
)

// localCheckpoint is a LocalCheckpointer holding one encoded checkpoint.
type localCheckpoint struct {
	data  []byte
	calls int
}

func (l *localCheckpoint) LocalCheckpoint() []byte {
	l.calls++
	return l.data
}

// TestRestartFromTheHighestLocalCheckpoint: every replica of a
// replicated group crashes; two of them hold a local checkpoint newer
// than their durable one (op 8): r1 of op 11, r2 of op 10. The group
// restarts from the highest, r1's: no op up to 11 is lost, r1 leads the
// restart view, the others catch up to it by state transfer, and new ops
// take the numbers after 11.
func TestRestartFromTheHighestLocalCheckpoint(t *testing.T) {
	c := restartCluster(t)
	before := slices.Clone(c.nodes[0].sm.entries) // a-0 .. a-9: ops 2 to 11
	at := func(i int, op uint64) *localCheckpoint {
		state := (&testStateMachine{entries: before[:op-2+1]}).Checkpoint()
		data, ok := c.nodes[i].replica.LocalCheckpointAt(op, state)
		if !ok {
			t.Fatalf("r%d: no local checkpoint of op %d", i, op)
		}
		return &localCheckpoint{data: data}
	}
	if _, ok := c.nodes[0].replica.LocalCheckpointAt(12, nil); ok {
		t.Fatal("a local checkpoint of an op not applied")
	}
	c.nodes[1].local = at(1, 11)
	c.nodes[2].local = at(2, 10)
	c.nodes[0].local = &localCheckpoint{} // holds none
	for i := range c.nodes {
		c.crash(i)
	}
	c.queue = nil
	for i := range c.nodes {
		c.start(i)
		if r := c.nodes[i].replica; r.Status() != StatusRecovering || r.CheckpointOp() != 8 {
			t.Fatalf("r%d restarted %s at checkpoint %d, want recovering at 8: the local checkpoint is for a restart only", i, r.Status(), r.CheckpointOp())
		}
	}
	for ticks := 0; ticks < 3000 && !c.normal(); ticks++ {
		c.tick(1)
	}
	if !c.normal() {
		t.Fatalf("the group did not restart:\n%s", c.status())
	}
	t.Logf("restarted:\n%s", c.status())
	if p := c.nodes[1].replica; !p.Primary() || p.CheckpointOp() != 11 {
		t.Fatalf("r1 (local checkpoint 11): primary %v, checkpoint %d; want the primary at 11\n%s", p.Primary(), p.CheckpointOp(), c.status())
	}
	for i, n := range c.nodes {
		if r := n.replica; r.CommitNumber() != 11 || r.OpNumber() != 11 || r.Restarting() {
			t.Fatalf("r%d after the restart: commit %d op %d restarting %v, want the highest local checkpoint's op 11", i, r.CommitNumber(), r.OpNumber(), r.Restarting())
		}
		if !slices.Equal(n.sm.entries, before) {
			t.Fatalf("r%d after the restart holds %v, want %v", i, n.sm.entries, before)
		}
	}
	submit(t, c, 2, 2, "b")
	c.tick(50)
	c.checkAgreement()
	for i, n := range c.nodes {
		if r := n.replica; r.CommitNumber() != 14 || !slices.Equal(n.sm.entries[10:], []string{"b-0", "b-1"}) {
			t.Fatalf("r%d: commit %d, applied %v after op 11; want 14 and b-0, b-1\n%s", i, r.CommitNumber(), n.sm.entries[10:], c.status())
		}
	}
}

// TestRestartIgnoresUnusableLocalCheckpoints: a local checkpoint no newer
// than the durable one, of another group, or torn is never taken; the
// group restarts from its durable checkpoints (op 8) as without the hook.
// Nor is the hook asked outside a restart: a crash of one replica
// recovers from its peers.
func TestRestartIgnoresUnusableLocalCheckpoints(t *testing.T) {
	c := restartCluster(t)
	before := slices.Clone(c.nodes[0].sm.entries)
	state := (&testStateMachine{entries: before}).Checkpoint()
	stale, _ := c.nodes[0].replica.LocalCheckpointAt(8, (&testStateMachine{entries: before[:7]}).Checkpoint())
	fresh, _ := c.nodes[1].replica.LocalCheckpointAt(11, state)
	other := slices.Clone(fresh)
	h, _ := checkpointHeaderOf(other)
	h.Group++
	h.Encode(other[4:])
	torn := slices.Clone(fresh[:10])
	c.nodes[0].local = &localCheckpoint{data: stale}
	c.nodes[1].local = &localCheckpoint{data: other}
	c.nodes[2].local = &localCheckpoint{data: torn}
	// A crash of one: the hook is not asked.
	c.crash(1)
	c.start(1)
	for ticks := 0; ticks < 2000 && !c.normal(); ticks++ {
		c.tick(1)
	}
	if !c.normal() || c.nodes[1].local.(*localCheckpoint).calls != 0 {
		t.Fatalf("normal %v, hook asked %d times after a crash of one\n%s", c.normal(), c.nodes[1].local.(*localCheckpoint).calls, c.status())
	}
	for i := range c.nodes {
		c.crash(i)
	}
	c.queue = nil
	for i := range c.nodes {
		c.start(i)
	}
	for ticks := 0; ticks < 3000 && !c.normal(); ticks++ {
		c.tick(1)
	}
	if !c.normal() {
		t.Fatalf("the group did not restart:\n%s", c.status())
	}
	for i, n := range c.nodes {
		if r := n.replica; r.CommitNumber() != 8 || r.CheckpointOp() != 8 {
			t.Fatalf("r%d after the restart: commit %d checkpoint %d, want the durable checkpoint's op 8", i, r.CommitNumber(), r.CheckpointOp())
		}
		if !slices.Equal(n.sm.entries, before[:7]) {
			t.Fatalf("r%d after the restart holds %v, want %v", i, n.sm.entries, before[:7])
		}
		if n.local.(*localCheckpoint).calls == 0 {
			t.Fatalf("r%d: the hook was never asked in the restart", i)
		}
	}
}
