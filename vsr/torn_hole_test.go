package vsr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratabroker/strata/journal"
)

// TestTornPrepareAtTheHoleIsDamage: a persisted backup acked ops K+1..K+3
// (committed with the primary's, while the third replica was cut off).
// At its restart the journal's chain breaks at K+1: the slot's prepare
// zone holds a torn record, and its header zone reads back blank. That is
// what a crash leaves when the prepare of an op the backup held as an
// installed header (recorded in both zones, so acks above it were
// allowed) is written over the header's prepare-zone copy and tears, and
// the faulty disk then reads the header zone's copy back stale, as it was
// before its first write (seed 335 at --ticks 6000: replica 4 voted for
// view 6 with log view 0 ending at op 44, below op 58 it had acked,
// scenarios/bug_vote_below_acked_op_ticks6000_335.txt). An in-flight
// write of a new op torn at the crash looks the same, and the backup
// cannot tell the two apart: with records of later ops above the hole it
// must take its journal as damaged and recover its log from its peers,
// not resume at K and vote with a log that ends below what it acked
// (here, with the primary down, a view change of the backup and the
// cut-off replica would start without the committed ops K+1..K+3).
func TestTornPrepareAtTheHoleIsDamage(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	// The sends of r1 as the send checker sees them: its acks in each
	// view, and every vote whose log view is that view must reach them.
	ackedIn := map[uint64]uint64{}
	var violation string
	c.onSend = func(from int, m *Message) {
		if from != 1 {
			return
		}
		switch m.Command {
		case CommandPrepareOk:
			ackedIn[m.View] = max(ackedIn[m.View], m.Op)
		case CommandDoViewChange:
			if acked := ackedIn[m.LogView]; m.Op < acked && violation == "" {
				violation = fmt.Sprintf("r1 sent DoViewChange for view %d with log view %d ending at op %d, below op %d it acked in that log view",
					m.View, m.LogView, m.Op, acked)
			}
		}
	}
	submit := func(id uint64, body string) {
		t.Helper()
		// Bodies span sectors, so that a write of one may tear.
		if err := c.client(id).Submit(OperationUserMin, []byte(body+strings.Repeat(".", 2*SectorSize))); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; c.client(id).Busy() && ticks < 3000; ticks++ {
			c.tick(1)
		}
		if c.client(id).Busy() {
			t.Fatalf("client %d's request %q did not commit:\n%s", id, body, c.status())
		}
	}
	submit(1, "a")
	c.tick(50)
	r0, r1 := c.nodes[0].replica, c.nodes[1].replica

	// r2 is cut off; ops K+1..K+3 commit on r0 and r1.
	c.group = []int{1, 1, 2}
	k := r0.CommitMax()
	submit(1, "b")
	submit(1, "c")
	submit(1, "d")
	c.tick(20)
	top := r0.CommitMax()
	if top < k+3 || ackedIn[0] < top {
		t.Fatalf("ops %d..%d: r0 committed to %d, r1 acked to %d:\n%s", k+1, k+3, top, ackedIn[0], c.status())
	}
	if c.nodes[2].replica.OpNumber() > k {
		t.Fatalf("r2 holds op %d, want it cut off at %d", c.nodes[2].replica.OpNumber(), k)
	}

	// Both crash. On r1's disk the slot of op K+1 holds a torn prepare (its
	// second sector not the one written) and a header sector read back as
	// it was before its first write.
	c.crash(0)
	c.crash(1)
	s := c.nodes[1].storage
	slot := (k + 1) % cfg.JournalSlots
	size := uint64(cfg.MessageSizeMax)
	s.durable[ZoneWALPrepares][slot*size+SectorSize+7] ^= 0xff
	clear(s.durable[ZoneWALHeaders][slot*SectorSize : (slot+1)*SectorSize])
	if rec, err := journal.ParseRecord(s.durable[ZoneWALPrepares][slot*size : (slot+1)*size]); err == nil {
		t.Fatalf("the prepare of op %d still reads back: %+v", k+1, rec)
	}

	// r1 restarts and r2 rejoins; the primary stays down a while.
	c.group = []int{0, 0, 0}
	c.start(1)
	r1 = c.nodes[1].replica
	if r1.Status() != StatusRecovering && r1.OpNumber() < top {
		t.Errorf("r1 restarted %s at op %d, below op %d it acked", r1.Status(), r1.OpNumber(), top)
	}
	c.tick(600)
	if violation != "" {
		t.Fatalf("%s:\n%s", violation, c.status())
	}
	c.start(0)
	submit(2, "e")
	c.tick(300)
	if violation != "" {
		t.Fatalf("%s:\n%s", violation, c.status())
	}
	for i, n := range c.nodes {
		if n.replica.CommitMax() < top+1 {
			t.Fatalf("r%d committed to %d, want past %d:\n%s", i, n.replica.CommitMax(), top, c.status())
		}
	}
	c.checkAgreement()
}
