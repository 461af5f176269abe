package vsr

import (
	"slices"
	"testing"
)

func readIndexConfig() Config {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	return cfg
}

// submitAll commits one request per body through client cl.
func submitAll(t *testing.T, c *testCluster, cl *Client, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if err := cl.Submit(OperationUserMin, []byte(b)); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; cl.Busy(); ticks++ {
			if ticks == 2000 {
				t.Fatalf("request %q not committed\n%s", b, c.status())
			}
			c.tick(1)
		}
	}
}

// TestReadIndexDeposedPrimary: a primary cut off from its backups goes on
// believing it leads view 0 while the others elect a new primary and commit
// more. Its applied state is stale, so a read admitted there must never be
// ready; once it hears of the new view the read fails (not the primary),
// and a read at the new primary is ready with the new state applied.
func TestReadIndexDeposedPrimary(t *testing.T) {
	c := newTestCluster(t, readIndexConfig())
	cl := c.client(1)
	submitAll(t, c, cl, "a", "b")
	old := c.nodes[0].replica
	if !old.Primary() {
		t.Fatalf("replica 0 is not the primary of view 0\n%s", c.status())
	}
	c.group = []int{1, 2, 2}
	for ticks := 0; !c.nodes[1].replica.Primary(); ticks++ {
		if ticks == 2000 {
			t.Fatalf("no new primary\n%s", c.status())
		}
		c.tick(1)
	}
	cl2 := c.client(2)
	submitAll(t, c, cl2, "c")
	if !old.Primary() || old.View() != 0 || old.CommitNumber() != old.CommitMax() {
		t.Fatalf("the old primary should still believe it leads view 0, caught up\n%s", c.status())
	}
	ticket, d := old.ReadIndex()
	if d != DispositionNone {
		t.Fatalf("the old primary refused the read: %s", d)
	}
	for range 200 {
		c.tick(1)
		if ready, d := old.ReadReady(ticket); ready || d != DispositionNone {
			t.Fatalf("a deposed primary's read: ready %v, disposition %s, with state %v while the new view applied %v",
				ready, d, c.nodes[0].sm.entries, c.nodes[1].sm.entries)
		}
	}
	c.group = []int{0, 0, 0}
	for ticks := 0; old.View() == 0; ticks++ {
		if ticks == 2000 {
			t.Fatalf("the old primary never learned of the new view\n%s", c.status())
		}
		c.tick(1)
	}
	if ready, d := old.ReadReady(ticket); ready || d == DispositionNone {
		t.Fatalf("the read of a primary that left its view: ready %v, disposition %s", ready, d)
	}
	p := c.nodes[1].replica
	ticket, d = p.ReadIndex()
	if d != DispositionNone {
		t.Fatalf("the new primary refused a read: %s\n%s", d, c.status())
	}
	for ticks := 0; ; ticks++ {
		if ready, _ := p.ReadReady(ticket); ready {
			break
		}
		if ticks == 100 {
			t.Fatalf("the new primary's read never ready\n%s", c.status())
		}
		c.tick(1)
	}
	if !slices.Contains(c.nodes[1].sm.entries, "c") {
		t.Fatalf("the new primary serves %v without the write of its view", c.nodes[1].sm.entries)
	}
}

// TestReadRoundsAreShared: the first read of a tick sends a round at once;
// the reads that arrive after it in the same tick share the next one, sent
// by the next tick; a group of one sends none.
func TestReadRoundsAreShared(t *testing.T) {
	c := newTestCluster(t, readIndexConfig())
	submitAll(t, c, c.client(1), "a")
	rounds := 0
	c.onSend = func(from int, m *Message) {
		if m.Command == CommandCommit && !m.Context.IsZero() {
			rounds++
		}
	}
	p := c.nodes[0].replica
	var tickets []ReadTicket
	for range 50 {
		tk, d := p.ReadIndex()
		if d != DispositionNone {
			t.Fatal(d)
		}
		tickets = append(tickets, tk)
	}
	// Two backups get each round.
	if rounds != 2 {
		t.Fatalf("50 reads sent %d round messages before any answer, want one round", rounds)
	}
	c.deliver(false, 1000)
	if ready, _ := p.ReadReady(tickets[0]); !ready {
		t.Fatalf("the first read is not ready after its round")
	}
	if ready, _ := p.ReadReady(tickets[1]); ready {
		t.Fatalf("a read that arrived after the tick's round was sent is ready on that round's answers")
	}
	c.tick(1)
	for i, tk := range tickets {
		if ready, d := p.ReadReady(tk); !ready || d != DispositionNone {
			t.Fatalf("read %d not ready after two rounds (%d messages): %v %s", i, rounds, ready, d)
		}
	}
	if rounds != 4 {
		t.Fatalf("50 reads took %d round messages, want two rounds", rounds)
	}
	t.Logf("50 reads: %d rounds", rounds/2)

	solo := DefaultConfig(7, 1, 0)
	solo.JournalSlots = 64
	solo.MessageSizeMax = 64 << 10
	s := newTestCluster(t, solo)
	submitAll(t, s, s.client(1), "x")
	tk, d := s.nodes[0].replica.ReadIndex()
	if ready, _ := s.nodes[0].replica.ReadReady(tk); d != DispositionNone || !ready || len(s.queue) != 0 {
		t.Fatalf("a group of one: disposition %s, ready %v, %d messages sent", d, ready, len(s.queue))
	}
}
