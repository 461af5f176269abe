package vsr

import (
	"errors"
	"testing"
)

// TestSoloFaultyPrepareStopsOpen: a persisted group of one whose journal
// holds a committed (acknowledged) prepare that fails its checksum, with
// more committed ops after it, must not open. It has no peer to repair the
// op from, and cutting its log before the op (what a missing, never
// synced prepare allows) would forget every acknowledged op from there on
// and serve the shorter history as a healthy one: the metadata group of a
// single node lost acknowledged streams that way. Open fails with
// ErrJournalFaulty and writes nothing; a torn tail (the last prepare
// missing in both zones) still opens with the log cut before it.
func TestSoloFaultyPrepareStopsOpen(t *testing.T) {
	cfg := DefaultConfig(7, 1, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	for i := range 6 {
		if err := c.client(1).Submit(OperationUserMin, []byte{byte('a' + i)}); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; c.client(1).Busy() && ticks < 1000; ticks++ {
			c.tick(1)
		}
		if c.client(1).Busy() {
			t.Fatalf("op %d not committed:\n%s", i, c.status())
		}
	}
	last := c.nodes[0].replica.CommitNumber()
	if last < 7 {
		t.Fatalf("commit %d, want the register and 6 ops", last)
	}
	c.crash(0)
	s := c.nodes[0].storage
	size := uint64(cfg.MessageSizeMax)
	prepareZone := s.durable[ZoneWALPrepares]
	// The op before last, prepare damaged; its HeaderDurable record names it.
	faulty := last - 1
	prepareZone[(faulty%cfg.JournalSlots)*size+300] ^= 0xff
	before := append([]byte(nil), prepareZone...)
	r, err := NewReplica(cfg, s, &testNetwork{c, 0}, &testStateMachine{}, &c.clock)
	if err != nil {
		t.Fatal(err)
	}
	var openErr error
	opened := false
	r.Open(func(err error) { openErr, opened = err, true })
	c.pumpIO()
	if !opened || !errors.Is(openErr, ErrJournalFaulty) {
		t.Fatalf("open over a faulty committed prepare: opened=%v err=%v (op %d, commit %d)", opened, openErr, r.OpNumber(), r.CommitNumber())
	}
	if string(s.durable[ZoneWALPrepares]) != string(before) || len(s.pending) != 0 {
		t.Fatal("the failed open changed the journal")
	}
	t.Logf("open refused: %v", openErr)

	// Repair the prepare, tear the last op in both zones: it opens, the
	// log ending before the torn op.
	prepareZone[(faulty%cfg.JournalSlots)*size+300] ^= 0xff
	prepareZone[(last%cfg.JournalSlots)*size+300] ^= 0xff
	s.durable[ZoneWALHeaders][(last%cfg.JournalSlots)*SectorSize+100] ^= 0xff
	c.start(0)
	if got := c.nodes[0].replica.CommitNumber(); got != last-1 {
		t.Fatalf("after a torn last op the log commits %d, want %d", got, last-1)
	}
}
