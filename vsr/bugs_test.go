package vsr

import (
	"testing"
)

// TestPlantedBugsFound checks that the randomized cluster test catches every
// planted bug within plantedBugSeedsMax seeds; the simulator hunts them too.
func TestPlantedBugsFound(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	for _, name := range BugNames() {
		bug, err := ParseBug(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			switch bug {
			case BugViewChangeLogByOpOnly:
				t.Skip("needs a precise interleaving; TestViewChangeLogChoice scripts it")
			case BugRecoverWithoutPrimary:
				t.Skip("the window before repair fixes the adopted log is a few messages; left to the simulator's hunts")
			case BugAcceptCorruptBody, BugVoteBeforeDurableView:
				t.Skip("needs the simulator's corrupting network and its checks of what a message claims against the disk")
			case BugPollPastCommit, BugCheckpointBeforeSegmentSync, BugOffsetStoreBeforeCommit, BugPersistedReplyBeforeSync, BugPartitionOpBeforeTopic, BugRequestLeftUnanswered:
				t.Skip("a broker-level bug of a partition group's host or read path: the simulator's broker workload finds it")
			}
			for seed := range uint64(plantedBugSeedsMax) {
				if v := runRandomized(t, seed, bug); v != "" {
					t.Logf("found after %d seeds: %.120s", seed+1, v)
					return
				}
			}
			t.Fatalf("planted bug %s not found in %d seeds", name, plantedBugSeedsMax)
		})
	}
}

const plantedBugSeedsMax = 60
