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
func findPlantedBug(bug vsr.BugSet, seedsMax uint64) (*Result, uint64) {
	for first := uint64(1); first <= seedsMax; first += plantedBugBatch {
		results := runSwarm(first, plantedBugBatch, bug, false, nil)
		for _, res := range results {
			if res.Outcome.Kind == OutcomeOK {
				continue
			}
			clean := Run(Options{Params: DrawParams(res.Params.Seed)})
			if clean.Outcome.Kind == OutcomeOK {
				return res, res.Params.Seed
			}
		}
	}
	return nil, seedsMax
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
			res, seeds := findPlantedBug(bug, plantedBugSeedsMax)
			if res == nil {
				t.Fatalf("planted bug %s not found in %d seeds", name, seeds)
			}
			t.Logf("planted bug %s found at seed %d (%d seeds): %s", name, res.Params.Seed, seeds, firstLineOf(res.Outcome.String()))
		})
	}
}
