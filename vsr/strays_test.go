package vsr

import (
	"testing"

	"github.com/stratabroker/strata/journal"
)

// TestJournalStraysBeyondReloadedLogAreRemoved: records a restarted
// replica's journal holds beyond the log it reloaded (ops of an older log
// past a hole an in-flight write left) are removed once a view's log is
// installed. They used to stay: when the installed log held the op below
// them with the same checksum, the next restart chained them onto it and
// the replica's log in the new log view reached ops that log never had
// (seed 2986: an op 17 of view 1 in a vote from log view 5,
// scenarios/bug_vote_log_not_prefix_of_log_view_2986.txt).
func TestJournalStraysBeyondReloadedLogAreRemoved(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.Durability = Persisted
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	c := newTestCluster(t, cfg)
	cl := c.client(1)
	for i := range 3 {
		if err := cl.Submit(OperationUserMin, []byte{byte('a' + i)}); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; cl.Busy() && ticks < 500; ticks++ {
			c.tick(1)
		}
	}
	for range 50 {
		c.tick(1)
	}
	head := c.nodes[0].replica.OpNumber() // the register and three appends
	if head != 4 || c.nodes[2].replica.OpNumber() != head {
		t.Fatalf("cluster at op %d\n%s", head, c.status())
	}
	top, _ := c.nodes[2].replica.header(head)
	topHeader := *top
	c.crash(2)

	// On r2's disk: two ops of an older log beyond the head, chained onto
	// it, and a hole at the head (its write in flight at the crash), so
	// that the reloaded log ends below them.
	s := c.nodes[2].storage
	j, err := journal.New(journal.Config{Slots: cfg.JournalSlots, PrepareSlotSize: uint64(cfg.MessageSizeMax)},
		zoneDevice{s, ZoneWALHeaders}, zoneDevice{s, ZoneWALPrepares})
	if err != nil {
		t.Fatal(err)
	}
	parent := topHeader.Checksum
	for op := head + 1; op <= head+2; op++ {
		m := Message{Header: Header{Command: CommandPrepare, Cluster: 7, View: 0, Op: op, Parent: parent, Operation: OperationUserMin, Client: Uint128{Lo: 9}}, Body: []byte("stale")}
		m.Seal()
		parent = m.Checksum
		j.WritePrepare(op, 1<<40+op, m.Encode(nil), func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	s.Sync(func(error) {})
	c.pumpIO()
	slot := head % cfg.JournalSlots
	clear(s.durable[ZoneWALHeaders][slot*SectorSize : (slot+1)*SectorSize])
	clear(s.durable[ZoneWALPrepares][slot*uint64(cfg.MessageSizeMax) : (slot+1)*uint64(cfg.MessageSizeMax)])

	c.start(2)
	if op := c.nodes[2].replica.OpNumber(); op != head-1 {
		t.Fatalf("r2 reloaded its log to op %d, want %d (the hole)", op, head-1)
	}
	// It repairs the head from the primary's log, which ends there.
	for ticks := 0; c.nodes[2].replica.CommitNumber() < head || c.nodes[2].replica.log.prepare(head) == nil; ticks++ {
		if ticks == 1000 {
			t.Fatalf("r2 did not repair op %d\n%s", head, c.status())
		}
		c.tick(1)
	}
	for range 50 {
		c.tick(1)
	}
	c.crash(2)
	c.start(2)
	if op := c.nodes[2].replica.OpNumber(); op != head {
		t.Fatalf("r2 restarted with its log at op %d, beyond op %d where the cluster's log ends: the stray ops came back\n%s", op, head, c.status())
	}
}
