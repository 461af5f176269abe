package vsr

import (
	"testing"

	"github.com/stratabroker/strata/journal"
)

// keepPendingOf makes durable, as a power loss may, the unsynced writes of
// s that carry a journal record of op (both zones of its slot); the crash
// that follows loses the others.
func keepPendingOf(s *testStorage, op uint64) int {
	kept := 0
	for _, w := range s.pending {
		if w.zone != ZoneWALHeaders && w.zone != ZoneWALPrepares {
			continue
		}
		if rec, err := journal.ParseRecord(w.data); err == nil && rec.Op == op {
			copy(s.durable[w.zone][w.offset:], w.data)
			kept++
		}
	}
	return kept
}

// TestPartialSwitchToNewLogViewRecovers: a backup acked op N in view 0
// (its ack never reached the primary, so op N never committed); view 2
// started without it and committed two other ops N' and N+1'. The backup
// then takes view 2's log: the journal records of that log (an installed
// header replacing its op N, one appending op N+1') are written before the
// superblock of log view 2, and a power loss keeps only the first. Its
// durable state says log view 0, its journal no longer holds its op N of
// view 0, and it cannot take view 2 up again (the journal lacks view 2's
// head): voting with log view 0 it would claim a log ending below op N,
// which it acked there (seed 15661 of the default swarm: replica 3 voted
// for view 85 with log view 67 ending at op 38 below its ack of op 41,
// scenarios/bug_vote_below_acked_op_15661.txt). It must recover its log
// from its peers instead, and the cluster go on.
func TestPartialSwitchToNewLogViewRecovers(t *testing.T) {
	t.Run("installed header kept", func(t *testing.T) { testPartialSwitch(t, false) })
	// The other outcome of the power loss: the installed header of op N
	// is lost and the prepare of view 2 repaired over it afterwards is
	// kept, beside the header record that still names view 0's op N.
	t.Run("prepare kept", func(t *testing.T) { testPartialSwitch(t, true) })
}

