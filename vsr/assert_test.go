package vsr

import (
	"strings"
	"testing"
)

// mustPanic runs f and fails unless it panics with a message containing
// want: the assertion fired, and for the stated reason.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		v := recover()
		if v == nil {
			t.Fatalf("no panic, want one saying %q", want)
		}
		if s, _ := v.(string); !strings.Contains(s, want) {
			t.Fatalf("panic %v, want one saying %q", v, want)
		}
	}()
	f()
}

func assertTestCluster(t *testing.T, durability Durability) *testCluster {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 32
	cfg.MessageSizeMax = 16 << 10
	cfg.WALBytesMax = 4 << 20
	cfg.Durability = durability
	return newTestCluster(t, cfg)
}

// TestAssertInputCatchesGoingBack checks that an input after which the
// view, log view, commit, checkpoint or durable superblock is lower than
// before it crashes the replica, and that a primary that loses an op of
// its own view does too.
func TestAssertInputCatchesGoingBack(t *testing.T) {
	c := assertTestCluster(t, Persisted)
	primary := c.nodes[0].replica
	if !primary.Primary() {
		t.Fatalf("replica 0 is %s in view %d, want the primary", primary.status, primary.view)
	}
	primary.assertInput(primary.mark()) // an input that changed nothing passes
	cases := []struct {
		name string
		want string
		bend func(*mark)
	}{
		{"view", "view went back", func(m *mark) { m.view++ }},
		{"log view", "log view went back", func(m *mark) { m.logView++ }},
		{"commit", "commit went back", func(m *mark) { m.commitMin++; m.commitMax++; m.op++ }},
		{"checkpoint", "checkpoint went back", func(m *mark) { m.checkpointOp++ }},
		{"superblock", "durable superblock went back", func(m *mark) { m.durable.Sequence++ }},
		{"primary op", "lost ops", func(m *mark) { m.op++ }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := primary.mark()
			tc.bend(&before)
			mustPanic(t, tc.want, func() { primary.assertInput(before) })
		})
	}
}

// TestAssertSendCatchesFalseClaims checks that a message claiming more
// than its sender holds never leaves it: an ack of an op the log does not
// hold (or, persisted, holds but not durably), a vote or a new view from a
// replica in the wrong status, a commit past the log, a vote whose headers
// end below the op it claims.
func TestAssertSendCatchesFalseClaims(t *testing.T) {
	c := assertTestCluster(t, Persisted)
	primary, backup := c.nodes[0].replica, c.nodes[1].replica
	seal := func(r *Replica, h Header, body []byte) *Message {
		m := &Message{Header: h, Body: body}
		m.Cluster = r.cfg.Cluster
		m.Replica = r.cfg.ReplicaIndex
		m.Seal()
		return m
	}
	// A prepare the backup holds in memory but has not made durable.
	parent, _ := backup.header(backup.op)
	p := &Message{Header: Header{Command: CommandPrepare, Cluster: 7, View: backup.view, Op: backup.op + 1, Parent: parent.Checksum}, Body: []byte("body")}
	p.Seal()
	backup.log.setPrepare(p)
	backup.op = p.Op

	mustPanic(t, "does not hold", func() {
		backup.assertSend(seal(backup, Header{Command: CommandPrepareOk, View: backup.view, Op: p.Op, Context: Uint128{Lo: 1}}, nil))
	})
	mustPanic(t, "before it is durable", func() {
		backup.assertSend(seal(backup, Header{Command: CommandPrepareOk, View: backup.view, Op: p.Op, Context: p.Checksum}, nil))
	})
	mustPanic(t, "PrepareOk of op", func() {
		primary.assertSend(seal(primary, Header{Command: CommandPrepareOk, View: primary.view, Op: primary.op}, nil))
	})
	mustPanic(t, "DoViewChange view", func() {
		backup.assertSend(seal(backup, Header{Command: CommandDoViewChange, View: backup.view, Op: backup.op}, nil))
	})
	mustPanic(t, "StartView view", func() {
		backup.assertSend(seal(backup, Header{Command: CommandStartView, View: backup.view, Op: backup.op}, nil))
	})
	mustPanic(t, "Commit", func() {
		primary.assertSend(seal(primary, Header{Command: CommandCommit, View: primary.view, Commit: primary.op + 1}, nil))
	})
	mustPanic(t, "sealed for cluster", func() {
		m := seal(primary, Header{Command: CommandCommit, View: primary.view, Commit: primary.commitMax}, nil)
		m.Replica = 2
		primary.assertSend(m)
	})
	// The same prepare, durable and recorded, may be acked.
	e := backup.log.at(p.Op)
	e.durable, e.recorded = true, true
	backup.assertSend(seal(backup, Header{Command: CommandPrepareOk, View: backup.view, Op: p.Op, Context: p.Checksum}, nil))

	if invariants {
		// A vote whose headers end below the op it claims.
		backup.status = StatusViewChange
		var body [HeaderSize + 1]byte
		parent.Encode(body[:])
		mustPanic(t, "its log ends at op", func() {
			backup.assertSend(seal(backup, Header{Command: CommandDoViewChange, View: backup.view, LogView: backup.logView, Op: backup.op, Context: Uint128{Lo: 1}}, body[:]))
		})
	}
}

