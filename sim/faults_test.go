package sim

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stratabroker/strata/vsr"
)

// faultyStorage returns a disk of replica 0, marked faulty, with the
// journal zones sized for 4 slots of 4 sectors and a 2-copy superblock.
func faultyStorage(t *testing.T, set func(p *Params)) (*Storage, *uint64) {
	t.Helper()
	p := QuietParams(1, 3, 1, DurabilityPersisted)
	p.StorageFaultyReplica = []int{0}
	p.MessageSizeMax = 4 * vsr.SectorSize
	p.JournalSlots = 16
	set(&p)
	now := new(uint64)
	s := NewStorage(0, &p, NewPRNG(7), now, map[vsr.Zone]uint64{
		vsr.ZoneSuperblock:  2 * vsr.SectorSize,
		vsr.ZoneWALHeaders:  4 * vsr.SectorSize,
		vsr.ZoneWALPrepares: 16 * vsr.SectorSize,
		vsr.ZoneCheckpoint:  8 * vsr.SectorSize,
	})
	return s, now
}

func writeSync(t *testing.T, s *Storage, now *uint64, zone vsr.Zone, offset uint64, data []byte) {
	t.Helper()
	s.Write(zone, offset, data, func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	})
	settle(s, now)
	s.Sync(func(error) {})
	settle(s, now)
}

func TestStorageStaleReadReturnsContentBeforeTheLastWrite(t *testing.T) {
	s, now := faultyStorage(t, func(p *Params) { p.StaleReadPPM = PPM })
	writeSync(t, s, now, vsr.ZoneCheckpoint, 0, sectors(2, 'a'))
	writeSync(t, s, now, vsr.ZoneCheckpoint, 0, sectors(2, 'b'))
	got, err := readBack(t, s, now, vsr.ZoneCheckpoint, 0, 2)
	if err != nil || !bytes.Equal(got, sectors(2, 'a')) || s.Counters.StaleReads != 1 || s.Counters.StaleCheckpointReads != 1 {
		t.Fatalf("stale read: err %v, first byte %q, %d stale reads", err, got[0], s.Counters.StaleReads)
	}
	s.SetFaults(false)
	if got, _ := readBack(t, s, now, vsr.ZoneCheckpoint, 0, 2); !bytes.Equal(got, sectors(2, 'b')) {
		t.Fatal("with faults off the read is stale")
	}
}

func TestStorageNeverFaultsBothCopiesOfAJournalSlot(t *testing.T) {
	s, now := faultyStorage(t, func(p *Params) { p.StaleReadPPM = PPM })
	// Slot 1: header record at sector 1, prepare at sectors 4..7.
	for _, fill := range []byte{'a', 'b'} {
		writeSync(t, s, now, vsr.ZoneWALHeaders, vsr.SectorSize, sectors(1, fill))
		writeSync(t, s, now, vsr.ZoneWALPrepares, 4*vsr.SectorSize, sectors(4, fill))
	}
	header, _ := readBack(t, s, now, vsr.ZoneWALHeaders, vsr.SectorSize, 1)
	prepare, _ := readBack(t, s, now, vsr.ZoneWALPrepares, 4*vsr.SectorSize, 4)
	if header[0] != 'a' {
		t.Fatalf("header read not stale: %q", header[0])
	}
	if prepare[0] != 'b' {
		t.Fatal("both copies of slot 1 read stale: the slot's datum is lost on this replica")
	}
	// A clean rewrite of the header lifts the budget for the prepare.
	s.SetFaults(false)
	writeSync(t, s, now, vsr.ZoneWALHeaders, vsr.SectorSize, sectors(1, 'c'))
	s.SetFaults(true)
	writeSync(t, s, now, vsr.ZoneWALPrepares, 4*vsr.SectorSize, sectors(4, 'c'))
	if prepare, _ := readBack(t, s, now, vsr.ZoneWALPrepares, 4*vsr.SectorSize, 4); prepare[0] != 'b' {
		t.Fatalf("prepare read not stale after the header was rewritten: %q", prepare[0])
	}
}