func testPartialSwitch(t *testing.T, prepareKept bool) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	cfg.Durability = Persisted
	c := newTestCluster(t, cfg)
	submit := func(client uint64, body string) {
		t.Helper()
		if err := c.client(client).Submit(OperationUserMin, []byte(body)); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; c.client(client).Busy() && ticks < 3000; ticks++ {
			c.tick(1)
		}
		if c.client(client).Busy() {
			t.Fatalf("request %q of client %d never completed:\n%s", body, client, c.status())
		}
	}
	submit(1, "a")
	c.tick(50)

	// r1 acks op N of view 0; r0 (whose disk stalls) never hears it and r2
	// (cut off) never sees the op.
	var acked uint64
	c.onSend = func(from int, m *Message) {
		if from == 1 && m.Command == CommandPrepareOk && m.View == 0 {
			acked = max(acked, m.Op)
		}
		if from == 1 && m.Command == CommandDoViewChange && m.LogView == 0 && m.Op < acked {
			t.Errorf("r1 voted for view %d with log view 0 ending at op %d, below op %d it acked in view 0", m.View, m.Op, acked)
		}
	}
	c.drop = func(from int, m *Message) bool { return from == 1 && m.Command == CommandPrepareOk }
	c.group = []int{1, 1, 2}
	c.stalled = map[int]bool{0: true}
	if err := c.client(2).Submit(OperationUserMin, []byte("lost")); err != nil {
		t.Fatal(err)
	}
	base := c.nodes[0].replica.CommitMax()
	c.deliver(false, 1000)
	r1 := c.nodes[1].replica
	lost := base + 1 // client 2's register
	if acked != lost || r1.OpNumber() != lost || r1.CommitMax() >= lost {
		t.Fatalf("r1 acked op %d, holds op %d, commit %d:\n%s", acked, r1.OpNumber(), r1.CommitMax(), c.status())
	}
	old := r1.log.at(lost).header.Checksum

	// r0 loses op N in a crash; r0 and r2 start view 2 without it and
	// commit two other ops, while r1 is cut off.
	c.crash(0)
	delete(c.clients, 2)
	c.stalled = nil
	c.drop = nil
	c.group = []int{1, 2, 1}
	c.start(0)
	r2 := c.nodes[2].replica
	for ticks := 0; !(r2.Primary() && r2.Status() == StatusNormal) && ticks < 3000; ticks++ {
		c.tick(1)
	}
	if !r2.Primary() || r2.View() != 2 || r2.OpNumber() != base {
		t.Fatalf("r2 does not lead view 2 from op %d:\n%s", base, c.status())
	}
	submit(3, "b") // a register and the request: two ops of view 2
	if r2.OpNumber() != lost+1 || r2.CommitMax() != lost+1 {
		t.Fatalf("view 2 did not commit ops %d and %d:\n%s", lost, lost+1, c.status())
	}
	c.tick(10)

	// r1 hears of view 2 and takes its log: then it loses power with the
	// installed header of op N durable and nothing else (its disk stalls),
	// or with only the prepare of op N of view 2 durable (its superblock
	// stalls; the disk state the power loss leaves is set up below).
	st := c.nodes[1].storage
	before := map[Zone][]byte{}
	for _, z := range []Zone{ZoneSuperblock, ZoneWALHeaders, ZoneWALPrepares} {
		before[z] = append([]byte(nil), st.durable[z]...)
	}
	if prepareKept {
		st.hold = map[Zone]bool{ZoneSuperblock: true}
	} else {
		c.stalled = map[int]bool{1: true}
	}
	c.group = []int{0, 0, 0}
	done := func() bool {
		if !prepareKept {
			return r1.LogView() == 2
		}
		e := r1.log.at(lost)
		return r1.LogView() == 2 && e != nil && e.header.View == 2 && e.durable
	}
	for ticks := 0; !done() && ticks < 1000; ticks++ {
		c.tick(1)
	}
	if !done() || r1.sb.durable.LogView != 0 {
		t.Fatalf("r1 did not take view 2's log (log view %d, durable %d):\n%s", r1.LogView(), r1.sb.durable.LogView, c.status())
	}
	if h, ok := r1.log.header(lost); !ok || h.Checksum == old {
		t.Fatalf("view 2's log kept r1's op %d of view 0", lost)
	}
	if prepareKept {
		size := cfg.ZoneSize(ZoneWALPrepares) / cfg.JournalSlots
		slot := lost % cfg.JournalSlots
		prepare := append([]byte(nil), st.durable[ZoneWALPrepares][slot*size:(slot+1)*size]...)
		for z, b := range before {
			copy(st.durable[z], b)
		}
		copy(st.durable[ZoneWALPrepares][slot*size:], prepare)
		st.hold = nil
	} else if kept := keepPendingOf(st, lost); kept != 2 {
		t.Fatalf("kept %d journal writes of op %d, want both zones", kept, lost)
	}
	c.crash(1)
	c.stalled = nil
	c.start(1)
	r1 = c.nodes[1].replica
	if r1.LogView() == 0 && r1.Status() != StatusRecovering && r1.OpNumber() < acked {
		t.Fatalf("r1 restarted %s in log view 0 with a log ending at op %d, below op %d it acked there", r1.Status(), r1.OpNumber(), acked)
	}

	// r1 rejoins view 2 with its log and the cluster goes on.
	for ticks := 0; !(r1.Status() == StatusNormal && r1.LogView() == r2.View() && r1.OpNumber() > lost) && ticks < 3000; ticks++ {
		c.tick(1)
	}
	if r1.Status() != StatusNormal || r1.LogView() != r2.View() {
		t.Fatalf("r1 did not rejoin view %d:\n%s", r2.View(), c.status())
	}
	submit(4, "d")
	c.tick(200)
	c.checkAgreement()
	t.Logf("\n%s", c.status())
}

