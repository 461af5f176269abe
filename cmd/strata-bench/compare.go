package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/cmd/internal/command"
)

// newCompareCommand is `strata-bench compare nats`.
func newCompareCommand() *cobra.Command {
	var sf suiteFlags
	var natsBin, natsVersion string
	cmd := &cobra.Command{
		Use:       "compare nats",
		Short:     "Run the suite's workloads on Strata and on NATS JetStream",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []cobra.Completion{"nats"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "nats" {
				return command.Usagef("compare supports one peer: strata-bench compare nats (got %q)", args[0])
			}
			stdout := cmd.OutOrStdout()
			rep, err := runCompare(cmd.Context(), &sf, natsBin, natsVersion, cmd.ErrOrStderr())
			if err != nil {
				return configError(err)
			}
			if rep.Limits != nil {
				printLimits(stdout, rep.Limits)
			}
			printResults(stdout, rep.Results, rep.Limits)
			printComparisons(stdout, rep.Comparisons)
			if sf.results == "" {
				root, err := repoRoot()
				if err != nil {
					return err
				}
				sf.results = filepath.Join(root, "bench", "results")
			}
			rep.Title = "Strata vs NATS JetStream"
			base := sf.results
			sf.results = filepath.Join(base, "compare")
			return writeSuiteReports(stdout, &sf, rep)
		},
	}
	sf.register(cmd.Flags())
	cmd.Flags().StringVar(&natsBin, "nats-server", "", "nats-server binary (default: <repo>/.tools/nats-server, installed with go install)")
	cmd.Flags().StringVar(&natsVersion, "nats-version", natsServerVersion, "nats-server version to install when missing")
	return cmd
}

// runCompare runs every suite workload on Strata and on NATS JetStream,
// alternating, each on a fresh server and data directory; consumer-group
// workloads are skipped (no NATS mapping).
func runCompare(ctx context.Context, sf *suiteFlags, natsBin, natsVersion string, progress io.Writer) (rep *Report, err error) {
	spec, workloads, err := loadSuite(sf.duration, sf.warmup, sf.batches)
	if err != nil {
		return nil, err
	}
	env, err := sf.prepare(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, removeAll(env.tmp)) }()
	if natsBin == "" {
		if natsBin, err = installNATS(ctx, env.root, natsVersion, progress); err != nil {
			return nil, err
		}
	}
	var limits *Limits
	if !sf.noLimits {
		fmt.Fprintln(progress, "measuring machine limits...")
		if limits, err = MeasureLimits(ctx, env.tmp, sf.limitsDuration); err != nil {
			return nil, err
		}
	}
	var strataResults, natsResults []*Result
	var all []*Result
	var comps []Comparison
	for i, w := range workloads {
		if w.Mode == ModeBalancedConsumerGroup {
			// The NATS mapping has no consumer groups (natsTarget is not a
			// GroupTarget): there is nothing to pair this run with.
			fmt.Fprintf(progress, "skipping %s: no NATS JetStream equivalent in this comparison\n", w.Name)
			continue
		}
		// Strata first, then NATS, each at its own measured peak for rated
		// workloads (so both run at half of their own peak).
		ws, wn := w, w
		if ws.RateMBps, err = peakRate(spec, i, strataResults); err != nil {
			return nil, err
		}
		if wn.RateMBps, err = peakRate(spec, i, natsResults); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "running %s on strata...\n", w.Name)
		rs, err := runOnStrata(ctx, env, i, ws)
		if err != nil {
			return nil, fmt.Errorf("strata %s: %w", w.Name, err)
		}
		fmt.Fprintf(progress, "running %s on nats...\n", w.Name)
		rn, err := runOnNATS(ctx, natsBin, env, i, wn)
		if err != nil {
			return nil, fmt.Errorf("nats %s: %w", w.Name, err)
		}
		strataResults, natsResults = append(strataResults, rs), append(natsResults, rn)
		all = append(all, rs, rn)
		comps = append(comps, compare(rs, rn))
	}
	rep = newReport("Strata vs NATS JetStream: "+spec.Name, limits, all)
	rep.Commit = gitCommit(env.root)
	rep.Comparisons = comps
	return rep, nil
}

// runOnStrata runs w on a fresh strata-server child.
func runOnStrata(ctx context.Context, env *suiteEnv, i int, w Workload) (res *Result, err error) {
	dir := filepath.Join(env.tmp, fmt.Sprintf("strata-%d", i))
	if err := mkdir(dir); err != nil {
		return nil, err
	}
	srv, err := startServer(ctx, env.bin, dir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, srv.Stop()) }()
	target := newStrataTarget(srv.Address, "iggy", "iggy")
	defer func() { err = errors.Join(err, target.Close()) }()
	res, err = Run(ctx, target, w, true)
	if err != nil {
		return nil, err
	}
	res.ServerRSSPeakBytes = peakRSS(srv.Pid())
	return res, nil
}

// runOnNATS runs w on a fresh nats-server child with JetStream file
// storage; persisted workloads get sync_interval: always.
func runOnNATS(ctx context.Context, bin string, env *suiteEnv, i int, w Workload) (res *Result, err error) {
	dir := filepath.Join(env.tmp, fmt.Sprintf("nats-%d", i))
	if err := mkdir(dir); err != nil {
		return nil, err
	}
	srv, err := startNATS(ctx, bin, dir, w.Durability == "persisted")
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, srv.Stop()) }()
	target := newNATSTarget(srv.URL)
	defer func() { err = errors.Join(err, target.Close()) }()
	res, err = Run(ctx, target, w, true)
	if err != nil {
		return nil, err
	}
	res.ServerRSSPeakBytes = peakRSS(srv.Pid())
	return res, nil
}

// compare pairs a workload's Strata and NATS figures.
func compare(s, n *Result) Comparison {
	c := Comparison{Workload: s.Workload.Name, Peer: n.Target, Strata: s.headline(), Other: n.headline()}
	if c.Other > 0 {
		c.Ratio = c.Strata / c.Other
	}
	c.StrataP99, c.OtherP99 = headlineP99(s), headlineP99(n)
	return c
}

// headlineP99 is end-to-end p99 for end-to-end runs, else the batch p99 of
// the headline side.
func headlineP99(r *Result) float64 {
	switch {
	case r.EndToEnd != nil:
		return r.EndToEnd.P99
	case r.Workload.consumerOnly() && r.Consumers != nil:
		return r.Consumers.Latency.P99
	case r.Producers != nil:
		return r.Producers.Latency.P99
	}
	return 0
}

// printComparisons prints the side-by-side table.
func printComparisons(out io.Writer, comps []Comparison) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tstrata MB/s\tnats MB/s\tstrata/nats\tstrata p99 ms\tnats p99 ms\t")
	for _, c := range comps {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2fx\t%.3f\t%.3f\t\n", c.Workload, c.Strata, c.Other, c.Ratio, c.StrataP99, c.OtherP99)
	}
	_ = tw.Flush()
}
