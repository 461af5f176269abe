// Command strata-bench measures a Strata broker (issue 5): throughput and
// latency of fixed workloads, checked message by message, against the
// machine's own limits and against NATS JetStream on the same machine.
//
//	strata-bench pinned-producer|pinned-consumer|pinned-producer-and-consumer|
//	             balanced-producer|balanced-consumer-group|end-to-end [flags]
//	strata-bench limits [--dir DIR]
//	strata-bench suite [--duration 3s] [--results bench/results]
//	strata-bench compare nats [--duration 3s]
//	strata-bench report A.json [B.json...] (saved runs overlaid in one HTML report)
//	strata-bench profile --cpu FILE (the producer workload on an in-process server)
//
// Throughput is payload bytes (MB = 10^6 bytes) and messages per second;
// latency is per batch (a send's or a poll's round trip) and, in
// end-to-end mode, per message from its origin timestamp to its receipt.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/cmd/internal/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// workloadModes are the modes that run as `strata-bench MODE`.
var workloadModes = []struct{ mode, short string }{
	{ModePinnedProducer, "Each producer sends to its own partition"},
	{ModePinnedConsumer, "Pre-fill the partitions, then each consumer reads its own"},
	{ModePinnedProducerAndConsumer, "Producers and consumers on their own partitions at once"},
	{ModeBalancedProducer, "Producers send round-robin over the partitions"},
	{ModeBalancedConsumerGroup, "Pre-fill the partitions, then a consumer group reads them"},
	{ModeEndToEnd, "Each producer paired with a consumer: send-to-receive latency"},
}

// runMain runs the command line and returns the exit code: 0, 1 for a
// failed run, 2 for bad options.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return command.Main(ctx, newRootCommand(), args, stdout, stderr)
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "strata-bench",
		Short: "Measure a Strata broker: throughput and latency, checked message by message",
		Long: `strata-bench measures a Strata broker (issue 5): throughput and latency of
fixed workloads, checked message by message, against the machine's own
limits and against NATS JetStream on the same machine.

Throughput is payload bytes (MB = 10^6 bytes) and messages per second;
latency is in milliseconds, per batch (a send's or a poll's round trip)
and, in end-to-end mode, per message from its origin timestamp to its
receipt.

A workload run against a server (--address) creates its own streams and
deletes them when it ends, unless --keep.`,
		Example: `  strata-bench pinned-producer --address 127.0.0.1:8090 --batches 100
  strata-bench end-to-end --producers 2 --consumers 2 --partitions 2 --duration 10s
  strata-bench suite
  strata-bench compare nats
  strata-bench report a.json b.json`,
	}
	for _, m := range workloadModes {
		root.AddCommand(newWorkloadCommand(m.mode, m.short))
	}
	root.AddCommand(newLimitsCommand(), newSuiteCommand(), newCompareCommand(), newReportCommand(), newProfileCommand())
	return root
}

// configError makes the benchmark's option errors command-line mistakes
// (exit 2).
func configError(err error) error {
	if errors.Is(err, ErrConfig) || errors.Is(err, ErrNotAvailable) {
		return command.UsageError{Err: err}
	}
	return err
}

// workloadFlags registers the workload options on fs.
func workloadFlags(fs *pflag.FlagSet, w *Workload) {
	fs.IntVar(&w.MessageSize, "message-size", 1000, fmt.Sprintf("payload bytes per message (at least %d)", messageSizeMin))
	fs.IntVar(&w.MessagesPerBatch, "messages-per-batch", 1000, "messages per send and per poll")
	fs.IntVar(&w.Batches, "batches", 0, "measured batches per producer, sent after the warm-up (0: run for --duration)")
	fs.DurationVar(&w.Duration, "duration", 5*time.Second, "measured time when --batches is 0")
	fs.DurationVar(&w.Warmup, "warmup", time.Second, "unmeasured time at the start")
	fs.IntVar(&w.Producers, "producers", 0, "producers (default 1 where the mode produces)")
	fs.IntVar(&w.Consumers, "consumers", 0, "consumers (default 1 where the mode consumes)")
	fs.IntVar(&w.Streams, "streams", 1, "streams, one topic each")
	fs.IntVar(&w.Partitions, "partitions", 1, "partitions per topic")
	fs.StringVar(&w.Durability, "durability", "replicated", "topic durability: replicated|persisted")
	fs.Float64Var(&w.RateMBps, "rate-mb", 0, "cap the total producer rate at this many MB/s (0: none)")
}

// serverFlags are where and as whom to connect.
type serverFlags struct {
	transport, address, username, password string
	// keep leaves the streams a run created on the server.
	keep bool
}

