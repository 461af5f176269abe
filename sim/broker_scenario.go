package sim

import (
	"fmt"
	"io"
	"strings"

	"github.com/stratabroker/strata/vsr"
)

// runBrokerScenario runs a scenario of the broker workload: the script
// commands run, tick, liveness, crash, power-loss, restart, isolate, heal
// and faults act on nodes (every group of a node together); expect takes
// outcome= and violation=.
func runBrokerScenario(sc *Scenario, params Params, bugs vsr.BugSet, verbose io.Writer) (*Result, error) {
	var failures []string
	res := runBroker(Options{Params: params, Bugs: bugs, Verbose: verbose}, func(w *brokerWorld) error {
		for _, st := range sc.Steps {
			if w.violation != nil {
				return nil
			}
			all := func(f func(i int)) {
				if st.Replica >= 0 {
					f(st.Replica)
					return
				}
				for i := range w.nodes {
					f(i)
				}
			}
			switch st.Command {
			case "expect":
				if st.Expect.Subject != "outcome" && st.Expect.Subject != "violation" {
					msg, err := w.checkExpectation(&st.Expect)
					if err != nil {
						return fmt.Errorf("line %d: %w", st.Line, err)
					}
					if msg != "" {
						failures = append(failures, fmt.Sprintf("line %d: %s", st.Line, msg))
					}
				}
			case "run":
				w.logf("broker safety phase: %d ticks", w.params.SafetyTicks)
				for t := 0; t < w.params.SafetyTicks && w.violation == nil; t++ {
					w.Tick()
				}
			case "tick":
				for t := int64(0); t < st.Number && w.violation == nil; t++ {
					w.Tick()
				}
			case "liveness":
				w.Liveness()
			case "crash":
				all(func(i int) { w.Crash(i, false) })
			case "power-loss":
				all(func(i int) { w.Crash(i, true) })
			case "restart":
				all(func(i int) { w.Restart(i) })
			case "isolate":
				w.network.Isolate(st.Replica)
			case "heal":
				w.network.Heal()
			case "partition", "partition-oneway":
				w.partition(&st)
			case "clog":
				w.logf("clog %d>%d for %d ticks", st.From, st.To, st.Number)
				w.network.Clog(st.From, st.To, w.now+uint64(st.Number))
			case "corrupt":
				if err := w.corrupt(&st); err != nil {
					return fmt.Errorf("line %d: %w", st.Line, err)
				}
			case "faults":
				on := st.Number == 1
				w.faultsEnabled = on
				w.network.SetFaults(on)
				for _, node := range w.nodes {
					for _, s := range node.storages {
						s.SetFaults(on)
					}
				}
			default:
				return fmt.Errorf("line %d: %s is not supported by the broker workload yet", st.Line, st.Command)
			}
		}
		return nil
	})
	for _, st := range sc.Steps {
		e := &st.Expect
		if st.Command != "expect" {
			continue
		}
		switch e.Subject {
		case "outcome":
			if got := res.Outcome.Kind.String(); (got == e.Word) == (e.Op == "!=") {
				failures = append(failures, fmt.Sprintf("line %d: outcome is %s, expected %s%s", st.Line, res.Outcome, e.Op, e.Word))
			}
		case "violation":
			if res.Outcome.Checker != e.Word {
				failures = append(failures, fmt.Sprintf("line %d: failed checker is %q, expected %q (outcome %s)", st.Line, res.Outcome.Checker, e.Word, res.Outcome))
			}
		}
	}
	if len(failures) > 0 {
		return res, fmt.Errorf("scenario expectations failed:\n  %s", strings.Join(failures, "\n  "))
	}
	return res, nil
}
