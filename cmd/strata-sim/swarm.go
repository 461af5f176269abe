package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/stratabroker/strata/sim"
)

// swarmSeedsMax bounds one swarm invocation.
const swarmSeedsMax = 100_000_000

// cmdSwarm runs --seeds seeds from --from on --parallel goroutines (each
// seed's run is single-goroutine and independent), reports each failure,
// and prints the summary line "N passed, N failed".
func cmdSwarm(args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("swarm", flag.ContinueOnError)
	seeds := fs.Uint64("seeds", 100, "number of seeds")
	from := fs.Uint64("from", 1, "first seed")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "seeds run at once")
	ticks := fs.Int("ticks", 0, "safety-phase ticks (default: drawn from the seed)")
	var bugs bugFlag
	fs.Var(&bugs, "bug", "plant a vsr bug (repeatable)")
	var sets setFlag
	fs.Var(&sets, "set", "override a drawn parameter, NAME=VALUE (repeatable; names as in scenario files, plus replicas, clients, durability)")
	var workload workloadFlag
	fs.Var(&workload, "workload", "kv or broker for every seed (default: drawn, broker for a share of the seeds)")
	if err := fs.Parse(args); err != nil {
		return 1, err
	}
	if err := sets.apply(&sim.Params{}); err != nil {
		return 1, err
	}
	if *seeds == 0 || *seeds > swarmSeedsMax {
		return 1, fmt.Errorf("--seeds must be 1..%d", swarmSeedsMax)
	}
	if *parallel < 1 {
		*parallel = 1
	}
	debug.SetGCPercent(sim.SwarmGCPercent)
	start := time.Now()
	next := make(chan uint64)
	done := make(chan *sim.Result)
	var wg sync.WaitGroup
	for w := 0; w < *parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				params := workload.apply(sim.DrawParams(*from + i))
				if *ticks > 0 {
					params.SafetyTicks = *ticks
				}
				_ = sets.apply(&params) // validated above
				done <- sim.Run(sim.Options{Params: params, Bugs: bugs.set()})
			}
		}()
	}
	go func() {
		for i := uint64(0); i < *seeds; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		close(done)
	}()

	// The collector keeps only counters: results are dropped as they come
	// so that a long swarm runs in constant memory.
	var passed, failed uint64
	code := 0
	firstFailedSeed := uint64(0)
	var coverage sim.CoverageTable
	var ticksTotal uint64
	for res := range done {
		ticksTotal += res.Ticks
		coverage.Add(res.Coverage())
		if res.Outcome.Kind == sim.OutcomeOK {
			passed++
			continue
		}
		failed++
		firstLine, _, _ := strings.Cut(res.Outcome.String(), "\n")
		fmt.Fprintf(stdout, "FAIL seed=%d %s\n", res.Params.Seed, firstLine)
		if err := writeFailure(res, bugs, stdout); err != nil {
			fmt.Fprintf(stdout, "  could not write failure files: %v\n", err)
		}
		if code == 0 || res.Params.Seed < firstFailedSeed {
			code, firstFailedSeed = res.Outcome.Kind.ExitCode(), res.Params.Seed
		}
	}
	elapsed := time.Since(start)
	minutes := elapsed.Minutes()
	invariants := "off (build with -tags invariants, as make build does)"
	if sim.InvariantsEnabled {
		invariants = "on"
	}
	coverage.Print(stdout)
	fmt.Fprintf(stdout, "seeds %d..%d in %s (%.0f seeds/minute on %d workers, %d simulated ticks, invariant checks %s)\n",
		*from, *from+*seeds-1, elapsed.Round(time.Millisecond), float64(*seeds)/minutes, *parallel, ticksTotal, invariants)
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	return code, nil
}

// setFlag collects --set NAME=VALUE overrides of drawn parameters.
type setFlag []string

// String implements flag.Value.
func (s *setFlag) String() string { return strings.Join(*s, ",") }

// Set implements flag.Value.
func (s *setFlag) Set(v string) error {
	if _, _, ok := strings.Cut(v, "="); !ok {
		return fmt.Errorf("--set takes NAME=VALUE, not %q", v)
	}
	*s = append(*s, v)
	return nil
}

// apply overrides p's parameters in flag order.
func (s setFlag) apply(p *sim.Params) error {
	for _, kv := range s {
		name, value, _ := strings.Cut(kv, "=")
		if err := sim.SetParam(p, name, value); err != nil {
			return err
		}
	}
	return nil
}
