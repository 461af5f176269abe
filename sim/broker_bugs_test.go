package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrokerLivenessWaitsForClientsOfRestartedGroup runs seed 3999's
// broker parameters: every node of a two-node cluster loses power, the
// replicated groups lose every node's memory and restart from their
// checkpoints, and the liveness core is both nodes, so those groups'
// convergence is checked though their durability is waived. The test
// watches that a client's operation to such a group is outstanding when
// the liveness phase starts (so it cannot pass vacuously) and wants the
// run to pass with none left when the phase ends: the check waited for
// the group's clients too. Skipping them, it passed while the group still
// prepared their ops, and the final check found a commit apart.
func TestBrokerLivenessWaitsForClientsOfRestartedGroup(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "scenarios", "bug_broker_liveness_check_passed_restarting_group_3999.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseScenario(string(text))
	if err != nil {
		t.Fatal(err)
	}
	p := sc.ScenarioParams()
	var pending, left int
	res := runBroker(Options{Params: p}, func(w *brokerWorld) error {
		for range w.params.SafetyTicks {
			if w.violation != nil {
				return nil
			}
			w.Tick()
		}
		restarting := func(g int) bool { return w.lostAll[g] && w.waived(g) != "" }
		for _, cl := range w.clients {
			if cl.call != nil && restarting(cl.call.group) && cl.call.op != brokerPoll && cl.call.op != brokerReadOffset {
				pending++
			}
		}
		w.Liveness()
		if len(w.core) != w.n {
			t.Errorf("core %v is not every node", w.core)
		}
		for _, cl := range w.clients {
			if cl.call != nil && restarting(cl.call.group) {
				left++
				t.Logf("client %d still waits for its %s to group %d", cl.index, brokerOpNames[cl.call.op], cl.call.group)
			}
		}
		return nil
	})
	if pending == 0 {
		t.Errorf("no client's operation to a group restarting from its checkpoints was outstanding at the liveness phase")
	}
	if left != 0 {
		t.Errorf("%d clients' operations to a restarting group outstanding after the liveness phase", left)
	}
	if res.Outcome.Kind != OutcomeOK {
		t.Errorf("outcome %s", res.Outcome)
	}
}

// TestBrokerPollCheckWantsAppliedMessages hands checkPollApplied poll
// replies: one carrying only messages applied at their offsets passes;
// one carrying a message at an offset no node applied (a read past the
// commit frontier, what poll-past-commit serves) or another message than
// the one applied there is reported; a group whose durability is waived
// is not checked.
func TestBrokerPollCheckWantsAppliedMessages(t *testing.T) {
	p := DrawParams(1)
	p.UseBroker()
	p.normalize()
	for _, tc := range []struct {
		name         string
		offsets, ids []uint64
		waived       bool
		want         string // "" passes
	}{
		{"applied", []uint64{0, 1}, []uint64{70, 71}, false, ""},
		{"past the commit frontier", []uint64{1, 2}, []uint64{71, 72}, false, "at offset 2 in a poll, which no node applied"},
		{"another message", []uint64{0}, []uint64{99}, false, "where message 70 was applied"},
		{"waived", []uint64{2}, []uint64{72}, true, ""},
	} {
		w, err := newBrokerWorld(&p, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.appliedIDs = make([]map[uint64]uint64, w.groups)
		w.appliedIDs[0] = map[uint64]uint64{0: 70, 1: 71}
		if tc.waived {
			w.lostMemory[0] = "a test"
		}
		w.checkPollApplied(0, 0, tc.offsets, tc.ids)
		switch {
		case tc.want == "" && w.violation != nil:
			t.Errorf("%s: reported %v", tc.name, w.violation)
		case tc.want != "" && (w.violation == nil || w.violationKind != "poll" || !strings.Contains(w.violation.Error(), tc.want)):
			t.Errorf("%s: reported %v (%s), want %q", tc.name, w.violation, w.violationKind, tc.want)
		}
	}
}