func TestStorageSuperblockFaultsSpareTheNewestCopy(t *testing.T) {
	s, now := faultyStorage(t, func(p *Params) { p.LatentErrorPPM = PPM })
	writeSync(t, s, now, vsr.ZoneSuperblock, 0, sectors(1, '1'))
	writeSync(t, s, now, vsr.ZoneSuperblock, vsr.SectorSize, sectors(1, '2'))
	if _, err := readBack(t, s, now, vsr.ZoneSuperblock, vsr.SectorSize, 1); err != nil {
		t.Fatalf("the newest superblock copy is unreadable: %v", err)
	}
	if _, err := readBack(t, s, now, vsr.ZoneSuperblock, 0, 1); !errors.Is(err, ErrLatentSector) {
		t.Fatalf("the older copy was not struck: %v", err)
	}
	if s.Counters.LatentSuperblock == 0 {
		t.Fatal("no superblock latent error counted")
	}
	// Rewriting the older copy makes it the newest: now the other one rots.
	writeSync(t, s, now, vsr.ZoneSuperblock, 0, sectors(1, '3'))
	if _, err := readBack(t, s, now, vsr.ZoneSuperblock, 0, 1); err != nil {
		t.Fatalf("the newest superblock copy is unreadable: %v", err)
	}
}

func TestStorageShadowHoldsWhereMisdirectedWritesWereMeantToGo(t *testing.T) {
	s, now := faultyStorage(t, func(p *Params) { p.MisdirectPPM = PPM })
	writeSync(t, s, now, vsr.ZoneCheckpoint, 2*vsr.SectorSize, sectors(1, 'x'))
	if s.Counters.MisdirectedWrite != 1 || s.Counters.MisdirectedCheckpoint != 1 {
		t.Fatalf("%d misdirected writes", s.Counters.MisdirectedWrite)
	}
	if got, _ := readBack(t, s, now, vsr.ZoneCheckpoint, 2*vsr.SectorSize, 1); got[0] == 'x' {
		t.Fatal("a misdirected write landed where it was meant to")
	}
	buf := make([]byte, vsr.SectorSize)
	s.readDurable(vsr.ZoneCheckpoint, 2*vsr.SectorSize, buf)
	if buf[0] != 'x' {
		t.Fatal("the checkers' view lost a write the replica made durable")
	}
}

func TestStorageInterruptLeavesTheRestPending(t *testing.T) {
	p := QuietParams(1, 3, 1, DurabilityPersisted)
	p.IOLatencyTicksMax = 1
	s, now := testStorage(t, &p, 0)
	done := 0
	s.Write(vsr.ZoneWALPrepares, 0, sectors(1, 'a'), func(error) { done++; s.interrupt = true })
	s.Write(vsr.ZoneWALPrepares, vsr.SectorSize, sectors(1, 'b'), func(error) { done++ })
	*now++
	s.Tick(*now)
	if done != 1 || s.Pending() != 1 {
		t.Fatalf("after an interrupt: %d completions, %d pending", done, s.Pending())
	}
}

func TestNetworkCorruptsAndFlags(t *testing.T) {
	p := QuietParams(1, 2, 1, DurabilityReplicated)
	p.CorruptPPM = PPM
	p.normalize()
	n := NewNetwork[*vsr.Message](3, 2, &p, NewPRNG(3), (*vsr.Message).Clone, corruptMessage)
	for i := 0; i < 200; i++ {
		m := &vsr.Message{Header: vsr.Header{Command: vsr.CommandCommit, Op: uint64(i)}, Body: []byte("body")}
		m.Seal()
		n.Send(0, 0, 1, m)
	}
	delivered := 0
	for now := uint64(0); now < 100; now++ {
		n.DeliverDue(now, func(_, _ int, m *vsr.Message, corrupted bool) {
			delivered++
			if !corrupted || m.Valid() {
				t.Fatalf("packet flagged %v, valid %v", corrupted, m.Valid())
			}
		})
	}
	if delivered != 200 || n.Counters.Corrupted != 200 {
		t.Fatalf("%d delivered, %d corrupted", delivered, n.Counters.Corrupted)
	}
}

