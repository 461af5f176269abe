// Command strata-connect runs Strata's connectors runtime: source and sink
// connectors configured in a directory (or fetched over HTTP), with a
// control API, /stats and /metrics. See connectors/README.md.
//
//	strata-connect --config connect.toml
//
// Every runtime setting can be overridden by STRATA_CONNECTORS_* variables
// (STRATA_CONNECTORS_STRATA_ADDRESS, STRATA_CONNECTORS_CONNECTORS_CONFIG_DIR).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/connectors"
	_ "github.com/stratabroker/strata/connectors/builtin"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "strata-connect:", err)
		os.Exit(1)
	}
}

func run() error {
	configPath := flag.String("config", os.Getenv(connectors.EnvConfigPath), "runtime config file (TOML); empty for defaults")
	listPlugins := flag.Bool("list-plugins", false, "print the built-in connectors and exit")
	flag.Parse()
	if *listPlugins {
		fmt.Println("sources:", connectors.Sources())
		fmt.Println("sinks:  ", connectors.Sinks())
		return nil
	}
	cfg, err := connectors.LoadRuntimeConfig(*configPath, os.Environ())
	if err != nil {
		return err
	}
	log, err := connectors.NewLogger(cfg.Logging, os.Stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	rt, err := connectors.New(connectors.Options{Config: cfg, Logger: log})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rt.Start(ctx); err != nil {
		_ = rt.Shutdown(context.Background())
		return err
	}
	log.Info("strata-connect running", zap.String("broker", cfg.Strata.Address), zap.Int("connectors", len(rt.Connectors(""))))
	<-ctx.Done()
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*cfg.Shutdown.Timeout.Duration)
	defer cancel()
	return rt.Shutdown(shutdownCtx)
}
