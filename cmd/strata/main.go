// Command strata is the command-line client of a Strata (or Iggy) server.
// Run `strata --help` for the command list; every command documents its
// flags in its help text.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, env{
		args:   os.Args[1:],
		stdin:  os.Stdin,
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
		stderrIsTerminal: func() bool {
			return term.IsTerminal(int(os.Stderr.Fd()))
		},
	})
	stop()
	os.Exit(code)
}
