package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratabroker/strata/client/clienttest"
)

const testTimeout = 20 * time.Second

func startServer(t *testing.T) *clienttest.Server {
	t.Helper()
	srv, err := clienttest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
	return srv
}

// result is one CLI run.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the CLI in-process against srv as root, with stdin.
type cli struct {
	t        *testing.T
	srv      *clienttest.Server
	env      map[string]string
	terminal bool
}

func newCLI(t *testing.T, srv *clienttest.Server) *cli {
	return &cli{t: t, srv: srv, env: map[string]string{
		"STRATA_ADDRESS":  srv.Addr(),
		"STRATA_USERNAME": clienttest.RootUsername,
		"STRATA_PASSWORD": clienttest.RootPassword,
	}}
}

func (c *cli) runIn(ctx context.Context, stdin string, stdout io.Writer, args ...string) result {
	var out, errb bytes.Buffer
	var w io.Writer = &out
	if stdout != nil {
		w = io.MultiWriter(&out, stdout)
	}
	code := Run(ctx, Env{Args: args, Stdin: strings.NewReader(stdin), Stdout: w, Stderr: &errb,
		Getenv: func(k string) string { return c.env[k] }, StderrIsTerminal: func() bool { return c.terminal }})
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func (c *cli) stdin(stdin string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return c.runIn(ctx, stdin, nil, args...)
}

func (c *cli) run(args ...string) result { return c.stdin("", args...) }

// ok runs and requires exit 0, returning stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 0 {
		c.t.Fatalf("strata %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// fails runs and requires the exit code and a stderr fragment.
func (c *cli) fails(code int, fragment string, args ...string) {
	c.t.Helper()
	r := c.run(args...)
	if r.code != code || !strings.Contains(r.stderr, fragment) {
		c.t.Fatalf("strata %s: exit %d stderr %q, want exit %d and %q", strings.Join(args, " "), r.code, r.stderr, code, fragment)
	}
}

// jsonLines decodes one JSON object per line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON object line: %q: %v", line, err)
		}
		objs = append(objs, m)
	}
	return objs
}

// lineCounter signals after n lines were written.
type lineCounter struct {
	mu    sync.Mutex
	n     int
	want  int
	reach chan struct{}
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	before := l.n
	l.n += bytes.Count(p, []byte("\n"))
	if before < l.want && l.n >= l.want {
		close(l.reach)
	}
	return len(p), nil
}
