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
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/stratabroker/strata/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  strata-bench MODE [flags]     run one workload against a server (--address)
      modes: pinned-producer, pinned-consumer, pinned-producer-and-consumer,
             balanced-producer, balanced-consumer-group, end-to-end
  strata-bench limits           measure loopback TCP and disk ceilings
  strata-bench suite            build and start a server, run the fixed suite
  strata-bench compare nats     run the suite's workloads on Strata and NATS JetStream
  strata-bench report A.json [B.json...]  HTML report of saved runs, overlaid on the same charts
  strata-bench profile          CPU-profile an in-process server under the producer workload
run 'strata-bench MODE -h' for the flags.
`

// runMain dispatches the command line and returns the exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd := args[0]; cmd {
	case "limits":
		err = cmdLimits(ctx, args[1:], stdout, stderr)
	case "suite":
		err = cmdSuite(ctx, args[1:], stdout, stderr)
	case "compare":
		err = cmdCompare(ctx, args[1:], stdout, stderr)
	case "profile":
		err = cmdProfile(ctx, args[1:], stdout, stderr)
	case "report":
		err = cmdReport(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = cmdWorkload(ctx, cmd, args[1:], stdout, stderr)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "strata-bench: %v\n", err)
		if errors.Is(err, ErrConfig) || errors.Is(err, ErrNotAvailable) {
			return 2
		}
		return 1
	}
	return 0
}

// workloadFlags registers the workload options on fs.
func workloadFlags(fs *flag.FlagSet, w *Workload) {
	fs.IntVar(&w.MessageSize, "message-size", 1000, fmt.Sprintf("payload bytes per message (at least %d)", messageSizeMin))
	fs.IntVar(&w.MessagesPerBatch, "messages-per-batch", 1000, "messages per send and per poll")
	fs.IntVar(&w.Batches, "batches", 0, "batches per producer (0: run for --duration)")
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
}

// check rejects transports the Go client does not speak yet.
func (s *serverFlags) check() error {
	if s.transport != "tcp" {
		return fmt.Errorf("%w: transport %q: the Go client speaks tcp only (QUIC, WebSocket and HTTP land later)", ErrNotAvailable, s.transport)
	}
	return nil
}

func (s *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.transport, "transport", "tcp", "transport (tcp)")
	fs.StringVar(&s.address, "address", client.DefaultAddress, "server address")
	fs.StringVar(&s.username, "username", "iggy", "user name")
	fs.StringVar(&s.password, "password", "iggy", "password")
}

// cmdWorkload runs one workload against a running server.
func cmdWorkload(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("strata-bench "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	w := Workload{Mode: mode, Name: mode}
	workloadFlags(fs, &w)
	var srv serverFlags
	srv.register(fs)
	output := fs.String("output", "", "write the results as JSON to this file")
	htmlPath := fs.String("html", "", "write the HTML report to this file (default: next to --output)")
	withLimits := fs.Bool("limits", false, "measure the machine limits too and print fractions of them")
	limitsDir := fs.String("limits-dir", os.TempDir(), "where the disk limit probes write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := w.Validate(); err != nil {
		return err
	}
	if err := srv.check(); err != nil {
		return err
	}
	var limits *Limits
	if *withLimits {
		var err error
		if limits, err = MeasureLimits(ctx, *limitsDir, 0); err != nil {
			return err
		}
	}
	target := newStrataTarget(srv.address, srv.username, srv.password)
	defer target.Close()
	res, err := Run(ctx, target, w, true)
	if err != nil {
		return err
	}
	if limits != nil {
		printLimits(stdout, limits)
	}
	printResults(stdout, []*Result{res}, limits)
	rep := newReport("strata-bench "+mode, limits, []*Result{res})
	h := *htmlPath
	if h == "" && *output != "" {
		h = strings.TrimSuffix(*output, ".json") + ".html"
	}
	return writeReports(stdout, rep, *output, h)
}

// newReport starts a report for the current command line.
func newReport(title string, limits *Limits, results []*Result) *Report {
	return &Report{Title: title, Generated: time.Now().UTC(), Machine: machineDescription(),
		Command: "strata-bench " + strings.Join(os.Args[1:], " "), Limits: limits, Results: results}
}

// cmdLimits measures and prints the machine limits.
func cmdLimits(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("strata-bench limits", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", os.TempDir(), "directory on the filesystem to probe (the server's data dir)")
	d := fs.Duration("duration", limitDurationDefault, "length of each probe")
	output := fs.String("output", "", "write the limits as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l, err := MeasureLimits(ctx, *dir, *d)
	if err != nil {
		return err
	}
	printLimits(stdout, l)
	if *output != "" {
		return writeJSON(*output, newReport("strata-bench limits", l, nil))
	}
	return nil
}
