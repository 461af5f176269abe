// Command strata-sim runs Strata's deterministic cluster simulator: one
// seed (run), many seeds (swarm), or a scenario file (replay).
//
// Exit status: 0 when every run passed, 2 for a safety violation, 3 for a
// liveness violation, 4 when the code under test panicked, 1 for usage
// errors and failed scenario expectations.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/cmd/internal/buildinfo"
	"github.com/stratabroker/strata/cmd/internal/command"
	"github.com/stratabroker/strata/sim"
	"github.com/stratabroker/strata/vsr"
)

// failuresDir is where swarm writes scenario files and visualizations.
const failuresDir = "sim-failures"

const usage = `usage:
  strata-sim run --seed S [--workload kv|broker] [--ticks N] [--set NAME=VALUE] [--verbose [--trace]] [--bug NAME]
  strata-sim swarm --seeds N [--from S] [--workload kv|broker] [--parallel P] [--ticks N] [--set NAME=VALUE] [--bug NAME]
  strata-sim replay [--verbose] FILE
planted bugs: %s
`

func main() {
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode runs the command line with the shape every Strata binary has
// (cmd/internal/command: --help and help CMD, --version and version,
// completion, "did you mean" for a mistyped command) and returns the exit
// status. strata-sim keeps its own codes (see the package doc): a usage
// mistake is 1, because 2, 3 and 4 report what a run found.
func mainCode(args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(stdout)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	command.Prepare(root, buildinfo.Read(root.Name()))
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return 0
	}
	var code command.ExitCode
	if errors.As(err, &code) {
		return int(code)
	}
	fmt.Fprintf(stderr, "strata-sim: %v\n", err)
	return 1
}

// newRootCommand builds strata-sim's command tree. run, swarm and replay
// parse their own flags (flag package, the same as scenario files name
// them), so cobra hands them their arguments untouched.
func newRootCommand(stdout io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "strata-sim",
		Short: "Run Strata's deterministic cluster simulator",
		Long: `strata-sim runs Strata's deterministic cluster simulator: one seed (run),
many seeds (swarm), or a scenario file (replay). The same seed gives the
same run and the same trace hash.

Exit status: 0 when every run passed, 2 for a safety violation, 3 for a
liveness violation, 4 when the code under test panicked, 1 for usage
errors and failed scenario expectations.

` + fmt.Sprintf(usage, strings.Join(vsr.BugNames(), ", ")),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	sub := func(name, short string, run func([]string, io.Writer) (int, error)) *cobra.Command {
		return &cobra.Command{
			Use:                name + " [flags]",
			Short:              short,
			Long:               short + ".\n\n" + fmt.Sprintf(usage, strings.Join(vsr.BugNames(), ", ")) + "\nRun 'strata-sim " + name + " -h' for its flags.",
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				code, err := run(args, stdout)
				if errors.Is(err, flag.ErrHelp) {
					return nil // the flag set printed its flags
				}
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "strata-sim: %v\n", err)
					if code == 0 {
						code = 1
					}
				}
				if code != 0 {
					return command.ExitCode(code)
				}
				return nil
			},
		}
	}
	root.AddCommand(
		sub("run", "Run one seed and print its parameters, counters and trace hash", cmdRun),
		sub("swarm", "Run many seeds, each drawing its whole configuration, and print the coverage", cmdSwarm),
		sub("replay", "Replay a scenario file (scenarios/*.txt) and check its expectations", cmdReplay),
	)
	return root
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
	ticks := fs.Int("ticks", 0, "safety-phase ticks (default: drawn from the seed)")
	verbose := fs.Bool("verbose", false, "print every fault and phase change")
	traceMessages := fs.Bool("trace", false, "with --verbose, print every delivered message")
	var bugs bugFlag
	fs.Var(&bugs, "bug", "plant a vsr bug (repeatable)")
	var sets setFlag
	fs.Var(&sets, "set", "override a drawn parameter, NAME=VALUE (repeatable, as for swarm)")
	var workload workloadFlag
	fs.Var(&workload, "workload", "kv or broker (default: drawn from the seed, broker for a share of the seeds)")
	if err := fs.Parse(args); err != nil {
		return 1, err
	}
	params := workload.apply(sim.DrawParams(*seed))
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
	if html == "" {
		fmt.Fprintf(stdout, "wrote %s\n", scenario)
		return nil
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", scenario, html)
	return nil
}

// workloadFlag is --workload: unset keeps the seed's draw.
type workloadFlag struct {
	set bool
	w   sim.Workload
}

// String implements flag.Value.
func (f *workloadFlag) String() string {
	if !f.set {
		return ""
	}
	return f.w.String()
}

// Set implements flag.Value.
func (f *workloadFlag) Set(v string) error {
	w, err := sim.ParseWorkload(v)
	if err != nil {
		return err
	}
	f.set, f.w = true, w
	return nil
}

// apply forces the workload on drawn parameters.
func (f *workloadFlag) apply(p sim.Params) sim.Params {
	if !f.set {
		return p
	}
	if f.w == sim.WorkloadBroker {
		p.UseBroker()
	} else {
		p.Workload = sim.WorkloadKV
	}
	return p
}