// corruptingRun runs a three-replica cluster whose network corrupts a
// fifth of the packets.
func corruptingRun(bugs vsr.BugSet) *Result {
	p := QuietParams(5, 3, 3, DurabilityPersisted)
	p.CorruptPPM = PPM / 5
	p.SafetyTicks = 2000
	return Run(Options{Params: p, Bugs: bugs})
}

func TestCorruptedPacketsAreRejected(t *testing.T) {
	res := corruptingRun(0)
	if res.Outcome.Kind != OutcomeOK || res.Process.CorruptedRejected == 0 || res.Completed == 0 {
		t.Fatalf("outcome %s, %d corrupted packets rejected, %d completed", res.Outcome, res.Process.CorruptedRejected, res.Completed)
	}
	bugged := corruptingRun(vsr.BugAcceptCorruptBody)
	if bugged.Outcome.Checker != "corruption" {
		t.Fatalf("a replica that handles corrupted packets was not caught: %s", bugged.Outcome)
	}
}

// TestSendChecksCatchVotesAndAcksAheadOfTheDisk hands the send checks a
// vote and an ack that claim more than the replica's disk holds, and
// checks each is reported; then plants the ordering bug the ack check
// exists for and checks a run is caught by it while the clean run passes.
func TestSendChecksCatchVotesAndAcksAheadOfTheDisk(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  func(r *vsr.Replica) *vsr.Message
		want string
	}{
		{"vote for a view not yet durable", func(r *vsr.Replica) *vsr.Message {
			return &vsr.Message{Header: vsr.Header{Command: vsr.CommandDoViewChange, View: r.View() + 1, LogView: r.LogView(), Op: r.OpNumber(), Commit: r.CommitNumber()}}
		}, "before its superblock recorded the view"},
		{"ack of a prepare not yet durable", func(r *vsr.Replica) *vsr.Message {
			return &vsr.Message{Header: vsr.Header{Command: vsr.CommandPrepareOk, View: r.View(), Op: r.OpNumber() + 1, Commit: r.CommitNumber(), Context: vsr.Uint128{Lo: 1}}}
		}, "before its journal made the prepare durable"},
	} {
		p := QuietParams(1, 3, 2, DurabilityPersisted)
		c, err := NewCluster(&p, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 300 {
			c.Tick()
		}
		if c.violation != nil || c.replicas[1].Status() != vsr.StatusNormal {
			t.Fatalf("%s: cluster not settled: %v %s", tc.name, c.violation, c.ReplicaSummary())
		}
		c.sends.OnSend(1, tc.msg(c.replicas[1]))
		if err := c.sends.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: send check reported %v, want %q", tc.name, err, tc.want)
		}
	}
	caught := 0
	for seed := uint64(1); seed <= 4; seed++ {
		p := QuietParams(seed, 3, 4, DurabilityPersisted)
		p.IOLatencyTicksMax = 20
		p.SafetyTicks = 3000
		p.RequestsPerClient = 12 // fewer ops than journal slots
		if clean := Run(Options{Params: p}); clean.Outcome.Kind != OutcomeOK {
			t.Fatalf("seed %d without a bug: %s", seed, clean.Outcome)
		}
		if res := Run(Options{Params: p, Bugs: vsr.BugAckPersistedBeforeSync}); res.Outcome.Checker == "send" {
			caught++
		}
	}
	if caught == 0 {
		t.Error("acks before the journal sync not caught by the send checks in 4 seeds")
	}
}

