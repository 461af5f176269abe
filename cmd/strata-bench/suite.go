package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stratabroker/strata/bench"
)

// SuiteSpec is bench/suite.json: the fixed workloads `make bench` runs.
type SuiteSpec struct {
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	MessageSize      int             `json:"message_size"`
	MessagesPerBatch int             `json:"messages_per_batch"`
	Duration         string          `json:"duration"`
	Warmup           string          `json:"warmup"`
	Workloads        []SuiteWorkload `json:"workloads"`
	Targets          []SuiteTarget   `json:"targets"`
}

// SuiteWorkload is one entry of the suite.
type SuiteWorkload struct {
	Name       string `json:"name"`
	Mode       string `json:"mode"`
	Producers  int    `json:"producers"`
	Consumers  int    `json:"consumers"`
	Partitions int    `json:"partitions"`
	Durability string `json:"durability"`
	// RateOfPeak, when set, caps producers at this fraction of the
	// producer MB/s measured by the workload named PeakOf.
	RateOfPeak float64 `json:"rate_of_peak"`
	PeakOf     string  `json:"peak_of"`
}

// loadSuite parses the embedded suite and applies overrides: duration
// and warm-up when non-zero, batches when non-zero (replacing durations).
func loadSuite(duration, warmup time.Duration, batches int) (*SuiteSpec, []Workload, error) {
	var spec SuiteSpec
	if err := json.Unmarshal(bench.SuiteJSON, &spec); err != nil {
		return nil, nil, fmt.Errorf("%w: bench/suite.json: %w", ErrConfig, err)
	}
	d, err := time.ParseDuration(spec.Duration)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: suite duration: %w", ErrConfig, err)
	}
	wu, err := time.ParseDuration(spec.Warmup)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: suite warm-up: %w", ErrConfig, err)
	}
	if duration > 0 {
		d = duration
	}
	if warmup >= 0 && (duration > 0 || batches > 0) {
		wu = warmup
	}
	var out []Workload
	for _, sw := range spec.Workloads {
		w := Workload{Name: sw.Name, Mode: sw.Mode, MessageSize: spec.MessageSize, MessagesPerBatch: spec.MessagesPerBatch,
			Duration: d, Warmup: wu, Batches: batches, Producers: sw.Producers, Consumers: sw.Consumers,
			Streams: 1, Partitions: sw.Partitions, Durability: sw.Durability}
		if err := w.Validate(); err != nil {
			return nil, nil, fmt.Errorf("suite workload %s: %w", sw.Name, err)
		}
		out = append(out, w)
	}
	return &spec, out, nil
}

// peakRate returns the rate cap of workload i from earlier results (0 when
// it has none).
func peakRate(spec *SuiteSpec, i int, results []*Result) (float64, error) {
	sw := spec.Workloads[i]
	if sw.RateOfPeak <= 0 {
		return 0, nil
	}
	for _, r := range results {
		if r.Workload.Name == sw.PeakOf && r.Producers != nil && r.Producers.MBps > 0 {
			return sw.RateOfPeak * r.Producers.MBps, nil
		}
	}
	return 0, fmt.Errorf("%w: workload %s needs the peak of %s, which did not run first", ErrConfig, sw.Name, sw.PeakOf)
}

// suiteFlags are the options shared by suite and compare.
type suiteFlags struct {
	duration, warmup time.Duration
	batches          int
	results          string
	serverBin        string
	noLimits         bool
	limitsDuration   time.Duration
}

func (s *suiteFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&s.duration, "duration", 0, "measured time per workload (default: the suite's, 3s)")
	fs.DurationVar(&s.warmup, "warmup", -1, "warm-up per workload when --duration or --batches is given")
	fs.IntVar(&s.batches, "batches", 0, "batches per producer instead of a duration (tiny runs)")
	fs.StringVar(&s.results, "results", "", "results directory (default: <repo>/bench/results)")
	fs.StringVar(&s.serverBin, "server-bin", "", "use this strata-server binary instead of building one")
	fs.BoolVar(&s.noLimits, "no-limits", false, "skip the machine-limit probes")
	fs.DurationVar(&s.limitsDuration, "limits-duration", limitDurationDefault, "length of each machine-limit probe")
}

