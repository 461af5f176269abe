package sim

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stratabroker/strata/vsr"
)

// Planted bugs must be found reliably by the default swarm, with no
// narrowing of its parameters: each fails in at least plantedBugRateMin
// of the seeds plantedBugFirst..plantedBugFirst+plantedBugSeeds-1 (a
// failure counts only where the same seed passes without the bug), and
// first within plantedBugFirstWithin seeds.
const (
	plantedBugFirst       = 1
	plantedBugSeeds       = 150
	plantedBugRateMin     = 0.05
	plantedBugFirstWithin = 100
)

// plantedBugRate runs seeds first..first+count-1 with bug planted and
// returns how many fail where the same seed without the bug (clean)
// passes, and the first such seed (0 if none).
func plantedBugRate(bug vsr.BugSet, first, count uint64, clean []*Result, short bool) (found int, firstSeed uint64) {
	results := runSwarm(first, count, bug, false, shortRuns(short))
	for i, res := range results {
		if res.Outcome.Kind == OutcomeOK || clean[i].Outcome.Kind != OutcomeOK {
			continue
		}
		found++
		if firstSeed == 0 {
			firstSeed = res.Params.Seed
		}
	}
	return found, firstSeed
}

// shortRuns caps the safety phase of drawn runs (for -short).
func shortRuns(short bool) func(*Params) {
	if !short {
		return nil
	}
	return func(p *Params) { p.SafetyTicks = min(p.SafetyTicks, 3000) }
}

func TestPlantedBugsAreFound(t *testing.T) {
	count := uint64(plantedBugSeeds)
	if testing.Short() {
		count = 40
	}
	clean := runSwarm(plantedBugFirst, count, 0, false, shortRuns(testing.Short()))
	for _, name := range vsr.BugNames() {
		bug, err := vsr.ParseBug(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			if isBrokerBug(bug) {
				t.Skip("a broker-level bug: TestBrokerPlantedBugsAreFound runs it over the broker swarm")
			}
			found, first := plantedBugRate(bug, plantedBugFirst, count, clean, testing.Short())
			rate := float64(found) / float64(count)
			t.Logf("planted bug %s: %d of seeds %d..%d fail (%.1f%%), first at seed %d",
				name, found, plantedBugFirst, plantedBugFirst+count-1, 100*rate, first)
			if testing.Short() {
				if found == 0 {
					t.Fatalf("planted bug %s not found in %d short seeds", name, count)
				}
				return
			}
			if rate < plantedBugRateMin {
				t.Errorf("planted bug %s fails in %.1f%% of the seeds, want at least %.0f%%", name, 100*rate, 100*plantedBugRateMin)
			}
			if first == 0 || first >= plantedBugFirst+plantedBugFirstWithin {
				t.Errorf("planted bug %s first fails at seed %d, want within %d seeds", name, first, plantedBugFirstWithin)
			}
		})
	}
}

// TestSendCheckJudgesTheLogARecoveryEndsWith hands the send checker the
// end of a recovery round of replica 1 of a settled cluster: with the
// primary of the latest view among the answers, normal in it, the
// recovered log must reach as far as the primary's answer; with no such
// answer, as far as the best log answered. A log as long passes; a
// shorter one (what recover-without-primary adopts: the shortest answer)
// is reported.
func TestSendCheckJudgesTheLogARecoveryEndsWith(t *testing.T) {
	p := QuietParams(1, 3, 2, DurabilityReplicated)
	c, err := NewCluster(&p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 300 {
		c.Tick()
	}
	r := c.replicas[1]
	if c.violation != nil || r.Status() != vsr.StatusNormal || r.OpNumber() == 0 {
		t.Fatalf("cluster not settled: %v %s", c.violation, c.ReplicaSummary())
	}
	view, op := r.View(), r.OpNumber()
	primary := int(view % 3)
	other := 3 - 1 - primary // the third replica (neither 1 nor the primary)
	if primary == 1 {
		t.Fatalf("replica 1 leads view %d: pick another seed", view)
	}
	for _, tc := range []struct {
		name    string
		answers map[int]recoveryAnswer
		want    string // "" passes
		dropped int    // the peer whose answer the replica dropped, or -1
	}{
		{"the primary's log", map[int]recoveryAnswer{
			primary: {view: view, logView: view, op: op},
			other:   {view: view, logView: view, op: op - 1},
		}, "", -1},
		{"short of the primary's answer", map[int]recoveryAnswer{
			primary: {view: view, logView: view, op: op + 3},
			other:   {view: view, logView: view, op: op},
		}, "short of op " + strconv.FormatUint(op+3, 10) + " in the answer of the primary", -1},
		{"short of the best answer, the primary in a view change", map[int]recoveryAnswer{
			primary: {view: view, logView: view, op: op + 2, viewChange: true},
			other:   {view: view, logView: view, op: op + 1},
		}, "short of op " + strconv.FormatUint(op+2, 10) + " in the answer of the best log answered", -1},
		// Seed 27382: the replica dropped the round's answers (the longer
		// log lay beyond its checkpoint's reach) and ended its recovery on
		// those it collected afresh; the longer answer was not re-sent.
		// The log passes; the rule after it then reports the missing word
		// of the primary, as replica 1 here is normal, not in the view
		// change such a recovery starts.
		{"the best of the answers still held, a longer one dropped", map[int]recoveryAnswer{
			primary: {view: view, logView: view, op: op + 2, viewChange: true},
			other:   {view: view, logView: view, op: op, viewChange: true},
		}, "ended its recovery without the word of replica", primary},
		{"short of the best answer still held", map[int]recoveryAnswer{
			primary: {view: view, logView: view, op: op + 2, viewChange: true},
			other:   {view: view, logView: view, op: op + 1, viewChange: true},
		}, "short of op " + strconv.FormatUint(op+1, 10) + " in the answer of the best log answered", primary},
	} {
		c.sends.violation = nil
		c.sends.recovery[1] = recoveryRound{nonce: 1, responses: tc.answers}
		c.sends.recovery[1].forgetDropped(func(peer int) bool { return peer != tc.dropped })
		c.sends.OnRecovered(1)
		err := c.sends.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: reported %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: reported %v, want %q", tc.name, err, tc.want)
		}
	}
}
