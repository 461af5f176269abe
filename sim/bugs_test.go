package sim

import (
	"testing"

	"github.com/stratabroker/strata/vsr"
)

// plantedBugSeedsMax is how many seeds each planted bug may take to be
// found.
const plantedBugSeedsMax = 600

// plantedBugBatch is how many seeds run at once while hunting a bug.
const plantedBugBatch = 16

// findPlantedBug runs seeds from 1 with bug planted until one fails while
// the same seed passes without the bug (so that the failure is the bug's,
// not an unrelated one). It returns that result and the number of seeds
// tried, or nil.
func findPlantedBug(bug vsr.BugSet, seedsMax uint64, tune func(*Params)) (*Result, uint64) {
	for first := uint64(1); first <= seedsMax; first += plantedBugBatch {
		results := runSwarm(first, plantedBugBatch, bug, false, tune)
		for _, res := range results {
			if res.Outcome.Kind == OutcomeOK {
				continue
			}
			clean := Run(Options{Params: res.Params})
			if clean.Outcome.Kind == OutcomeOK {
				return res, res.Params.Seed
			}
		}
	}
	return nil, seedsMax
}

// plantedBugTunes narrows the swarm for bugs that live in one corner of
// the parameter space: the hunt still draws every other parameter from
// the seed, but only where the bug can show.
var plantedBugTunes = map[string]func(*Params){
	// The log choice matters only when replicas on different sides of a
	// partition hold different suffixes: three or more replicas, and a
	// network that partitions (and flaps) often.
	"view-change-log-by-op-only": func(p *Params) {
		if p.ReplicaCount < 3 {
			p.ReplicaCount = 3 + int(p.Seed%4)
		}
		p.ClientCount = clientCountMax
		p.PartitionMode = PartitionIsolateOne
		p.PartitionPPM, p.UnpartitionPPM = 3_000, 6_000
	},
	// Recovery exists only under replicated durability with peers; the
	// recovering replica must be able to miss the primary's response, so
	// the primary must be partitioned away now and then.
	"recover-without-primary": func(p *Params) {
		p.Durability = DurabilityReplicated
		p.PowerLossPPM, p.PowerLossAllPPM, p.UnsyncedKeepPPM = 0, 0, 0
		if p.ReplicaCount < 3 {
			p.ReplicaCount = 3 + int(p.Seed%4)
		}
		p.CrashPPM, p.RestartPPM = 2_000, 20_000
		if p.PartitionMode == PartitionNone {
			p.PartitionMode = PartitionIsolateOne
			p.PartitionPPM, p.UnpartitionPPM = 2_000, 5_000
		}
	},
}

func TestPlantedBugsAreFound(t *testing.T) {
	if testing.Short() {
		t.Skip("planted-bug hunts are long")
	}
	for _, name := range []string{
		"commit-without-quorum",
		"ack-persisted-before-sync",
		"view-change-log-by-op-only",
		"forget-client-table-on-view-change",
		"recover-without-primary",
	} {
		name := name
		t.Run(name, func(t *testing.T) {
			bug, err := vsr.ParseBug(name)
			if err != nil {
				t.Skipf("vsr does not expose planted bug %q yet: %v", name, err)
			}
			res, seeds := findPlantedBug(bug, plantedBugSeedsMax, plantedBugTunes[name])
			if res == nil {
				t.Fatalf("planted bug %s not found in %d seeds", name, seeds)
			}
			t.Logf("planted bug %s found at seed %d (%d seeds): %s", name, res.Params.Seed, seeds, firstLineOf(res.Outcome.String()))
		})
	}
}
