package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

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

// cmdProfile runs one workload (pinned-producer by default) against an
// in-process server and writes CPU and allocation profiles. The profile
// holds the benchmark's own client goroutines too: read the server's share
// under github.com/stratabroker/strata/server and net/.
func cmdProfile(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("strata-bench profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	w := Workload{Mode: ModePinnedProducer, Name: "profile"}
	workloadFlags(fs, &w)
	mode := fs.String("mode", ModePinnedProducer, "workload mode to profile")
	cpuPath := fs.String("cpu", "cpu.prof", "CPU profile output")
	allocPath := fs.String("allocs", "allocs.prof", "allocation profile output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	w.Mode = *mode
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
	cpu, err := os.Create(*cpuPath)
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
	allocs, err := os.Create(*allocPath)
	if err != nil {
		return err
	}
	if err := errors.Join(pprof.Lookup("allocs").WriteTo(allocs, 0), allocs.Close()); err != nil {
		return err
	}
	printResults(stdout, []*Result{res}, nil)
	fmt.Fprintf(stdout, "wrote %s and %s (go tool pprof -top %s)\n", *cpuPath, *allocPath, *cpuPath)
	return nil
}
