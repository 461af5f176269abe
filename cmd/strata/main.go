// Command strata is the command-line client of a Strata (or Iggy) server.
// Run `strata --help` for the command list; every command documents its
// flags in its help text. The commands live in package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/stratabroker/strata/cmd/strata/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, cli.Env{
		Args:   os.Args[1:],
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
		StderrIsTerminal: func() bool {
			return term.IsTerminal(int(os.Stderr.Fd()))
		},
	})
	stop()
	os.Exit(code)
}