// check rejects transports the Go client does not speak yet.
func (s *serverFlags) check() error {
	if s.transport != "tcp" {
		return fmt.Errorf("%w: transport %q: the benchmark runs over tcp only", ErrNotAvailable, s.transport)
	}
	return nil
}

func (s *serverFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.transport, "transport", "tcp", "transport (tcp)")
	fs.StringVar(&s.address, "address", client.DefaultAddress, "server address")
	fs.StringVar(&s.username, "username", "iggy", "user name")
	fs.StringVar(&s.password, "password", "iggy", "password")
	fs.BoolVar(&s.keep, "keep", false, "keep the streams the run created (they are deleted at the end otherwise)")
}

// workloadOptions are the flags of a workload command.
type workloadOptions struct {
	w          Workload
	srv        serverFlags
	output     string
	htmlPath   string
	withLimits bool
	limitsDir  string
	noVerify   bool
}

// newWorkloadCommand is `strata-bench MODE`: one workload against a
// running server.
func newWorkloadCommand(mode, short string) *cobra.Command {
	o := &workloadOptions{w: Workload{Mode: mode, Name: mode}}
	cmd := &cobra.Command{
		Use:   mode,
		Short: short,
		Long: short + `, against a running server (--address).

--batches N sends N measured batches per producer after the --warmup
(give --warmup 0 to measure from the first batch); without it producers
run for --duration. Runs that only produce read every message back when
the producers are done and verify it (offsets, payloads, ids, frame
checksums), unless --no-verify.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return configError(o.run(cmd.Context(), cmd.OutOrStdout()))
		},
	}
	fs := cmd.Flags()
	workloadFlags(fs, &o.w)
	o.srv.register(fs)
	fs.StringVar(&o.output, "output", "", "write the results as JSON to this file")
	fs.StringVar(&o.htmlPath, "html", "", "write the HTML report to this file (default: next to --output)")
	fs.BoolVar(&o.withLimits, "limits", false, "measure the machine limits too and print fractions of them")
	fs.StringVar(&o.limitsDir, "limits-dir", os.TempDir(), "where the disk limit probes write")
	fs.BoolVar(&o.noVerify, "no-verify", false, "producer-only modes: do not read back and verify what was sent (only acknowledgements are counted)")
	return cmd
}

// run runs the workload and prints and writes its results.
func (o *workloadOptions) run(ctx context.Context, stdout io.Writer) error {
	w := o.w
	if err := w.Validate(); err != nil {
		return err
	}
	if err := o.srv.check(); err != nil {
		return err
	}
	var limits *Limits
	if o.withLimits {
		var err error
		if limits, err = MeasureLimits(ctx, o.limitsDir, 0); err != nil {
			return err
		}
	}
	target := newStrataTarget(o.srv.address, o.srv.username, o.srv.password)
	target.keep = o.srv.keep
	res, err := RunWith(ctx, target, w, RunOptions{Live: true, ReadBack: !o.noVerify})
	if cerr := target.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return err
	}
	if limits != nil {
		printLimits(stdout, limits)
	}
	printResults(stdout, []*Result{res}, limits)
	if n := target.deleted; n > 0 {
		fmt.Fprintf(stdout, "  deleted the %d stream(s) the run created (--keep keeps them)\n", n)
	} else if o.srv.keep {
		fmt.Fprintf(stdout, "  kept the streams the run created: %s\n", strings.Join(target.createdNames, ", "))
	}
	rep := newReport("strata-bench "+w.Mode, limits, []*Result{res})
	h := o.htmlPath
	if h == "" && o.output != "" {
		h = strings.TrimSuffix(o.output, ".json") + ".html"
	}
	return writeReports(stdout, rep, o.output, h)
}

// newReport starts a report for the current command line.
func newReport(title string, limits *Limits, results []*Result) *Report {
	return &Report{Title: title, Generated: time.Now().UTC(), Machine: machineDescription(),
		Command: "strata-bench " + strings.Join(os.Args[1:], " "), Limits: limits, Results: results}
}

// newLimitsCommand is `strata-bench limits`.
func newLimitsCommand() *cobra.Command {
	var dir, output string
	var d time.Duration
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "Measure loopback TCP and disk ceilings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := MeasureLimits(cmd.Context(), dir, d)
			if err != nil {
				return configError(err)
			}
			printLimits(cmd.OutOrStdout(), l)
			if output != "" {
				return writeJSON(output, newReport("strata-bench limits", l, nil))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", os.TempDir(), "directory on the filesystem to probe (the server's data dir)")
	cmd.Flags().DurationVar(&d, "duration", limitDurationDefault, "length of each probe")
	cmd.Flags().StringVar(&output, "output", "", "write the limits as JSON to this file")
	return cmd
}