// suiteEnv is a built and started server with its scratch directory.
type suiteEnv struct {
	root, tmp string
	bin       string
}

// prepare finds the repository, makes a scratch dir and builds the server.
func (s *suiteFlags) prepare(ctx context.Context) (*suiteEnv, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "strata-bench-")
	if err != nil {
		return nil, err
	}
	env := &suiteEnv{root: root, tmp: tmp, bin: s.serverBin}
	if env.bin == "" {
		if env.bin, err = buildServer(ctx, root, tmp); err != nil {
			return nil, errors.Join(err, os.RemoveAll(tmp))
		}
	}
	return env, nil
}

// newSuiteCommand is `strata-bench suite`: what `make bench` runs.
func newSuiteCommand() *cobra.Command {
	var sf suiteFlags
	cmd := &cobra.Command{
		Use:   "suite",
		Short: "Build and start a server on a fresh data dir, run the fixed suite (bench/suite.json)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stdout := cmd.OutOrStdout()
			rep, err := runSuite(cmd.Context(), &sf, cmd.ErrOrStderr())
			if err != nil {
				return configError(err)
			}
			if rep.Limits != nil {
				printLimits(stdout, rep.Limits)
			}
			printResults(stdout, rep.Results, rep.Limits)
			printTargets(stdout, rep.Targets)
			return writeSuiteReports(stdout, &sf, rep)
		},
	}
	sf.register(cmd.Flags())
	return cmd
}

// runSuite builds and starts a server on a fresh data dir, measures the
// limits on that filesystem, runs every suite workload and stops the
// server. progress receives status lines.
func runSuite(ctx context.Context, sf *suiteFlags, progress io.Writer) (rep *Report, err error) {
	spec, workloads, err := loadSuite(sf.duration, sf.warmup, sf.batches)
	if err != nil {
		return nil, err
	}
	env, err := sf.prepare(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(env.tmp)) }()
	dataDir := filepath.Join(env.tmp, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	var limits *Limits
	if !sf.noLimits {
		fmt.Fprintln(progress, "measuring machine limits...")
		if limits, err = MeasureLimits(ctx, dataDir, sf.limitsDuration); err != nil {
			return nil, err
		}
	}
	srv, err := startServer(ctx, env.bin, dataDir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, srv.Stop()) }()
	fmt.Fprintf(progress, "strata-server on %s, data in %s\n", srv.Address, dataDir)
	target := newStrataTarget(srv.Address, "iggy", "iggy")
	defer func() { err = errors.Join(err, target.Close()) }()
	var results []*Result
	for i, w := range workloads {
		if w.RateMBps, err = peakRate(spec, i, results); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "running %s...\n", w.Name)
		res, err := Run(ctx, target, w, true)
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", w.Name, err)
		}
		res.ServerRSSPeakBytes = peakRSS(srv.Pid())
		results = append(results, res)
	}
	rep = newReport("Strata benchmark suite: "+spec.Name, limits, results)
	rep.Commit = gitCommit(env.root)
	rep.Targets = checkTargets(spec.Targets, results, limits)
	return rep, nil
}

// writeSuiteReports writes <results>/<date>-<commit>.json and .html.
func writeSuiteReports(stdout io.Writer, sf *suiteFlags, rep *Report) error {
	dir := sf.results
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return err
		}
		dir = filepath.Join(root, "bench", "results")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	commit := rep.Commit
	if commit == "" {
		commit = "nocommit"
	}
	base := filepath.Join(dir, rep.Generated.Format("20060102-150405")+"-"+commit)
	return writeReports(stdout, rep, base+".json", base+".html")
}

// gitCommit returns the short commit of root's HEAD, "" when unknown.
func gitCommit(root string) string {
	cmd := exec.Command("git", "rev-parse", "--short", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
