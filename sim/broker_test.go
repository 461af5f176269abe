package sim

import (
	"sync"
	"testing"
	"time"

	"github.com/stratabroker/strata/vsr"
)

// brokerSwarmFirst and brokerSwarmSeeds are the broker swarm inside go
// test (seeds drawn with the broker workload forced): issue 13 asks for at
// least 500 seeds in make test, about 35 s of CPU with invariants on (70
// ms a seed, TestBrokerSwarm logs the rate). brokerPlantedSeeds, the first
// of them, are run again under each broker-level planted bug: four bugs
// over all 500 would be another 140 s of CPU for rates that 80 seeds
// already measure.
const (
	brokerSwarmFirst   = 1
	brokerSwarmSeeds   = 500
	brokerPlantedSeeds = 80
)

// brokerTune forces the broker workload on drawn parameters.
func brokerTune(p *Params) { p.UseBroker() }

// brokerSwarmCount is the broker swarm's size (smaller with -short).
func brokerSwarmCount() uint64 {
	if testing.Short() {
		return 20
	}
	return brokerSwarmSeeds
}

// brokerPlantedCount is how many of the broker swarm's seeds each planted
// bug runs (the first of them; smaller with -short).
func brokerPlantedCount() uint64 {
	return min(brokerSwarmCount(), brokerPlantedSeeds)
}

var (
	brokerCleanOnce    sync.Once
	brokerClean        []*Result
	brokerCleanElapsed time.Duration
)

// brokerCleanRun runs the broker swarm without planted bugs once for the
// tests that need it.
func brokerCleanRun() ([]*Result, time.Duration) {
	brokerCleanOnce.Do(func() {
		start := time.Now()
		brokerClean = runSwarm(brokerSwarmFirst, brokerSwarmCount(), 0, false, brokerTune)
		brokerCleanElapsed = time.Since(start)
	})
	return brokerClean, brokerCleanElapsed
}

// TestBrokerSwarm runs the real partition machine through the real group
// host under every drawn fault: every seed passes, and the workload did
// what it is there for (acknowledged sends, polls that returned messages,
// faults).
func TestBrokerSwarm(t *testing.T) {
	count := brokerSwarmCount()
	results, elapsed := brokerCleanRun()
	var acked, polls, crashes, groups, waived int
	var reads readCounters
	for _, res := range results {
		if res.Outcome.Kind != OutcomeOK {
			t.Errorf("seed %d: %s", res.Params.Seed, res.Outcome)
			continue
		}
		if res.broker == nil {
			t.Fatalf("seed %d ran the kv workload", res.Params.Seed)
		}
		acked += res.broker.ackedSends
		polls += res.broker.nonEmptyPolls
		groups += res.broker.groups
		crashes += int(res.Process.Crashes)
		r := &res.broker.reads
		reads.servedAtOnce += r.servedAtOnce
		reads.servedAfterRound += r.servedAfterRound
		reads.refused += r.refused
		reads.refusedAfterWait += r.refusedAfterWait
		if res.DurabilityWaived != "" {
			waived++
		}
	}
	t.Logf("broker swarm: %d seeds in %s (%.0f seeds/minute), %d groups, %d acknowledged sends, %d non-empty polls, %d node crashes, %d seeds with a replicated topic's checks waived",
		count, elapsed.Round(time.Millisecond), float64(count)/elapsed.Minutes(), groups, acked, polls, crashes, waived)
	t.Logf("broker reads: %d served at once, %d after a read round, %d refused at once, %d refused after waiting (admitted by a primary that then left its view or was not confirmed in time)",
		reads.servedAtOnce, reads.servedAfterRound, reads.refused, reads.refusedAfterWait)
	if acked == 0 || polls == 0 || crashes == 0 {
		t.Fatalf("the broker workload did nothing: %d acknowledged sends, %d non-empty polls, %d crashes", acked, polls, crashes)
	}
}

