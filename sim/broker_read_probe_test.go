package sim

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBrokerReadProbeRetriedAfterViewChange runs seed 746's broker
// parameters: the liveness phase finds the core converged at the heal, but
// group 0's backup node 2, cut off from its primary node 0 until then,
// times out three ticks later and the view moves on, so the first read
// probe at node 0 is refused (view_change). The test wants that path (a
// second probe round, group 0 past view 3) and the run to pass: a read
// refused because its replica left the view is probed again once the core
// converged again. With one probe round the run failed liveness.
func TestBrokerReadProbeRetriedAfterViewChange(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "scenarios", "bug_broker_read_probe_view_change_746.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseScenario(string(text))
	if err != nil {
		t.Fatal(err)
	}
	p := sc.ScenarioParams()
	var rounds int
	var view uint64
	res := runBroker(Options{Params: p}, func(w *brokerWorld) error {
		for range w.params.SafetyTicks {
			if w.violation != nil {
				return nil
			}
			w.Tick()
		}
		w.Liveness()
		rounds = w.readProbeRounds
		if h := w.host(0, 0); h != nil {
			view = h.Replica().View()
		}
		t.Logf("liveness ended at tick %d: %d read probe rounds, group 0 node 0 in view %d", w.now, rounds, view)
		return nil
	})
	if rounds < 2 || view <= 3 {
		t.Errorf("the run never took the path (%d read probe rounds, group 0 node 0 in view %d)", rounds, view)
	}
	if res.Outcome.Kind != OutcomeOK {
		t.Errorf("outcome %s", res.Outcome)
	}
}

// TestBrokerReadProbeRefusedInItsViewFails: the retry covers a read whose
// replica left its view only. After seed 746's liveness phase the core
// [0 2] serves reads in view 5 (primary node 2); with node 0 isolated too,
// node 2's read rounds go unanswered and its read times out while it stays
// the normal primary of view 5: the probe reports the refusal and asks for
// no second round.
func TestBrokerReadProbeRefusedInItsViewFails(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "scenarios", "bug_broker_read_probe_view_change_746.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseScenario(string(text))
	if err != nil {
		t.Fatal(err)
	}
	p := sc.ScenarioParams()
	var served, refused string
	var servedRetry, refusedRetry bool
	runBroker(Options{Params: p}, func(w *brokerWorld) error {
		for range w.params.SafetyTicks {
			if w.violation != nil {
				return nil
			}
			w.Tick()
		}
		w.Liveness()
		if w.violation != nil || w.livenessProblem() != "" {
			t.Fatalf("the liveness phase did not converge: %s", w.livenessProblem())
		}
		served, servedRetry = w.probeReads()
		w.network.Isolate(0)
		refused, refusedRetry = w.probeReads()
		if h := w.host(2, 0); h == nil || !h.Replica().Primary() || h.Replica().View() != 5 {
			t.Fatalf("group 0's node 2 is no longer the primary of view 5")
		}
		return nil
	})
	t.Logf("probe in the core: %q (retry %v); with node 0 isolated: %q (retry %v)", served, servedRetry, refused, refusedRetry)
	if served != "" || servedRetry {
		t.Errorf("a probe in the converged core: %q, retry %v; want served", served, servedRetry)
	}
	if refused == "" || refusedRetry {
		t.Errorf("a probe whose read round cannot reach a quorum: %q, retry %v; want refused, no retry", refused, refusedRetry)
	}
}
