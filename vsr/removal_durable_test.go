package vsr

import (
	"testing"
)

// TestRemovalSurvivesStaleHeaderSector: a view change truncates an op a
// backup holds durably (its prepare and its HeaderDurable record). The
// removal must survive one faulty zone of its slot: if the header sector
// reads back as it was before the removal (a stale read, which a faulty
// disk may return), the restarted replica must not find the removed
// prepare back in its log, where it would ack it in the new log view
// (seed 186599 of the wider swarm: replica 0 acked op 34 while its durable
// slot held a removal of op 34, scenarios/bug_ack_of_removed_prepare_186599.txt).
func TestRemovalSurvivesStaleHeaderSector(t *testing.T) {
	cfg := DefaultConfig(7, 2, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	if err := c.client(1).Submit(OperationUserMin, []byte("a")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; c.client(1).Busy() && ticks < 1000; ticks++ {
		c.tick(1)
	}
	c.tick(50)
	// r0, the primary, prepares an op r1 never receives.
	c.group = []int{1, 2}
	if err := c.client(1).Submit(OperationUserMin, []byte("lost")); err != nil {
		t.Fatal(err)
	}
	c.tick(5)
	r0 := c.nodes[0].replica
	op := r0.OpNumber()
	e := r0.log.at(op)
	if e == nil || !e.sealed || op <= r0.CommitNumber() {
		t.Fatalf("r0 holds no sealed uncommitted op %d:\n%s", op, c.status())
	}
	removed := e.header.Checksum
	slot := op % cfg.JournalSlots
	headers := c.nodes[0].storage.durable[ZoneWALHeaders]
	before := append([]byte(nil), headers[slot*SectorSize:(slot+1)*SectorSize]...)
	// r1 leads view 1 without the op: its vote nacks it, the op is
	// truncated, and r0 records the removal.
	delete(c.clients, 1)
	c.tick(300)
	c.group = []int{0, 0}
	for ticks := 0; !(r0.Status() == StatusNormal && r0.View() >= 1 && r0.sb.viewDurable(r0.View(), r0.LogView())) && ticks < 2000; ticks++ {
		c.tick(1)
	}
	if r0.View() == 0 || r0.OpNumber() >= op || r0.LogView() != r0.View() {
		t.Fatalf("the view change kept op %d:\n%s", op, c.status())
	}
	view := r0.View()
	// r0 restarts and its header sector of the slot reads back as it was
	// before the removal.
	c.crash(0)
	copy(headers[slot*SectorSize:], before)
	c.start(0)
	r0 = c.nodes[0].replica
	if r0.LogView() != view {
		t.Fatalf("r0 restarted in log view %d, want %d", r0.LogView(), view)
	}
	if h, ok := r0.log.header(op); ok && h.Checksum == removed {
		t.Fatalf("r0 restarted with the removed op %d back in its log (log view %d, op %d)", op, r0.LogView(), r0.OpNumber())
	}
}
