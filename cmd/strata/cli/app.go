// Package cli is the strata command-line client: a cobra command tree over
// the client package. cmd/strata's main calls Run; tests call it
// in-process.
package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/cmd/internal/buildinfo"
	"github.com/stratabroker/strata/cmd/internal/command"
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

// connectTimeoutDefault bounds connecting (and the TLS, WebSocket or QUIC
// handshake) when --connect-timeout is not given.
const connectTimeoutDefault = 5 * time.Second

// Env is everything the CLI takes from its process, so tests (the CLI's
// own and the server's integration tests) can run it in-process.
type Env struct {
	// Args are the command-line arguments without the program name.
	Args []string
	// Stdin feeds `message send` when no messages are given as arguments.
	Stdin io.Reader
	// Stdout receives results; Stderr errors and progress bars.
	Stdout, Stderr io.Writer
	// Getenv reads the STRATA_* settings (os.Getenv in the binary).
	Getenv func(string) string
	// StderrIsTerminal decides whether progress bars are drawn; nil = no.
	StderrIsTerminal func() bool
	// ConfigDir holds the saved contexts (contexts.toml); the binary uses
	// the user's config directory (os.UserConfigDir()/strata).
	// STRATA_CONFIG_DIR overrides it; empty and unset = no saved contexts.
	ConfigDir string
}

// app holds the global flags and the lazily dialled client.
type app struct {
	Env
	// The connection settings as flags give them; resolve fills what the
	// flags leave unset from the environment and the selected context.
	address  string
	username string
	password string
	token    string
	output   string
	// transport, tlsCA and tlsInsecure choose how the client reaches the
	// server (--transport, --tls-ca, --tls-insecure).
	transport      string
	tlsCA          string
	tlsInsecure    bool
	connectTimeout time.Duration
	// contextName is --context: the saved context to use.
	contextName string

	// flags are the root's persistent flags (which were given: Changed).
	flags    *pflag.FlagSet
	resolved bool
	client   *client.Client
	// subject names what the running command works on, for errors
	// (explain).
	subject subject
}

// usagef returns a command-line mistake (exit code 2).
func usagef(format string, args ...any) error { return command.Usagef(format, args...) }

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
	if dir := e.Getenv("STRATA_CONFIG_DIR"); dir != "" {
		e.ConfigDir = dir
	}
	a := &app{Env: e}
	root := newRootCommand(a)
	root.SetArgs(e.Args)
	root.SetIn(e.Stdin)
	root.SetOut(e.Stdout)
	root.SetErr(e.Stderr)
	command.Prepare(root, buildinfo.Read("strata"))
	err := root.ExecuteContext(ctx)
	if err != nil && a.client != nil {
		err = a.explain(ctx, err)
	}
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

// connect dials the server once per invocation, logging in when
// credentials were given.
func (a *app) connect(ctx context.Context) (*client.Client, error) {
	if a.client != nil {
		return a.client, nil
	}
	if err := a.resolve(); err != nil {
		return nil, err
	}
	opts := []client.Option{client.WithDialTimeout(a.connectTimeout)}
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

Where and as whom: --address (default 127.0.0.1:8090), --transport,
--tls-ca, --tls-insecure, --username/--password or --token. Each setting
not given as a flag comes from the environment (STRATA_ADDRESS,
STRATA_TRANSPORT, STRATA_TLS_CA, STRATA_TLS_INSECURE, STRATA_USERNAME,
STRATA_PASSWORD, STRATA_TOKEN), else from the selected saved context
(--context, STRATA_CONTEXT, else the one chosen with "strata context use";
see "strata context --help"), else the default.

Output: --output table (default, for people) or --output json (one JSON
object per line, for scripts; the records are documented in
cmd/strata/README.md).

Errors read "error: MESSAGE (CODE NAME)" with Apache Iggy's error code and
name, e.g. "stream orders not found (1009 StreamIdNotFound)". Exit codes:
0 success, 1 the server refused the request, 2 bad command line, 3 the
server could not be reached or the connection broke.`,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if a.output != "table" && a.output != "json" {
				return usagef("--output must be table or json, got %q", a.output)
			}
			a.subject = subjectOf(cmd, args)
			return nil
		},
	}
	pf := root.PersistentFlags()
	a.flags = pf
	pf.StringVar(&a.address, "address", client.DefaultAddress, "server address host:port, or scheme://host:port with tcp, tls, quic, ws or wss (env STRATA_ADDRESS)")
	pf.StringVarP(&a.username, "username", "u", "", "username to log in with (env STRATA_USERNAME)")
	pf.StringVarP(&a.password, "password", "p", "", "password to log in with (env STRATA_PASSWORD)")
	pf.StringVar(&a.token, "token", "", "personal access token to log in with instead of a password (env STRATA_TOKEN)")
	pf.StringVar(&a.transport, "transport", "", "transport: tcp, tls, quic, ws or wss (default: the address scheme, else tcp; env STRATA_TRANSPORT)")
	pf.StringVar(&a.tlsCA, "tls-ca", "", "PEM file of the CA that signed the server certificate (tls, wss, quic; env STRATA_TLS_CA)")
	pf.BoolVar(&a.tlsInsecure, "tls-insecure", false, "skip verification of the server certificate (development only; env STRATA_TLS_INSECURE)")
	a.connectTimeout = connectTimeoutDefault
	pf.Var(durationFlag{&a.connectTimeout}, "connect-timeout", `give up connecting after this long, such as "5s" or "500 ms" (env STRATA_CONNECT_TIMEOUT)`)
	pf.StringVar(&a.contextName, "context", "", "saved context to take unset connection settings from (env STRATA_CONTEXT)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table or json (one JSON object per line)")

	root.AddCommand(newPingCommand(a), newStreamCommand(a), newTopicCommand(a), newPartitionCommand(a),
		newSegmentCommand(a), newMessageCommand(a), newOffsetCommand(a), newUserCommand(a),
		newPATCommand(a), newMeCommand(a), newStatsCommand(a), newClientCommand(a), newGroupCommand(a),
		newContextCommand(a))
	addCompletions(a, root)
	return root
}