// TestRestartDropsStraysAboveTheLog: a backup's write of op K is in flight
// when it crashes, while its prepare of op K+1 (of view 0, never
// committed) is durable: it restarts with a log ending at K-1 and op K+1
// in its journal above the hole. View 1 starts with a log ending at op K,
// which the backup, its primary, takes; op K+1 of view 0 is not part of
// it. Restarted again, the journal's chain reaches K and goes on through
// the stray K+1: the replica holds, in log view 1, an op of view 0 that
// view 1's log never had, and its vote disagrees with every other vote of
// log view 1 (narrowed seed 1703: replica 1 voted with log view 53 holding
// op 57 of view 49, scenarios/bug_view_log_disagrees_with_vote_1703.txt;
// seed 2986, scenarios/bug_vote_log_not_prefix_of_log_view_2986.txt). What
// the journal holds above the log at open is removed.
func TestRestartDropsStraysAboveTheLog(t *testing.T) {
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
	r0, r1 := c.nodes[0].replica, c.nodes[1].replica

	// Op K (client 2's request, after its register) commits on r0 and r2
	// while r1's disk stalls.
	c.stalled = map[int]bool{1: true}
	if err := c.client(2).Submit(OperationUserMin, []byte("b")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; c.client(2).Busy() && ticks < 1000; ticks++ {
		c.tick(1)
	}
	if c.client(2).Busy() {
		t.Fatalf("client 2's request did not commit:\n%s", c.status())
	}
	k := r0.CommitMax()
	delete(c.clients, 2)
	// Op K+1 reaches r1 only, and r0's disk stalls too: it never commits.
	c.group = []int{1, 1, 2}
	c.stalled[0] = true
	if err := c.client(3).Submit(OperationUserMin, []byte("c")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; r1.OpNumber() < k+1 && ticks < 1000; ticks++ {
		c.tick(1)
	}
	if r1.OpNumber() != k+1 || r0.CommitMax() > k {
		t.Fatalf("op %d did not reach r1 uncommitted:\n%s", k+1, c.status())
	}
	stray := r1.log.at(k + 1).header
	// r1 loses power with its prepare of K+1 durable and not that of K; r0
	// loses op K+1.
	if kept := keepPendingOf(c.nodes[1].storage, k+1); kept == 0 {
		t.Fatalf("r1 wrote no record of op %d", k+1)
	}
	c.crash(1)
	c.crash(0)
	delete(c.clients, 3)
	c.stalled = nil
	c.group = []int{0, 0, 0}
	c.start(1)
	c.start(0)
	r0, r1 = c.nodes[0].replica, c.nodes[1].replica
	if r1.OpNumber() >= k {
		t.Fatalf("r1 restarted at op %d, want its log to end below the lost write of op %d", r1.OpNumber(), k)
	}

	// View 1, led by r1, starts with the log to op K; r1 crashes once its
	// superblock of log view 1 is durable.
	for ticks := 0; !(r1.Primary() && r1.Status() == StatusNormal && r1.sb.viewDurable(r1.View(), r1.View())) && ticks < 3000; ticks++ {
		c.tick(1)
	}
	if !r1.Primary() || r1.View() != 1 || r1.OpNumber() != k {
		t.Fatalf("r1 does not lead view 1 from op %d:\n%s", k, c.status())
	}
	c.crash(1)
	c.start(1)
	r1 = c.nodes[1].replica
	if h, ok := r1.log.header(k + 1); ok && h.Checksum == stray.Checksum {
		t.Fatalf("r1 restarted in log view %d at op %d with op %d of view %d, which view 1's log does not hold", r1.LogView(), r1.OpNumber(), k+1, h.View)
	}
	if r1.LogView() != 1 || r1.OpNumber() != k {
		t.Fatalf("r1 restarted in log view %d at op %d, want view 1's log to op %d", r1.LogView(), r1.OpNumber(), k)
	}
	if err := c.client(4).Submit(OperationUserMin, []byte("d")); err != nil {
		t.Fatal(err)
	}
	for ticks := 0; c.client(4).Busy() && ticks < 3000; ticks++ {
		c.tick(1)
	}
	if c.client(4).Busy() {
		t.Fatalf("no progress after r1 restarted:\n%s", c.status())
	}
	c.tick(200)
	c.checkAgreement()
}
