// Command strata-sim runs Strata's deterministic cluster simulator: one
// seed (run), many seeds (swarm), or a scenario file (replay).
//
// Exit status: 0 when every run passed, 2 for a safety violation, 3 for a
// liveness violation, 4 when the code under test panicked, 1 for usage
// errors and failed scenario expectations.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stratabroker/strata/sim"
	"github.com/stratabroker/strata/vsr"
)

// failuresDir is where swarm writes scenario files and visualizations.
const failuresDir = "sim-failures"

const usage = `usage:
  strata-sim run --seed S [--ticks N] [--set NAME=VALUE] [--verbose [--trace]] [--bug NAME]
  strata-sim swarm --seeds N [--from S] [--parallel P] [--ticks N] [--set NAME=VALUE] [--bug NAME]
  strata-sim replay [--verbose] FILE
planted bugs: %s
`

func main() {
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

func mainCode(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, strings.Join(vsr.BugNames(), ", "))
		return 1
	}
	var err error
	code := 0
	switch args[0] {
	case "run":
		code, err = cmdRun(args[1:], stdout)
	case "swarm":
		code, err = cmdSwarm(args[1:], stdout)
	case "replay":
		code, err = cmdReplay(args[1:], stdout)
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "strata-sim: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// bugFlag collects --bug values.
type bugFlag []string

// String implements flag.Value.
func (b *bugFlag) String() string { return strings.Join(*b, ",") }

// Set implements flag.Value: it accepts only vsr's planted bug names.
func (b *bugFlag) Set(v string) error {
	if _, err := vsr.ParseBug(v); err != nil {
		return err
	}
	*b = append(*b, v)
	return nil
}

func (b bugFlag) set() vsr.BugSet {
	var s vsr.BugSet
	for _, name := range b {
		bug, _ := vsr.ParseBug(name) // validated by Set
		s |= bug
	}
	return s
}

func cmdRun(args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	seed := fs.Uint64("seed", 0, "the seed to run")
	ticks := fs.Int("ticks", 0, "safety-phase ticks (default: the swarm default)")
	verbose := fs.Bool("verbose", false, "print every fault and phase change")
	traceMessages := fs.Bool("trace", false, "with --verbose, print every delivered message")
	var bugs bugFlag
	fs.Var(&bugs, "bug", "plant a vsr bug (repeatable)")
	var sets setFlag
	fs.Var(&sets, "set", "override a drawn parameter, NAME=VALUE (repeatable, as for swarm)")
	if err := fs.Parse(args); err != nil {
		return 1, err
	}
	params := sim.DrawParams(*seed)
	if *ticks > 0 {
		params.SafetyTicks = *ticks
	}
	if err := sets.apply(&params); err != nil {
		return 1, err
	}
	params.Print(stdout)
	opts := sim.Options{Params: params, Bugs: bugs.set(), TraceMessages: *traceMessages}
	if *verbose {
		opts.Verbose = stdout
	}
	res := sim.Run(opts)
	res.Print(stdout)
	if res.Outcome.Kind != sim.OutcomeOK {
		if err := writeFailure(res, bugs, stdout); err != nil {
			return res.Outcome.Kind.ExitCode(), err
		}
	}
	return res.Outcome.Kind.ExitCode(), nil
}

func cmdReplay(args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	verbose := fs.Bool("verbose", false, "print every fault and phase change")
	if err := fs.Parse(args); err != nil {
		return 1, err
	}
	if fs.NArg() != 1 {
		return 1, errors.New("replay takes one scenario file")
	}
	text, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return 1, err
	}
	sc, err := sim.ParseScenario(string(text))
	if err != nil {
		return 1, err
	}
	params := sc.ScenarioParams()
	params.Print(stdout)
	var w io.Writer
	if *verbose {
		w = stdout
	}
	res, err := sim.RunScenario(sc, w)
	if res != nil {
		res.Print(stdout)
	}
	if err != nil {
		return 1, err
	}
	fmt.Fprintln(stdout, "scenario expectations held")
	return 0, nil
}

// writeFailure writes the scenario file and porcupine visualization of a
// failed run into failuresDir and names them.
func writeFailure(res *sim.Result, bugs bugFlag, stdout io.Writer) error {
	if err := os.MkdirAll(failuresDir, 0o755); err != nil {
		return err
	}
	base := fmt.Sprintf("seed-%d", res.Params.Seed)
	if len(bugs) > 0 {
		base += "-" + strings.Join(bugs, "+")
	}
	scenario := failuresDir + "/" + base + ".txt"
	if err := os.WriteFile(scenario, []byte(sim.FailureScenario(res, bugs)), 0o644); err != nil {
		return err
	}
	html, err := res.WriteVisualization(failuresDir, base+".html")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", scenario, html)
	return nil
}