func TestTimedCrashesStrike(t *testing.T) {
	p := QuietParams(3, 3, 4, DurabilityPersisted)
	p.CrashAfterPrepareOkPPM = 100_000
	p.CrashAfterSuperblockPPM = 100_000
	p.CrashBeforeSuperblockPPM = 100_000
	p.CrashMidCheckpointPPM = 300_000
	p.PowerLossPPM = PPM / 2
	p.RestartPPM = 20_000
	p.JournalSlots = 32
	p.CheckpointIntervalOps = 4
	p.RequestsPerClient = 6 // fewer ops than journal slots
	res := Run(Options{Params: p})
	if res.Outcome.Kind != OutcomeOK {
		t.Fatalf("outcome %s", res.Outcome)
	}
	for _, k := range []timedKind{timedAfterPrepareOk, timedAfterSuperblock, timedBeforeSuperblock, timedMidCheckpoint} {
		if res.Process.Timed[k] == 0 {
			t.Errorf("no crash %s", timedKindNames[k])
		}
	}
}

// TestDrawParamsReachesEveryCorner checks item 1 of issue 12 on the
// parameter draw itself: every fault class is off in some seeds and on in
// others, and the configuration reaches its extremes.
func TestDrawParamsReachesEveryCorner(t *testing.T) {
	type span struct{ zero, nonzero int }
	rates := map[string]*span{}
	var slotsMin, slotsMax, longRuns, soloRuns, pipelineOne, queueZero, slowDisks, tightMessages int
	for seed := uint64(1); seed <= 2000; seed++ {
		p := DrawParams(seed)
		for _, f := range paramFields {
			if !strings.HasSuffix(f.name, "_ppm") {
				continue
			}
			s := rates[f.name]
			if s == nil {
				s = &span{}
				rates[f.name] = s
			}
			if f.get(&p) == 0 {
				s.zero++
			} else {
				s.nonzero++
			}
		}
		if p.JournalSlots <= uint64(max(vsr.JournalSlotsMin, 4*p.PipelinePrepareMax))+2 {
			slotsMin++
		}
		if p.JournalSlots >= 768 {
			slotsMax++
		}
		if p.SafetyTicks >= 30_000 {
			longRuns++
		}
		if p.ReplicaCount == 1 {
			soloRuns++
		}
		if p.PipelinePrepareMax == 1 {
			pipelineOne++
		}
		if p.RequestQueueMax == 0 {
			queueZero++
		}
		if len(p.SlowDiskReplica) > 0 {
			slowDisks++
		}
		if p.MessageSizeMax == messageSizeMin(p.JournalSlots) {
			tightMessages++
		}
		q := p
		q.normalize()
		if q.JournalSlots != p.JournalSlots || q.MessageSizeMax != p.MessageSizeMax || q.WALBytesMax != p.WALBytesMax ||
			q.PipelinePrepareMax != p.PipelinePrepareMax || q.RequestQueueMax != p.RequestQueueMax ||
			q.CheckpointIntervalOps != p.CheckpointIntervalOps || q.PaddingBytesMax != p.PaddingBytesMax {
			t.Fatalf("seed %d: the drawn replica configuration is not one the simulator runs as drawn:\n%+v\n%+v", seed, p, q)
		}
		cfg := vsr.DefaultConfig(simCluster, uint8(p.ReplicaCount), 0)
		cfg.JournalSlots, cfg.MessageSizeMax, cfg.WALBytesMax = p.JournalSlots, p.MessageSizeMax, p.WALBytesMax
		cfg.PipelinePrepareMax, cfg.RequestQueueMax, cfg.CheckpointIntervalOps = p.PipelinePrepareMax, p.RequestQueueMax, p.CheckpointIntervalOps
		if err := cfg.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	for name, s := range rates {
		if s.nonzero == 0 || (s.zero == 0 && name != "read_ppm" && name != "restart_ppm") {
			t.Errorf("%s: %d seeds with it off, %d with it on", name, s.zero, s.nonzero)
		}
	}
	for name, n := range map[string]int{
		"smallest journal": slotsMin, "journal near vsr's default": slotsMax, "runs of 30,000+ ticks": longRuns,
		"one replica": soloRuns, "pipeline of 1": pipelineOne, "no request queue": queueZero, "slow disks": slowDisks,
		"smallest message size": tightMessages,
	} {
		if n == 0 {
			t.Errorf("no seed in 2,000 draws %s", name)
		}
	}
}
