// Command strata-connect runs Strata's connectors runtime: source and sink
// connectors configured in a directory (or fetched over HTTP), with a
// control API, /stats and /metrics. See connectors/README.md.
//
//	strata-connect --config connect.toml
//	strata-connect --help | version | completion bash|zsh|fish
//
// Every runtime setting can be overridden by STRATA_CONNECTORS_* variables
// (STRATA_CONNECTORS_STRATA_ADDRESS, STRATA_CONNECTORS_CONNECTORS_CONFIG_DIR).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/cmd/internal/command"
	"github.com/stratabroker/strata/connectors"
	_ "github.com/stratabroker/strata/connectors/builtin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := command.Main(ctx, newRootCommand(), os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func newRootCommand() *cobra.Command {
	var configPath string
	var listPlugins bool
	root := &cobra.Command{
		Use:   "strata-connect",
		Short: "Run Strata's connectors runtime",
		Long: `strata-connect runs source and sink connectors against a Strata server:
the connectors are configured in a directory (or fetched over HTTP), and the
runtime serves a control API, /stats and /metrics. See connectors/README.md.

Every runtime setting can be overridden by STRATA_CONNECTORS_* variables,
e.g. STRATA_CONNECTORS_STRATA_ADDRESS or STRATA_CONNECTORS_CONNECTORS_CONFIG_DIR;
STRATA_CONNECTORS_CONFIG_PATH is the default of --config.`,
		Example: `  strata-connect --config connect.toml
  strata-connect --list-plugins`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listPlugins {
				fmt.Fprintln(cmd.OutOrStdout(), "sources:", connectors.Sources())
				fmt.Fprintln(cmd.OutOrStdout(), "sinks:  ", connectors.Sinks())
				return nil
			}
			return run(cmd.Context(), configPath)
		},
	}
	root.Flags().StringVar(&configPath, "config", os.Getenv(connectors.EnvConfigPath), "runtime config file (TOML); empty for defaults")
	root.Flags().BoolVar(&listPlugins, "list-plugins", false, "print the built-in connectors and exit")
	return root
}

// run runs the connectors until ctx ends.
func run(ctx context.Context, configPath string) error {
	cfg, err := connectors.LoadRuntimeConfig(configPath, os.Environ())
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
