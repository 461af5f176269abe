package server_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
)

// testServer is a broker started inside the test process on a real TCP
// socket (127.0.0.1, port chosen by the kernel) over a real data directory.
type testServer struct {
	t    *testing.T
	dir  string
	srv  *server.Server
	addr string
	logs *logBuffer
}

// logBuffer collects the server's log lines for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) Sync() error { return nil }

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startServer starts a broker over dir with extra STRATA_ overrides.
func startServer(t *testing.T, dir string, env ...string) *testServer {
	t.Helper()
	environ := append([]string{"STRATA_SYSTEM_PATH=" + dir, "STRATA_TCP_ADDRESS=127.0.0.1:0"}, engineEnv()...)
	environ = append(environ, env...)
	cfg, err := config.Load("", environ)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), logs, zapcore.DebugLevel)
	srv, err := server.New(server.Options{Config: cfg, Logger: zap.New(core), Root: server.RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	ts := &testServer{t: t, dir: dir, srv: srv, addr: srv.TCPAddr().String(), logs: logs}
	t.Cleanup(func() { ts.stop() })
	return ts
}

// stop shuts the broker down gracefully (idempotent).
func (ts *testServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		ts.t.Errorf("shutdown: %v", err)
	}
}

// connect dials the broker and logs in as root.
func (ts *testServer) connect() *client.Client {
	ts.t.Helper()
	return connectTo(ts.t, ts.addr)
}

// connectTo dials addr and logs in as root.
func connectTo(t *testing.T, addr string) *client.Client {
	t.Helper()
	c, err := dialLogin(t, addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dialLogin dials addr and logs in as root, returning the error instead of
// failing the test: the form for goroutines other than the test's (which
// must not call t.Fatal).
func dialLogin(t *testing.T, addr string) (*client.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.LoginUser(ctx, "iggy", "iggy"); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	return c, nil
}

// ctx returns a context bounded for one test step.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// payloadFor is the deterministic payload of message i in partition p.
func payloadFor(p, i int, size int) []byte {
	b := make([]byte, size)
	prefix := fmt.Sprintf("p%d-m%d|", p, i)
	copy(b, prefix)
	for j := len(prefix); j < size; j++ {
		b[j] = byte('a' + (i*7+j*13+p)%26)
	}
	return b
}

// mustContain fails unless the server log contains every fragment.
func (ts *testServer) mustLog(fragments ...string) {
	ts.t.Helper()
	logs := ts.logs.String()
	for _, f := range fragments {
		if !strings.Contains(logs, f) {
			ts.t.Fatalf("server log lacks %q:\n%s", f, logs)
		}
	}
}

// newServerErr builds a server over dir and returns the error of New.
func newServerErr(t *testing.T, dir string) (*server.Server, error) {
	t.Helper()
	cfg, err := config.Load("", append([]string{"STRATA_SYSTEM_PATH=" + dir, "STRATA_TCP_ADDRESS=127.0.0.1:0"}, engineEnv()...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Root: server.RootCredentials{Username: "iggy", Password: "iggy"}})
	if err == nil {
		t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	}
	return srv, err
}

// readCurrentConfig returns runtime/current_config.toml of a data dir.
func readCurrentConfig(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "runtime", "current_config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// boundAddress finds `key = "addr"` in the [bound] table of a current
// config.
func boundAddress(t *testing.T, current, key string) string {
	t.Helper()
	var doc struct {
		Bound map[string]string `toml:"bound"`
	}
	if _, err := toml.Decode(current, &doc); err != nil {
		t.Fatal(err)
	}
	addr := doc.Bound[key]
	if addr == "" {
		t.Fatalf("no bound %s address in:\n%s", key, current)
	}
	return addr
}

// engineEnv passes the IO engine chosen for the run (make test runs the
// suite once with the default engine and once with
// STRATA_SYSTEM_IO_ENGINE=sync).
func engineEnv() []string {
	if engine := os.Getenv("STRATA_SYSTEM_IO_ENGINE"); engine != "" {
		return []string{"STRATA_SYSTEM_IO_ENGINE=" + engine}
	}
	return nil
}