// TestBrokerDeterminism runs broker seeds twice: the same trace hash,
// and different seeds differ.
func TestBrokerDeterminism(t *testing.T) {
	run := func(seed uint64) *Result {
		p := DrawParams(seed)
		p.UseBroker()
		p.SafetyTicks = 2000
		return Run(Options{Params: p})
	}
	for _, seed := range []uint64{1, 2, 3, 17, 99} {
		a, b := run(seed), run(seed)
		if a.TraceHash != b.TraceHash || a.Ticks != b.Ticks || a.Outcome.Kind != b.Outcome.Kind {
			t.Fatalf("seed %d: runs differ: %016x/%d/%s vs %016x/%d/%s", seed, a.TraceHash, a.Ticks, a.Outcome.Kind, b.TraceHash, b.Ticks, b.Outcome.Kind)
		}
		if a.Network.Delivered == 0 || a.broker == nil {
			t.Fatalf("seed %d delivered nothing or did not run the broker", seed)
		}
	}
	if run(1).TraceHash == run(2).TraceHash {
		t.Fatal("different broker seeds gave the same trace hash")
	}
}

// brokerBugs are the planted bugs of the broker level: the kv workload
// cannot find them.
var brokerBugs = []vsr.BugSet{vsr.BugPollPastCommit, vsr.BugOffsetStoreBeforeCommit, vsr.BugPersistedReplyBeforeSync, vsr.BugCheckpointBeforeSegmentSync, vsr.BugPartitionOpBeforeTopic,
	vsr.BugRequestLeftUnanswered}

// brokerDescriptorCheckpoints reports whether the broker workload's
// partition groups take the host's descriptor checkpoints (recorded once
// their segment frontier is synced), the path the planted
// BugCheckpointBeforeSegmentSync breaks; with vsr's own whole-machine
// checkpoints no checkpoint waits for a segment sync in the first place.
func brokerDescriptorCheckpoints(t *testing.T) bool {
	p := DrawParams(1)
	p.UseBroker()
	p.normalize()
	w, err := newBrokerWorld(&p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w.nodes[0].hosts[0].DescriptorCheckpoints()
}

// TestBrokerPlantedBugsAreFound runs each broker-level planted bug over
// the broker swarm: it fails in at least plantedBugRateMin of the seeds
// (a failure counts only where the same seed passes without it), first
// within plantedBugFirstWithin seeds.
func TestBrokerPlantedBugsAreFound(t *testing.T) {
	const first = brokerSwarmFirst
	count := brokerPlantedCount()
	clean, _ := brokerCleanRun()
	descriptors := brokerDescriptorCheckpoints(t)
	for _, bug := range brokerBugs {
		name := bugName(bug)
		t.Run(name, func(t *testing.T) {
			if bug == vsr.BugCheckpointBeforeSegmentSync && !descriptors {
				t.Skip("the partition groups take vsr's whole-machine checkpoints, which never wait for a segment sync: the bug has no correct path to break until the host's descriptor checkpoints are the groups' only checkpoints")
			}
			results := runSwarm(first, count, bug, false, brokerTune)
			found, firstSeed := 0, uint64(0)
			var checkers []string
			for i, res := range results {
				if res.Outcome.Kind == OutcomeOK || clean[i].Outcome.Kind != OutcomeOK {
					continue
				}
				found++
				if firstSeed == 0 {
					firstSeed = res.Params.Seed
				}
				checkers = append(checkers, res.Outcome.Checker)
			}
			rate := float64(found) / float64(count)
			t.Logf("planted bug %s: %d of broker seeds %d..%d fail (%.1f%%), first at seed %d; checkers %v",
				name, found, first, first+count-1, 100*rate, firstSeed, checkers)
			if testing.Short() {
				if found == 0 {
					t.Fatalf("planted bug %s not found in %d short broker seeds", name, count)
				}
				return
			}
			if rate < plantedBugRateMin {
				t.Errorf("planted bug %s fails in %.1f%% of the broker seeds, want at least %.0f%%", name, 100*rate, 100*plantedBugRateMin)
			}
			if firstSeed == 0 || firstSeed >= first+plantedBugFirstWithin {
				t.Errorf("planted bug %s first fails at broker seed %d, want within %d seeds", name, firstSeed, plantedBugFirstWithin)
			}
		})
	}
}

func bugName(bug vsr.BugSet) string {
	for _, name := range vsr.BugNames() {
		if b, _ := vsr.ParseBug(name); b == bug {
			return name
		}
	}
	return "unknown"
}

func isBrokerBug(bug vsr.BugSet) bool {
	for _, b := range brokerBugs {
		if b == bug {
			return true
		}
	}
	return false
}
