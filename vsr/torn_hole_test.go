package vsr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratabroker/strata/journal"
)

// TestTornPrepareAtTheHoleIsDamage: a persisted backup (r1) missed the
// prepare of op K+1 and held it as an installed header (recorded in both
// zones), which let it ack ops K+2..K+4 (committed with the primary's
// while the third replica was cut off). The repair's prepare of K+1 then
// goes over the header's copy in the prepare zone and tears in a crash,
// and the faulty disk reads the header zone's copy back stale, as before
// its first write: neither zone names K+1 at the restart (seed 335 at
// --ticks 6000: replica 4 voted for view 6 with log view 0 ending at op
// 44, below op 58 it had acked,
// scenarios/bug_vote_below_acked_op_ticks6000_335.txt). The torn write is
// newer than the records of the ops above it, so it may hide an op the
// backup recorded (a new op's prepare in flight at a crash is older than
// them): the backup must take its journal as damaged and recover its log
// from its peers, not resume at K and, with the primary down, start a
// view with the cut-off replica that lacks the committed ops K+2..K+4.
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
	k := r0.CommitMax()

	// Op K+1 commits on r0 and r2; r1 never gets its prepare.
	blocked := true
	c.dropTo = func(from, to int, m *Message) bool {
		return blocked && m.Op == k+1 && (m.Command == CommandPrepare && to == 1 || m.Command == CommandRequestPrepare && from == 1)
	}
	submit(1, "b")
	// r2 is cut off; ops K+2..K+4 commit on r0 and r1, which holds K+1 as
	// an installed header.
	c.group = []int{1, 1, 2}
	submit(1, "c")
	submit(1, "d")
	submit(1, "e")
	c.tick(20)
	top := r0.CommitMax()
	if e := r1.log.at(k + 1); top < k+4 || ackedIn[0] < top || e == nil || e.prepare != nil || !e.recorded {
		t.Fatalf("ops %d..%d: r0 committed to %d, r1 acked to %d holding op %d as %+v:\n%s", k+1, k+4, top, ackedIn[0], k+1, e, c.status())
	}

	// The repair of K+1 reaches r1; r0 and r1 crash while its write is
	// unsynced, and the write tears: its first sector lands, no more.
	s := c.nodes[1].storage
	slot := (k + 1) % cfg.JournalSlots
	size := uint64(cfg.MessageSizeMax)
	torn := false
	c.afterIO = func() {
		if torn || c.nodes[1].down {
			return
		}
		for _, w := range s.pending {
			if rec, err := journal.ParseRecord(w.data); w.zone == ZoneWALPrepares && err == nil && rec.Prepare && rec.Op == k+1 {
				copy(s.durable[ZoneWALPrepares][w.offset:], w.data[:SectorSize])
				torn = true
				c.crash(0)
				c.crash(1)
				return
			}
		}
	}
	blocked = false
	for ticks := 0; !torn && ticks < 1000; ticks++ {
		c.tick(1)
	}
	c.afterIO = nil
	if !torn {
		t.Fatalf("r1 wrote no prepare of op %d:\n%s", k+1, c.status())
	}
	// The faulty disk reads the header sector back as before its first
	// write.
	clear(s.durable[ZoneWALHeaders][slot*SectorSize : (slot+1)*SectorSize])
	if rec, err := journal.ParseRecord(s.durable[ZoneWALPrepares][slot*size : (slot+1)*size]); err == nil {
		t.Fatalf("the slot of op %d still reads back: %+v", k+1, rec)
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
	submit(2, "f")
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

// TestTornNewPrepareAtTheHoleResumes: the other case tornPrepareDamage
// tells apart. A backup's prepares of two new ops are in flight when it
// crashes; the first tears, the second lands. Its journal's chain breaks
// at the torn op with a record of a later op above it, but that record is
// newer than the torn write, so nothing above the hole was acked: the
// backup resumes from its log (a recovery would need a quorum it may not
// have: seed 3700 at --ticks 6000, three of five replicas up after a
// power loss of all, stayed stuck with this backup recovering).
func TestTornNewPrepareAtTheHoleResumes(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	body := func(s string) []byte { return []byte(s + strings.Repeat(".", 2*SectorSize)) }
	// Clients 2 and 3 register first, so that their next requests are
	// the two prepares (each spanning sectors).
	for id := uint64(2); id <= 3; id++ {
		if err := c.client(id).Submit(OperationUserMin, []byte("a")); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; c.client(id).Busy() && ticks < 1000; ticks++ {
			c.tick(1)
		}
	}
	c.tick(50)
	k := c.nodes[0].replica.CommitMax()
	s := c.nodes[1].storage
	pendingPrepare := func(op uint64) (testWrite, bool) {
		for _, w := range s.pending {
			if rec, err := journal.ParseRecord(w.data); w.zone == ZoneWALPrepares && err == nil && rec.Prepare && rec.Op == op {
				return w, true
			}
		}
		return testWrite{}, false
	}
	crashed := false
	c.afterIO = func() {
		if crashed {
			return
		}
		first, ok1 := pendingPrepare(k + 1)
		second, ok2 := pendingPrepare(k + 2)
		if !ok1 || !ok2 {
			return
		}
		copy(s.durable[ZoneWALPrepares][first.offset:], first.data[:SectorSize])
		copy(s.durable[ZoneWALPrepares][second.offset:], second.data)
		crashed = true
		c.crash(1)
	}
	// r1's disk is slow: its writes are submitted, none completes.
	c.stalled = map[int]bool{1: true}
	if err := c.client(2).Submit(OperationUserMin, body("b")); err != nil {
		t.Fatal(err)
	}
	if err := c.client(3).Submit(OperationUserMin, body("c")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; !crashed && ticks < 1000; ticks++ {
		c.tick(1)
	}
	c.afterIO = nil
	c.stalled = nil
	if !crashed {
		t.Fatalf("r1 never had the prepares of ops %d and %d in flight together:\n%s", k+1, k+2, c.status())
	}
	c.start(1)
	r1 := c.nodes[1].replica
	if r1.Status() == StatusRecovering || r1.OpNumber() != k {
		t.Fatalf("r1 restarted %s at op %d, want it to resume from its log at op %d", r1.Status(), r1.OpNumber(), k)
	}
	for ticks := 0; (c.client(2).Busy() || c.client(3).Busy()) && ticks < 3000; ticks++ {
		c.tick(1)
	}
	c.tick(200)
	if c.client(2).Busy() || c.client(3).Busy() || r1.CommitMax() < k+2 {
		t.Fatalf("no progress after r1 restarted:\n%s", c.status())
	}
	c.checkAgreement()
}

// TestTornRepairPrepareBelowUnsealedOpResumes: a backup (r1) missed the
// prepares of ops K+1 and K+2 and learned their headers from the
// primary's Headers reply (installed headers). Its repair then wrote the
// prepare of K+2 and, next, that of K+1 over K+1's installed header copy;
// it crashed with K+1's write torn, before any seal (HeaderDurable record)
// of either op, and the header zone's record of K+1 is lost. It acked
// nothing above K. Its journal's chain breaks at K+1 with older records
// of K+2 above it (the installed header, the prepare), but an ack of an
// op above the hole needs that op's seal, written after its prepare: with
// no seal above the hole, and the prepare of K+2 the write just before the
// torn one (no room for a seal between them), nothing above the hole was
// acked, and the backup resumes from its log. Taking it as damage (any
// older record above the hole, the first rule of seed 335's fix) left
// seed 7026 recovering forever: scenarios/
// bug_recovering_replica_beside_view_change_7026.txt, replica 2, which had
// never sent a PrepareOk, beside two replicas in a view change it could
// not join.
func TestTornRepairPrepareBelowUnsealedOpResumes(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	acked := uint64(0)
	c.onSend = func(from int, m *Message) {
		if from == 1 && m.Command == CommandPrepareOk {
			acked = max(acked, m.Op)
		}
	}
	body := func(s string) []byte { return []byte(s + strings.Repeat(".", 2*SectorSize)) }
	submit := func(id uint64, s string) {
		t.Helper()
		if err := c.client(id).Submit(OperationUserMin, body(s)); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; c.client(id).Busy() && ticks < 3000; ticks++ {
			c.tick(1)
		}
		if c.client(id).Busy() {
			t.Fatalf("client %d's request %q did not commit:\n%s", id, s, c.status())
		}
	}
	submit(1, "a")
	c.tick(50)
	r1 := c.nodes[1].replica
	k := c.nodes[0].replica.CommitMax()
	s := c.nodes[1].storage
	size := uint64(cfg.MessageSizeMax)
	slot1 := (k + 1) % cfg.JournalSlots
	before := append([]byte(nil), s.durable[ZoneWALHeaders][slot1*SectorSize:(slot1+1)*SectorSize]...)

	// Ops K+1 and K+2 commit on r0 and r2; r1 gets neither prepare and
	// installs their headers.
	withheld := map[uint64]bool{k + 1: true, k + 2: true}
	c.dropTo = func(from, to int, m *Message) bool {
		return withheld[m.Op] && (m.Command == CommandPrepare && to == 1 || m.Command == CommandRequestPrepare && from == 1)
	}
	submit(1, "b")
	submit(1, "c")
	for ticks := 0; ticks < 1000; ticks++ {
		if e := r1.log.at(k + 2); e != nil && e.prepare == nil && e.recorded {
			break
		}
		c.tick(1)
	}
	for _, op := range []uint64{k + 1, k + 2} {
		if e := r1.log.at(op); e == nil || e.prepare != nil || !e.recorded {
			t.Fatalf("r1 holds op %d as %+v, want a recorded installed header:\n%s", op, e, c.status())
		}
	}
	if acked > k {
		t.Fatalf("r1 acked op %d, above op %d", acked, k)
	}

	// r1's disk stalls; the repair's prepare of K+2 is written, then that
	// of K+1.
	c.stalled = map[int]bool{1: true}
	pending := func(op uint64) (testWrite, journal.SlotRecord, bool) {
		for _, w := range s.pending {
			if rec, err := journal.ParseRecord(w.data); w.zone == ZoneWALPrepares && err == nil && rec.Prepare && rec.Op == op {
				return w, journal.SlotRecord{Op: rec.Op, Seq: rec.Seq}, true
			}
		}
		return testWrite{}, journal.SlotRecord{}, false
	}
	delete(withheld, k+2)
	for ticks := 0; ticks < 1000; ticks++ {
		if _, _, ok := pending(k + 2); ok {
			break
		}
		c.tick(1)
	}
	delete(withheld, k+1)
	for ticks := 0; ticks < 1000; ticks++ {
		if _, _, ok := pending(k + 1); ok {
			break
		}
		c.tick(1)
	}
	second, rec2, ok2 := pending(k + 2)
	first, rec1, ok1 := pending(k + 1)
	if !ok1 || !ok2 || rec1.Seq != rec2.Seq+1 {
		t.Fatalf("r1's prepare writes: op %d %v seq %d, op %d %v seq %d; want op %d's the next write after op %d's:\n%s",
			k+2, ok2, rec2.Seq, k+1, ok1, rec1.Seq, k+1, k+2, c.status())
	}
	if acked > k {
		t.Fatalf("r1 acked op %d, above op %d", acked, k)
	}
	// The crash: K+2's prepare landed, K+1's tore after its first
	// sector, and the header zone's record of K+1 reads back as before.
	copy(s.durable[ZoneWALPrepares][second.offset:], second.data)
	copy(s.durable[ZoneWALPrepares][first.offset:], first.data[:SectorSize])
	c.crash(1)
	c.stalled = nil
	c.dropTo = nil
	copy(s.durable[ZoneWALHeaders][slot1*SectorSize:], before)
	if _, err := journal.ParseRecord(s.durable[ZoneWALPrepares][slot1*size : (slot1+1)*size]); err == nil {
		t.Fatalf("the slot of op %d still reads back", k+1)
	}

	c.start(1)
	r1 = c.nodes[1].replica
	if r1.Status() == StatusRecovering || r1.OpNumber() != k {
		t.Fatalf("r1 restarted %s at op %d, want it to resume from its log at op %d", r1.Status(), r1.OpNumber(), k)
	}
	submit(2, "d")
	c.tick(200)
	if r1.CommitMax() < k+3 {
		t.Fatalf("r1 committed to %d, want past %d:\n%s", r1.CommitMax(), k+2, c.status())
	}
	c.checkAgreement()
}

// TestRestartShortOfItsLogViewHeadRecovers: a persisted replica (r1)
// leads view 1 with a log it took from a vote, holding the three ops
// committed in view 0 it never received as installed headers (tagged with
// the head, op K+3, that view 1's log started at). The repair's prepare
// of op K+1 goes over the header's copy in the prepare zone and tears in
// a crash, and the faulty disk reads the header zone's copy back stale:
// at the restart the chain breaks at K+1, and no record above the hole
// is an ack (only installed headers). Resuming in its durable log view 1
// with a log ending at K, r1 would vote for view 2 without the ops
// committed in view 0, and with r0 down, r2's vote (log view 1 too once
// it took the StartView) could lose to it (seed 59542 of the default
// swarm: replica 5 voted with log view 11 ending at op 266 when view 11
// had started at op 288, scenarios/bug_vote_log_view_short_of_its_head_59542.txt).
// The installed headers still name view 1's head: a restart whose chain
// no longer reaches it recovers a log from its peers.
func TestRestartShortOfItsLogViewHeadRecovers(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	var top uint64
	var violation string
	c.onSend = func(from int, m *Message) {
		if from == 1 && m.Command == CommandDoViewChange && m.LogView >= 1 && m.Op < top && violation == "" {
			violation = fmt.Sprintf("r1 sent DoViewChange for view %d with log view %d ending at op %d, without op %d committed in view 0",
				m.View, m.LogView, m.Op, top)
		}
	}
	submit := func(id uint64, body string) {
		t.Helper()
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
	k := c.nodes[0].replica.CommitMax()

	// Ops K+1..K+3 commit on r0 and r2; r1 never gets their prepares.
	// Until the repair below, then the repairs of K+2 and K+3 stay lost
	// (so that no prepare above the hole lands before the torn one).
	repaired := uint64(0)
	c.dropTo = func(from, to int, m *Message) bool {
		return m.Op > k && m.Op <= k+3 && m.Op != repaired &&
			(m.Command == CommandPrepare && to == 1 || m.Command == CommandRequestPrepare && from == 1)
	}
	submit(1, "b")
	submit(1, "c")
	submit(1, "d")
	top = c.nodes[0].replica.CommitMax()
	if top < k+3 {
		t.Fatalf("ops up to %d committed, want %d:\n%s", top, k+3, c.status())
	}

	// r0 crashes: r1 leads view 1 with r2's vote, its ops K+1..K+3 as
	// installed headers.
	c.crash(0)
	r1 := c.nodes[1].replica
	for ticks := 0; !(r1.Status() == StatusNormal && r1.View() >= 1) && ticks < 3000; ticks++ {
		c.tick(1)
	}
	if e := r1.log.at(k + 1); r1.Status() != StatusNormal || r1.View() != 1 || r1.logView != 1 || e == nil || e.prepare != nil {
		t.Fatalf("r1 is %s in view %d (log view %d) holding op %d as %+v, want the primary of view 1 with its header only:\n%s",
			r1.Status(), r1.View(), r1.logView, k+1, e, c.status())
	}

	// The repair of K+1 reaches r1 and tears in a crash: its first sector
	// lands, no more.
	s := c.nodes[1].storage
	slot := (k + 1) % cfg.JournalSlots
	torn := false
	c.afterIO = func() {
		if torn || c.nodes[1].down {
			return
		}
		for _, w := range s.pending {
			if rec, err := journal.ParseRecord(w.data); w.zone == ZoneWALPrepares && err == nil && rec.Prepare && rec.Op == k+1 {
				copy(s.durable[ZoneWALPrepares][w.offset:], w.data[:SectorSize])
				torn = true
				c.crash(1)
				return
			}
		}
	}
	repaired = k + 1
	for ticks := 0; !torn && ticks < 1000; ticks++ {
		c.tick(1)
	}
	c.afterIO = nil
	if !torn {
		t.Fatalf("r1 wrote no prepare of op %d:\n%s", k+1, c.status())
	}
	// The faulty disk reads the header sector back as before its first
	// write.
	clear(s.durable[ZoneWALHeaders][slot*SectorSize : (slot+1)*SectorSize])
	c.dropTo = nil

	c.start(1)
	r1 = c.nodes[1].replica
	if r1.Status() != StatusRecovering {
		t.Errorf("r1 restarted %s in view %d (log view %d) at op %d, want recovering: view 1's log started at op %d",
			r1.Status(), r1.View(), r1.logView, r1.OpNumber(), top)
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

// TestNoAckAboveAPrepareWriteOverItsHeaderCopy: the case
// tornPrepareDamage cannot tell from a harmless one, closed at the ack. A
// persisted backup (r1) holds op K+1 as an installed header (recorded in
// both zones). The repair's prepare of K+1 goes over the header's copy in
// the prepare zone, and while that write is in flight r1 receives op K+2,
// makes it durable and sealed. Had it acked K+2 then, a crash tearing the
// K+1 write, with the faulty disk reading the header zone's copy back
// stale, would leave a hole at K+1 whose torn write is older than every
// record above it, the mark of a new op's write in flight: r1 would
// resume at K, below the K+2 it acked (and, with the primary gone, the
// only other holder of K+2). So a backup acks no op above one whose
// prepare write over its header's copy is not yet durable (ackableHead).
func TestNoAckAboveAPrepareWriteOverItsHeaderCopy(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	ackedIn := map[uint64]uint64{}
	var violation string
	held := false
	var k uint64
	c.onSend = func(from int, m *Message) {
		if from != 1 {
			return
		}
		switch m.Command {
		case CommandPrepareOk:
			ackedIn[m.View] = max(ackedIn[m.View], m.Op)
			if held && m.Op > k+1 && violation == "" {
				violation = fmt.Sprintf("r1 acked op %d while its prepare write of op %d over the installed header's copy was in flight", m.Op, k+1)
			}
		case CommandDoViewChange:
			if acked := ackedIn[m.LogView]; m.Op < acked && violation == "" {
				violation = fmt.Sprintf("r1 sent DoViewChange for view %d with log view %d ending at op %d, below op %d it acked in that log view",
					m.View, m.LogView, m.Op, acked)
			}
		}
	}
	body := func(s string) []byte { return []byte(s + strings.Repeat(".", 2*SectorSize)) }
	wait := func(id uint64, ticks int) bool {
		for ; c.client(id).Busy() && ticks > 0; ticks-- {
			c.tick(1)
		}
		return !c.client(id).Busy()
	}
	if err := c.client(1).Submit(OperationUserMin, body("a")); err != nil {
		t.Fatal(err)
	}
	if !wait(1, 3000) {
		t.Fatalf("a did not commit:\n%s", c.status())
	}
	c.tick(50)
	r1 := c.nodes[1].replica
	k = c.nodes[0].replica.CommitMax()

	// Op K+1 commits on r0 and r2; r1 learns its header only.
	blocked := true
	c.dropTo = func(from, to int, m *Message) bool {
		return blocked && m.Op == k+1 && (m.Command == CommandPrepare && to == 1 || m.Command == CommandRequestPrepare && from == 1)
	}
	if err := c.client(1).Submit(OperationUserMin, body("b")); err != nil {
		t.Fatal(err)
	}
	if !wait(1, 3000) {
		t.Fatalf("b did not commit:\n%s", c.status())
	}
	for ticks := 0; ticks < 2000; ticks++ {
		if e := r1.log.at(k + 1); e != nil && e.recorded && e.prepare == nil {
			break
		}
		c.tick(1)
	}
	if e := r1.log.at(k + 1); e == nil || !e.recorded || e.prepare != nil {
		t.Fatalf("r1 holds op %d as %+v, want its recorded header only:\n%s", k+1, e, c.status())
	}

	// The repair of K+1 reaches r1; its prepare write stays in flight.
	s := c.nodes[1].storage
	size := uint64(cfg.MessageSizeMax)
	slot := (k + 1) % cfg.JournalSlots
	s.holdWrite = func(z Zone, offset uint64, data []byte) bool {
		return z == ZoneWALPrepares && offset == slot*size
	}
	blocked = false
	for ticks := 0; len(s.held) == 0 && ticks < 1000; ticks++ {
		c.tick(1)
	}
	if len(s.held) == 0 {
		t.Fatalf("r1 wrote no prepare of op %d:\n%s", k+1, c.status())
	}
	held = true
	// r2 is cut off; op K+2 reaches r1, which makes it durable.
	c.group = []int{1, 1, 2}
	if err := c.client(1).Submit(OperationUserMin, body("c")); err != nil {
		t.Fatal(err)
	}
	c.tick(300)
	if e := r1.log.at(k + 2); e == nil || !e.sealed {
		t.Fatalf("r1 holds op %d as %+v, want it sealed:\n%s", k+2, e, c.status())
	}
	if violation != "" {
		t.Fatalf("%s:\n%s", violation, c.status())
	}

	// r0 and r1 crash; the held write tears (its first sector lands) and
	// the faulty disk reads the header sector back as before its first
	// write.
	w := s.held[0]
	c.crash(0)
	c.crash(1)
	held = false
	copy(s.durable[ZoneWALPrepares][w.offset:], w.data[:SectorSize])
	clear(s.durable[ZoneWALHeaders][slot*SectorSize : (slot+1)*SectorSize])
	s.holdWrite = nil
	c.group = []int{0, 0, 0}
	c.start(1)
	c.tick(600)
	c.start(0)
	if !wait(1, 3000) {
		t.Fatalf("c did not commit after the restarts:\n%s", c.status())
	}
	c.tick(300)
	if violation != "" {
		t.Fatalf("%s:\n%s", violation, c.status())
	}
	c.checkAgreement()
}

// TestRecoverySealsTheDurablePreparesItKeeps: a persisted backup (r1)
// restarts with its log view recorded lost (LogViewLost, as an open that
// finds the log of its log view replaced records it) and with the seal of
// a durable prepare gone (its header zone sector read back blank). The
// open leaves the journal as found, so it writes no seal; the recovery
// that follows keeps that prepare in the log it installs. Unless the
// recovery seals it, the journal never records it: recordedHead stays
// below it, the replica never acks past it, and a superblock that makes a
// later log view durable waits for it forever (seed 68044, a five-replica
// core stuck in view changes for the whole liveness phase).
func TestRecoverySealsTheDurablePreparesItKeeps(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	submit := func(id uint64, body string) {
		t.Helper()
		if err := c.client(id).Submit(OperationUserMin, []byte(body)); err != nil {
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
	submit(1, "b")
	submit(1, "c")
	c.tick(50)
	r1 := c.nodes[1].replica
	k := r1.CommitMax()
	if e := r1.log.at(k); e == nil || !e.sealed {
		t.Fatalf("r1 holds op %d as %+v, want it sealed:\n%s", k, e, c.status())
	}
	c.crash(1)
	s := c.nodes[1].storage
	slot := k % cfg.JournalSlots
	clear(s.durable[ZoneWALHeaders][slot*SectorSize : (slot+1)*SectorSize])
	sb := r1.sb.durable
	sb.Sequence++
	sb.LogViewLost = true
	buf := make([]byte, SectorSize)
	encodeSuperblock(&sb, buf)
	copy(s.durable[ZoneSuperblock][(sb.Sequence%superblockCopies)*SectorSize:], buf)

	c.start(1)
	r1 = c.nodes[1].replica
	if r1.Status() != StatusRecovering {
		t.Fatalf("r1 restarted %s, want recovering (its log view recorded lost)", r1.Status())
	}
	c.tick(600)
	if r1.Status() != StatusNormal {
		t.Fatalf("r1 is %s after its recovery:\n%s", r1.Status(), c.status())
	}
	if got := r1.recordedHead(); got < k {
		e := r1.log.at(k)
		t.Fatalf("r1's journal records ops up to %d after the recovery, below op %d it keeps as %+v:\n%s", got, k, e, c.status())
	}
	submit(2, "d")
	c.tick(100)
	c.checkAgreement()
}
