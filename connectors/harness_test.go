package connectors_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/connectors"
	_ "github.com/stratabroker/strata/connectors/builtin"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
)

// waitLimit bounds every wait for a condition; tests never pass or fail on
// timing otherwise.
const waitLimit = 30 * time.Second

// logBuffer collects log lines for assertions and failure output.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
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

// startBroker starts a real Strata server on 127.0.0.1:0 over a temp dir.
func startBroker(t *testing.T) string {
	t.Helper()
	cfg, err := config.Load("", []string{"STRATA_SYSTEM_PATH=" + t.TempDir(), "STRATA_TCP_ADDRESS=127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Logger: zap.NewNop(), Root: server.RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("server Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("server shutdown: %v", err)
		}
	})
	return srv.TCPAddr().String()
}

// createTopic creates stream/topic with n partitions.
func createTopic(t *testing.T, addr, stream, topic string, partitions uint32) {
	t.Helper()
	ctx := context.Background()
	cl, err := client.Dial(ctx, addr, client.WithCredentials("iggy", "iggy"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.CreateStream(ctx, stream); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateTopic(ctx, client.Named(stream), topic, partitions, nil); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes a config file.
func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runtimeEnv is a connectors runtime under test.
type runtimeEnv struct {
	rt   *connectors.Runtime
	logs *logBuffer
	base string
}

// startRuntime starts a runtime against addr with configs in configDir and
// state in stateDir, the API on a kernel-chosen port; env adds
// STRATA_CONNECTORS_ overrides.
func startRuntime(t *testing.T, addr, configDir, stateDir string, overrides ...string) *runtimeEnv {
	t.Helper()
	cfg, err := connectors.LoadRuntimeConfig("", append([]string{
		"STRATA_CONNECTORS_STRATA_ADDRESS=" + addr,
		"STRATA_CONNECTORS_STATE_PATH=" + stateDir,
		"STRATA_CONNECTORS_CONNECTORS_CONFIG_DIR=" + configDir,
		"STRATA_CONNECTORS_CONNECTORS_POLL_INTERVAL=0s",
		"STRATA_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0",
		"STRATA_CONNECTORS_PLUGINS_CALL_TIMEOUT=10s",
	}, overrides...))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), logs, zapcore.InfoLevel)
	rt, err := connectors.New(connectors.Options{Config: cfg, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	env := &runtimeEnv{rt: rt, logs: logs, base: "http://" + rt.HTTPAddr().String()}
	t.Cleanup(func() {
		if t.Failed() && env.rt != nil {
			b, _ := json.MarshalIndent(env.rt.Stats(), "", " ")
			t.Logf("stats at failure: %s", b)
		}
		env.shutdown(t)
		if t.Failed() {
			t.Logf("runtime log:\n%s", logs.String())
		}
	})
	return env
}

func (e *runtimeEnv) shutdown(t *testing.T) {
	if e.rt == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.rt.Shutdown(ctx); err != nil {
		t.Errorf("runtime shutdown: %v", err)
	}
	e.rt = nil
}

// getJSON GETs path from the API into v.
func (e *runtimeEnv) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get(e.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// waitFor polls cond until it holds or waitLimit passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sinkLine is a line of the file sink (jsonl) or the example plugin.
type sinkLine struct {
	Partition uint32 `json:"partition"`
	Offset    uint64 `json:"offset"`
	Payload   struct {
		ID   *uint64 `json:"id"`
		Text string  `json:"text"`
		Tag  string  `json:"tag"`
	} `json:"payload"`
}

// readLines reads the complete lines of a sink output file.
func readLines(t *testing.T, path string) []sinkLine {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sinkLine
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return out
		}
		var l sinkLine
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("bad sink line %q: %v", line, err)
		}
		if l.Payload.ID == nil {
			t.Fatalf("sink line without payload id: %q", line)
		}
		out = append(out, l)
	}
}

// checkOncePerID asserts lines hold ids 0..n-1 exactly once each, and that
// per partition offsets and ids increase.
func checkOncePerID(t *testing.T, lines []sinkLine, n int) {
	t.Helper()
	if len(lines) != n {
		t.Fatalf("got %d lines, want %d", len(lines), n)
	}
	checkAtLeastOnce(t, lines, n)
	seen := map[uint64]bool{}
	last := map[uint32]sinkLine{}
	for _, l := range lines {
		id := *l.Payload.ID
		if seen[id] {
			t.Fatalf("id %d delivered twice", id)
		}
		seen[id] = true
		if prev, ok := last[l.Partition]; ok && (l.Offset <= prev.Offset || id <= *prev.Payload.ID) {
			t.Fatalf("partition %d out of order: offset %d id %d after offset %d id %d", l.Partition, l.Offset, id, prev.Offset, *prev.Payload.ID)
		}
		last[l.Partition] = l
	}
}

// checkAtLeastOnce asserts every id 0..n-1 appears.
func checkAtLeastOnce(t *testing.T, lines []sinkLine, n int) {
	t.Helper()
	seen := map[uint64]bool{}
	for _, l := range lines {
		seen[*l.Payload.ID] = true
	}
	for i := 0; i < n; i++ {
		if !seen[uint64(i)] {
			t.Fatalf("id %d never delivered (%d lines)", i, len(lines))
		}
	}
}

func countIDs(lines []sinkLine) int {
	seen := map[uint64]bool{}
	for _, l := range lines {
		seen[*l.Payload.ID] = true
	}
	return len(seen)
}

func sourceConfig(maxCount int, extra string) string {
	return fmt.Sprintf(`plugin = "random"
[[streams]]
stream = "events"
topic = "clicks"
schema = "json"
batch_length = 50
[plugin_config]
messages_per_batch = 7
max_count = %d
%s
`, maxCount, extra)
}

func fileSinkConfig(path string) string {
	return fmt.Sprintf(`plugin = "file"
[[streams]]
stream = "events"
topics = ["clicks"]
schema = "json"
batch_length = 40
[plugin_config]
path = %q
`, path)
}
