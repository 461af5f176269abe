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
