// Package cli is the strata command-line client: a cobra command tree over
// the client package. cmd/strata's main calls Run; tests call it
// in-process.
package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// Exit codes of the CLI.
const (
	exitOK = 0
	// exitError: the server refused the request or the reply was bad.
	exitError = 1
	// exitUsage: wrong arguments or flags.
	exitUsage = 2
	// exitConnection: the server could not be reached or the connection
	// broke.
	exitConnection = 3
)

// Env is everything the CLI takes from its process, so tests (the CLI's
// own and the server's integration tests) can run it in-process.
type Env struct {
	// Args are the command-line arguments without the program name.
	Args []string
	// Stdin feeds `message send` when no messages are given as arguments.
	Stdin io.Reader
	// Stdout receives results; Stderr errors and progress bars.
	Stdout, Stderr io.Writer
	// Getenv reads STRATA_ADDRESS, STRATA_USERNAME, STRATA_PASSWORD and
	// STRATA_TOKEN (os.Getenv in the binary).
	Getenv func(string) string
	// StderrIsTerminal decides whether progress bars are drawn; nil = no.
	StderrIsTerminal func() bool
}

// app holds the global flags and the lazily dialled client.
type app struct {
	Env
	address  string
	username string
	password string
	token    string
	output   string
	// transport, tlsCA and tlsInsecure choose how the client reaches the
	// server (--transport, --tls-ca, --tls-insecure).
	transport   string
	tlsCA       string
	tlsInsecure bool

	client *client.Client
}

// usageError marks an error in the command line (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Run executes the CLI with e and returns its exit code: 0 success,
// 1 the server refused the request, 2 bad command line, 3 connection
// failure. Cancelling ctx interrupts it (--follow then exits 0).
func Run(ctx context.Context, e Env) int {
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	if e.Stdin == nil {
		e.Stdin = strings.NewReader("")
	}
	a := &app{Env: e}
	root := newRootCommand(a)
	root.SetArgs(e.Args)
	root.SetIn(e.Stdin)
	root.SetOut(e.Stdout)
	root.SetErr(e.Stderr)
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	err := root.ExecuteContext(ctx)
	if a.client != nil {
		if cerr := a.client.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(e.Stderr, "error: "+describe(err))
	return exitCode(err)
}

// describe turns err into the one-line message the CLI prints.
func describe(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		msg := e.Error()
		if e.Code == wire.ErrUnauthenticated {
			msg += "; log in with --username/--password, --token, or STRATA_USERNAME/STRATA_PASSWORD"
		}
		return msg
	}
	return err.Error()
}

// exitCode maps an error to the CLI exit code.
func exitCode(err error) int {
	var ue usageError
	var opErr *net.OpError
	switch {
	case errors.As(err, &ue), isCobraUsage(err):
		return exitUsage
	case errors.Is(err, client.ErrConnectionLost), errors.As(err, &opErr):
		return exitConnection
	}
	return exitError
}

// isCobraUsage recognises cobra's own argument errors.
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "accepts ") ||
		strings.HasPrefix(s, "requires ") || strings.Contains(s, "unknown flag") ||
		strings.HasPrefix(s, "invalid argument")
}

// connect dials the server once per invocation, logging in when
// credentials were given.
func (a *app) connect(ctx context.Context) (*client.Client, error) {
	if a.client != nil {
		return a.client, nil
	}
	var opts []client.Option
	switch {
	case a.token != "":
		opts = append(opts, client.WithToken(a.token))
	case a.username != "":
		opts = append(opts, client.WithCredentials(a.username, a.password))
	}
	transportOpts, err := a.transportOptions()
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(ctx, a.address, append(opts, transportOpts...)...)
	if err != nil {
		return nil, err
	}
	a.client = c
	return c, nil
}

