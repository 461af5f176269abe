package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
)

// startInProcess starts a Strata server inside this process on dataDir and
// a free loopback port, with the development root credentials.
func startInProcess(dataDir string) (*server.Server, error) {
	cfg, err := config.Load("", []string{"STRATA_SYSTEM_PATH=" + dataDir, "STRATA_TCP_ADDRESS=127.0.0.1:0"})
	if err != nil {
		return nil, fmt.Errorf("%w: config: %w", ErrServer, err)
	}
	srv, err := server.New(server.Options{Config: cfg, Logger: zap.NewNop(),
		Root: server.RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrServer, err)
	}
	if err := srv.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("%w: %w", ErrServer, err), srv.Shutdown(context.Background()))
	}
	return srv, nil
}

// newProfileCommand is `strata-bench profile`: one workload
// (pinned-producer by default) against an in-process server, writing CPU
// and allocation profiles. The profile holds the benchmark's own client
// goroutines too: read the server's share under
// github.com/stratabroker/strata/server and net/.
func newProfileCommand() *cobra.Command {
	w := Workload{Mode: ModePinnedProducer, Name: "profile"}
	var mode, cpuPath, allocPath string
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "CPU-profile an in-process server under the producer workload",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return configError(runProfile(cmd.Context(), w, mode, cpuPath, allocPath, cmd.OutOrStdout()))
		},
	}
	workloadFlags(cmd.Flags(), &w)
	cmd.Flags().StringVar(&mode, "mode", ModePinnedProducer, "workload mode to profile")
	cmd.Flags().StringVar(&cpuPath, "cpu", "cpu.prof", "CPU profile output")
	cmd.Flags().StringVar(&allocPath, "allocs", "allocs.prof", "allocation profile output")
	return cmd
}

// runProfile runs w in mode under the CPU profiler.
func runProfile(ctx context.Context, w Workload, mode, cpuPath, allocPath string, stdout io.Writer) (err error) {
	w.Mode = mode
	if w.Duration == 5*time.Second {
		w.Duration = 3 * time.Second
	}
	dir, err := os.MkdirTemp("", "strata-bench-profile-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	srv, err := startInProcess(dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.Shutdown(context.Background())) }()
	target := newStrataTarget(srv.TCPAddr().String(), "iggy", "iggy")
	defer func() { err = errors.Join(err, target.Close()) }()
	cpu, err := os.Create(cpuPath)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return errors.Join(err, cpu.Close())
	}
	res, runErr := Run(ctx, target, w, true)
	pprof.StopCPUProfile()
	if err := errors.Join(runErr, cpu.Close()); err != nil {
		return err
	}
	allocs, err := os.Create(allocPath)
	if err != nil {
		return err
	}
	if err := errors.Join(pprof.Lookup("allocs").WriteTo(allocs, 0), allocs.Close()); err != nil {
		return err
	}
	printResults(stdout, []*Result{res}, nil)
	fmt.Fprintf(stdout, "wrote %s and %s (go tool pprof -top %s)\n", cpuPath, allocPath, cpuPath)
	return nil
}