// TestAssertAppliedOpNeverReplaced checks, in invariants builds, that a
// log slot whose applied op is replaced by another prepare of the same op
// crashes the replica.
func TestAssertAppliedOpNeverReplaced(t *testing.T) {
	if !invariants {
		t.Skip("the applied-op ring exists in invariants builds only")
	}
	c := assertTestCluster(t, Replicated)
	r := c.nodes[1].replica
	parent, _ := r.header(r.op)
	p := &Message{Header: Header{Command: CommandPrepare, Cluster: 7, View: r.view, Op: r.op + 1, Parent: parent.Checksum}, Body: []byte("one")}
	p.Seal()
	r.log.setPrepare(p)
	before := r.mark()
	r.op, r.commitMin, r.commitMax = p.Op, p.Op, p.Op
	r.assertApplied(before)
	q := &Message{Header: p.Header, Body: []byte("two")}
	q.Seal()
	r.log.setPrepare(q)
	mustPanic(t, "replaced in the log", func() { r.assertApplied(r.mark()) })
}

// TestConfigFitsAFullJournalOfHeaders checks that a MessageSizeMax too
// small for a DoViewChange of a full journal (headers and the bitmap of
// present bodies) is refused, at the size seed 126 of the swarm ran with.
func TestConfigFitsAFullJournalOfHeaders(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 63
	cfg.MessageSizeMax = 16 << 10
	cfg.WALBytesMax = 4 << 20
	c := &testCluster{t: t, cfg: cfg}
	if _, err := NewReplica(cfg, newTestStorage(c, &cfg), &testNetwork{c, 0}, &testStateMachine{}, &c.clock); err == nil {
		t.Fatalf("63 slots with MessageSizeMax %d accepted; a full DoViewChange is %d bytes", cfg.MessageSizeMax, HeadersMessageSize(63))
	}
	cfg.MessageSizeMax = 20 << 10
	if _, err := NewReplica(cfg, newTestStorage(c, &cfg), &testNetwork{c, 0}, &testStateMachine{}, &c.clock); err != nil {
		t.Fatal(err)
	}
}

// TestViewChangeAsksLaterPrimaryForItsView checks that a replica stuck in
// a view change of an older view, hearing the commit heartbeat of the
// primary of a later view, asks that primary for a StartView (seed 5600:
// without it the replica climbed one view per view-change timeout and
// never caught up), and that a burst of heartbeats makes one request.
func TestViewChangeAsksLaterPrimaryForItsView(t *testing.T) {
	c := assertTestCluster(t, Replicated)
	r := c.nodes[1].replica
	r.startViewChange(r.view + 1)
	later := r.view + 7
	primary := r.primaryIndex(later)
	if primary == r.cfg.ReplicaIndex {
		later++
		primary = r.primaryIndex(later)
	}
	c.queue = nil
	for range 5 {
		m := &Message{Header: Header{Command: CommandCommit, Cluster: r.cfg.Cluster, Replica: primary, View: later, Commit: 0}}
		m.Seal()
		r.Step(m)
	}
	requests := 0
	for _, e := range c.queue {
		if e.m.Command == CommandRequestStartView {
			requests++
			if e.to != int(primary) || e.m.View != later {
				t.Fatalf("RequestStartView for view %d to replica %d, want view %d to replica %d", e.m.View, e.to, later, primary)
			}
		}
	}
	if requests != 1 {
		t.Fatalf("%d RequestStartView messages after 5 heartbeats of view %d, want 1", requests, later)
	}
}