// transportOptions turns --transport, --tls-ca and --tls-insecure into
// Dial options. With none given, Dial follows the address (a scheme such
// as quic:// or wss://, else plain TCP).
func (a *app) transportOptions() ([]client.Option, error) {
	var tlsConf *tls.Config
	if a.tlsCA != "" || a.tlsInsecure {
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: a.tlsInsecure}
	}
	if a.tlsCA != "" {
		pem, err := os.ReadFile(a.tlsCA)
		if err != nil {
			return nil, usagef("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--tls-ca: %s holds no PEM certificate", a.tlsCA)
		}
		tlsConf.RootCAs = pool
	}
	var opts []client.Option
	if tlsConf != nil {
		opts = append(opts, client.WithTLS(tlsConf))
	}
	switch a.transport {
	case "":
		if tlsConf != nil && !strings.Contains(a.address, "://") {
			// TLS settings without a transport keep TCP, now over TLS.
			opts = append(opts, client.WithTransport(client.TransportTLS))
		}
	case "http":
		return nil, usagef("--transport http: the CLI speaks the binary protocol (tcp, tls, quic, ws, wss); " +
			"use the REST API directly (curl) or the Go client's HTTPClient")
	default:
		t, err := client.ParseTransport(a.transport)
		if err != nil {
			return nil, usagef("--transport must be tcp, tls, quic, ws or wss, got %q", a.transport)
		}
		opts = append(opts, client.WithTransport(t))
	}
	return opts, nil
}

// printer returns the output printer for the --output flag.
func (a *app) printer() *printer {
	return &printer{w: a.Stdout, json: a.output == "json"}
}

func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "strata",
		Short: "Command-line client for a Strata message broker",
		Long: `strata talks to a Strata server (or any server speaking Apache Iggy's
binary protocol 0.11) over TCP, TLS, QUIC or WebSocket (--transport, or an
address such as quic://host:8080 or ws://host:8092).

Streams, topics and users are named by numeric id or by name: an argument
that parses as a decimal number is an id, anything else a name.

Credentials: --username/--password (or STRATA_USERNAME/STRATA_PASSWORD), or
a personal access token with --token (or STRATA_TOKEN). The server address
comes from --address or STRATA_ADDRESS (default 127.0.0.1:8090).

Output: --output table (default, for people) or --output json (one JSON
object per line, for scripts).

Exit codes: 0 success, 1 the server refused the request (the message names
the protocol error, e.g. "stream not found (1009 StreamIdNotFound)"),
2 bad command line, 3 the server could not be reached or the connection
broke.`,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			// The environment fills flags not given on the command line; it
			// is read here, not as flag defaults, so --help never shows a
			// password.
			for _, f := range []struct {
				flag, env string
				dst       *string
			}{{"address", "STRATA_ADDRESS", &a.address}, {"username", "STRATA_USERNAME", &a.username},
				{"password", "STRATA_PASSWORD", &a.password}, {"token", "STRATA_TOKEN", &a.token},
				{"transport", "STRATA_TRANSPORT", &a.transport}} {
				if v := a.Getenv(f.env); v != "" && !cmd.Flag(f.flag).Changed {
					*f.dst = v
				}
			}
			if a.output != "table" && a.output != "json" {
				return usagef("--output must be table or json, got %q", a.output)
			}
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.address, "address", client.DefaultAddress, "server address host:port, or scheme://host:port with tcp, tls, quic, ws or wss (env STRATA_ADDRESS)")
	pf.StringVarP(&a.username, "username", "u", "", "username to log in with (env STRATA_USERNAME)")
	pf.StringVarP(&a.password, "password", "p", "", "password to log in with (env STRATA_PASSWORD)")
	pf.StringVar(&a.token, "token", "", "personal access token to log in with instead of a password (env STRATA_TOKEN)")
	pf.StringVar(&a.transport, "transport", "", "transport: tcp, tls, quic, ws or wss (default: the address scheme, else tcp; env STRATA_TRANSPORT)")
	pf.StringVar(&a.tlsCA, "tls-ca", "", "PEM file of the CA that signed the server certificate (tls, wss, quic)")
	pf.BoolVar(&a.tlsInsecure, "tls-insecure", false, "skip verification of the server certificate (development only)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table or json (one JSON object per line)")

	root.AddCommand(newPingCommand(a), newStreamCommand(a), newTopicCommand(a), newPartitionCommand(a),
		newSegmentCommand(a), newMessageCommand(a), newOffsetCommand(a), newUserCommand(a),
		newPATCommand(a), newMeCommand(a), newStatsCommand(a), newClientCommand(a), newGroupCommand(a))
	return root
}
