// Command strata is the command-line client of a Strata (or Iggy) server.
// Run `strata --help` for the command list; every command documents its
// flags in its help text. The commands live in package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"golang.org/x/term"

	"github.com/stratabroker/strata/cmd/strata/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Saved contexts live in the user's config directory; without one
	// (no $HOME) there are none unless STRATA_CONFIG_DIR names a place.
	configDir := ""
	if dir, err := os.UserConfigDir(); err == nil {
		configDir = filepath.Join(dir, "strata")
	}
	code := cli.Run(ctx, cli.Env{
		ConfigDir: configDir,
		Args:      os.Args[1:],
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Getenv:    os.Getenv,
		StderrIsTerminal: func() bool {
			return term.IsTerminal(int(os.Stderr.Fd()))
		},
	})
	stop()
	os.Exit(code)
}
