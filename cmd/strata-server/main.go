// Command strata-server runs the Strata broker.
//
//	strata-server [--config FILE] [--with-default-root-credentials]
//	strata-server repair [--config FILE] [--partition S/T/P] [--confirm]
//	strata-server --help | version | completion bash|zsh|fish
//
// With no file it runs on the embedded default configuration; every key
// can be overridden with STRATA_<SECTION>_<KEY>, and a STRATA_ variable
// that names no key (and is not another program's, config.OtherVariables)
// stops it with the nearest key. The root user comes from
// STRATA_ROOT_USERNAME / STRATA_ROOT_PASSWORD, else from
// --with-default-root-credentials (iggy/iggy), else a random password is
// generated and printed once, at the first boot. The HTTP API signs its
// tokens with [http.jwt] encoding_secret (STRATA_HTTP_JWT_ENCODING_SECRET;
// random per process when unset); the secret is never written to
// runtime/current_config.toml nor to the log.
//
// `repair` (repair.go) is the single-node way out for fenced partitions:
// it keeps each one's verified prefix and moves the damaged files aside.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/cmd/internal/command"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/server/httpapi"
)

// shutdownTimeout bounds a graceful shutdown.
const shutdownTimeout = 30 * time.Second

func main() {
	// A write to a closed stdout or stderr pipe (`make run | tee`, and tee
	// exited first on Ctrl-C) raises SIGPIPE, and the Go runtime kills
	// the process for it on fds 1 and 2 unless SIGPIPE is asked for: the
	// shutdown flush would never run. Asked for here, the write fails with
	// EPIPE instead; the channel is never read (signal drops what does not
	// fit) and a handled signal returns to its default in child processes.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	os.Exit(command.Main(context.Background(), newRootCommand(), os.Args[1:], os.Stdout, os.Stderr))
}

// serverFlags are the command-line flags.
type serverFlags struct {
	configPath   string
	defaultRoot  bool
	printDefault bool
	makeCerts    string
}

func newRootCommand() *cobra.Command {
	var f serverFlags
	root := &cobra.Command{
		Use:   "strata-server",
		Short: "Run the Strata message broker",
		Long: `strata-server runs the Strata broker, which speaks Apache Iggy's binary
protocol over TCP (and, when enabled, TLS, QUIC, WebSocket and HTTP).

With no --config it runs on the embedded default configuration
(--print-default-config shows it); every key can be overridden with
STRATA_<SECTION>_<KEY>, e.g. STRATA_TCP_ADDRESS=0.0.0.0:8090, and a
STRATA_ variable that names no key stops it with the nearest key.

The root user comes from STRATA_ROOT_USERNAME / STRATA_ROOT_PASSWORD, else
from --with-default-root-credentials (iggy/iggy), else a random password is
generated and printed once, at the first boot. The HTTP API signs its
tokens with [http.jwt] encoding_secret (STRATA_HTTP_JWT_ENCODING_SECRET;
random per process when unset).

Exit codes: 0 stopped cleanly, 1 failed to start or serve, 2 bad command
line or configuration.`,
		Example: `  strata-server --with-default-root-credentials
  STRATA_HTTP_ENABLED=true strata-server --config strata.toml
  strata-server --print-default-config > strata.toml
  strata-server --make-certs certs`,
		Args: command.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if code := run(f); code != 0 {
				return command.ExitCode(code)
			}
			return nil
		},
	}
	fs := root.Flags()
	fs.StringVar(&f.configPath, "config", "", "TOML configuration file (the embedded default when empty)")
	fs.BoolVar(&f.defaultRoot, "with-default-root-credentials", false, "create the root user as iggy/iggy when it does not exist (development only)")
	fs.BoolVar(&f.printDefault, "print-default-config", false, "print the embedded default configuration and exit")
	fs.StringVar(&f.makeCerts, "make-certs", "", "write a development CA and server certificate into this directory and exit")
	root.AddCommand(newRepairCommand())
	return root
}

// run serves until a signal or a fatal error and returns the exit code.
func run(f serverFlags) int {
	if f.makeCerts != "" {
		if err := server.WriteDevelopmentCertificates(f.makeCerts); err != nil {
			fmt.Fprintf(os.Stderr, "strata-server: %v\n", err)
			return 1
		}
		fmt.Printf("wrote %s, %s (CA) and %s, %s (server) in %s\n", server.DevCAFile, server.DevCAKeyFile, server.DevServerCertFile, server.DevServerKeyFile, f.makeCerts)
		return 0
	}
	if f.printDefault {
		fmt.Print(config.DefaultTOML())
		return 0
	}
	cfg, err := config.Load(f.configPath, os.Environ())
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata-server: %v\n", err)
		return 2
	}
	// From here on stderr is written through the console, which never
	// blocks on a stalled reader nor fails on a closed one.
	console := server.NewConsole(os.Stderr)
	defer console.Close()
	logger, closeLog, err := server.NewLogger(cfg, console)
	if err != nil {
		fmt.Fprintf(console, "strata-server: %v\n", err)
		return 1
	}
	defer closeLog()

	// Signals are caught from before the listeners open, so a stop request
	// right after the banner is a graceful shutdown.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)

	root := server.RootCredentials{
		Username: os.Getenv("STRATA_ROOT_USERNAME"),
		Password: os.Getenv("STRATA_ROOT_PASSWORD"),
	}
	if root.Username == "" && root.Password == "" && f.defaultRoot {
		root = server.RootCredentials{Username: "iggy", Password: "iggy"}
	}
	httpConfig := httpapi.Config{JWTSecret: cfg.HTTP.JWT.Key()}
	srv, err := server.New(server.Options{Config: cfg, Logger: logger, Root: root,
		HTTP: func(s *server.Server) (http.Handler, error) { return httpapi.New(s, httpConfig) }})
	if err != nil {
		logger.Error("cannot start", zap.Error(err))
		fmt.Fprintf(console, "strata-server: %v\n", err)
		return 1
	}
	if err := srv.Start(); err != nil {
		logger.Error("cannot start", zap.Error(err))
		fmt.Fprintf(console, "strata-server: %v\n", err)
		_ = srv.Shutdown(context.Background())
		return 1
	}
	fmt.Fprintf(console, "strata-server %s listening: tcp %s, data in %s\n", server.Version, srv.TCPAddr(), cfg.System.Path)
	if addr := srv.HTTPAddr(); addr != nil {
		fmt.Fprintf(console, "http api on http://%s (POST /users/login, then Authorization: Bearer ...)\n", addr)
	}
	if hint := srv.LoginHint(); hint != "" {
		fmt.Fprintln(console, hint)
	}

	// A fatal serving error still shuts down cleanly, but the process
	// exits 1 so that a supervisor sees the failure.
	code := 0
	select {
	case sig := <-signals:
		logger.Info("shutting down", zap.String("signal", sig.String()))
	case err := <-srv.Done():
		if err != nil && !errors.Is(err, server.ErrClosed) {
			logger.Error("server failed", zap.Error(err))
			code = 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Error("shutdown", zap.Error(err))
		return 1
	}
	logger.Info("stopped")
	return code
}
