package vsr

import (
	"testing"

	"github.com/stratabroker/strata/journal"
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

// TestRestartBetweenJournalAndSuperblockOfNewLogView: a backup acks op N
// in view 0; the primary of view 1 truncates N (nobody else held it
// durably). The replica writes the removal of N to its journal before the
// superblock that records log view 1, and crashes between the two. Its
// durable state then says log view 0 while its journal holds view 1's
// log, which ends below N: voting with it would claim, for log view 0, a
// log below an op it acknowledged there (seed 186245 of the wider swarm,
// replica 1 voted for view 4 with log view 0 ending at op 48 below its
// ack of op 49). The journal records name the log view they belong to and
// the head its log started at, so the restarted replica finds that its
// journal holds all of view 1's log and takes it up again in log view 1.
func TestRestartBetweenJournalAndSuperblockOfNewLogView(t *testing.T) {
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
	// r0's disk stalls: r1 acks the next op, r0 never makes it durable and
	// loses it in a crash.
	var acked uint64
	c.onSend = func(from int, m *Message) {
		if from == 1 && m.Command == CommandPrepareOk && m.View == 0 {
			acked = max(acked, m.Op)
		}
		if from == 1 && m.Command == CommandDoViewChange && m.LogView == 0 && m.Op < acked {
			t.Errorf("r1 voted for view %d with log view 0 ending at op %d, below op %d it acked in view 0", m.View, m.Op, acked)
		}
	}
	c.stalled = map[int]bool{0: true}
	if err := c.client(1).Submit(OperationUserMin, []byte("lost")); err != nil {
		t.Fatal(err)
	}
	c.deliver(false, 1000)
	n := c.nodes[1].replica.OpNumber()
	if acked != n || c.nodes[0].replica.CommitMax() >= n {
		t.Fatalf("r1 acked op %d of %d, r0 committed to %d", acked, n, c.nodes[0].replica.CommitMax())
	}
	c.crash(0)
	delete(c.clients, 1)
	delete(c.stalled, 0)
	// r1 leads view 1 without op n and crashes once the removal is durable
	// but its superblock still records log view 0.
	slot := n % cfg.JournalSlots
	crashed := false
	c.afterIO = func() {
		r1 := c.nodes[1].replica
		if crashed || c.nodes[1].down || r1.sb.durable.LogView != 0 {
			return
		}
		rec, err := journal.ParseRecord(c.nodes[1].storage.durable[ZoneWALHeaders][slot*SectorSize:])
		if err == nil && rec.Op == n && rec.Kind == journal.HeaderRemoved {
			crashed = true
			c.crash(1)
		}
	}
	c.start(0)
	c.tick(400)
	if !crashed {
		t.Fatalf("r1 never recorded the removal of op %d:\n%s", n, c.status())
	}
	c.afterIO = nil
	c.start(1)
	r1 := c.nodes[1].replica
	if r1.LogView() == 0 {
		t.Fatalf("r1 restarted in log view 0 with a log ending at op %d below its ack of op %d, %s", r1.OpNumber(), n, r1.Status())
	}
	if r1.OpNumber() != n-1 {
		t.Fatalf("r1 restarted in log view %d at op %d, want view 1's log (to op %d)", r1.LogView(), r1.OpNumber(), n-1)
	}
	c.tick(1000)
	for i, node := range c.nodes {
		if r := node.replica; r.Status() != StatusNormal || r.View() == 0 || r.LogView() != r.View() {
			t.Fatalf("r%d did not rejoin:\n%s", i, c.status())
		}
	}
	if err := c.client(2).Submit(OperationUserMin, []byte("b")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; c.client(2).Busy() && ticks < 2000; ticks++ {
		c.tick(1)
	}
	if c.client(2).Busy() {
		t.Fatalf("no progress after r1 recovered:\n%s", c.status())
	}
	t.Logf("\n%s", c.status())
}

// TestRestartDropsPreparesOfAnUnrecordedLogView: the primary of view 1
// prepares (and makes durable) an op of view 1 before the superblock that
// records log view 1 is durable, then crashes. Restarted in log view 0,
// its log must not hold that op: a log of log view 0 holds prepares of
// views up to 0 only, and a vote claiming it for log view 0 disagrees
// with every other vote of log view 0 (found by the narrowed swarm, seed
// 382: replica 0 voted with log view 5 holding op 3 of view 6, and the
// new primary's log of log view 5 held another op 3).
func TestRestartDropsPreparesOfAnUnrecordedLogView(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
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
	// r1 leads view 1; its superblock of log view 1 never lands.
	c.onSend = func(from int, m *Message) {
		if from == 1 && m.Command == CommandStartView {
			c.nodes[1].storage.hold = map[Zone]bool{ZoneSuperblock: true}
		}
	}
	c.crash(0)
	r1 := c.nodes[1].replica
	for ticks := 0; !r1.Primary() && ticks < 1000; ticks++ {
		c.tick(1)
	}
	if !r1.Primary() || r1.sb.durable.LogView != 0 {
		t.Fatalf("r1 is not the primary of view 1 with durable log view 0:\n%s", c.status())
	}
	c.onSend = nil
	if err := c.client(2).Submit(OperationUserMin, []byte("b")); err != nil {
		t.Fatal(err)
	}
	start := r1.OpNumber()
	for ticks := 0; ticks < 1000; ticks++ {
		if e := r1.log.at(r1.OpNumber()); r1.OpNumber() > start && e.sealed {
			break
		}
		c.tick(1)
	}
	op := r1.OpNumber()
	if e := r1.log.at(op); e == nil || e.header.View != 1 || !e.sealed {
		t.Fatalf("r1 holds no durable prepare of view 1 at op %d:\n%s", op, c.status())
	}
	c.crash(1)
	c.nodes[1].storage.hold = nil
	c.start(1)
	r1 = c.nodes[1].replica
	for o := r1.CommitNumber() + 1; o <= r1.OpNumber(); o++ {
		if h, ok := r1.log.header(o); ok && h.View > r1.LogView() {
			t.Fatalf("r1 restarted in log view %d with op %d of view %d in its log", r1.LogView(), o, h.View)
		}
	}
	c.start(0)
	c.tick(1500)
	for ticks := 0; c.client(2).Busy() && ticks < 2000; ticks++ {
		c.tick(1)
	}
	if c.client(2).Busy() {
		t.Fatalf("no progress after r1 restarted:\n%s", c.status())
	}
}
