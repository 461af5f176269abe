package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// connectBinary is strata-connect, built once per test binary run.
var connectBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strata-connect-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	connectBinary = filepath.Join(dir, "strata-connect")
	build := exec.Command("go", "build", "-o", connectBinary, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build strata-connect:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer collects a child's output for the test to read while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// baseEnv is an environment for a strata-connect with no connectors and
// no control API, in dir.
func baseEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STRATA_CONNECTORS_") {
			env = append(env, kv)
		}
	}
	return append(env, "STRATA_CONNECTORS_HTTP_ENABLED=false", "STRATA_CONNECTORS_STATE_PATH="+filepath.Join(dir, "state"),
		"STRATA_CONNECTORS_CONNECTORS_CONFIG_DIR="+dir, "STRATA_CONNECTORS_CONNECTORS_POLL_INTERVAL=0")
}

// TestMisspeltVariableStopsStrataConnect: a STRATA_CONNECTORS_ variable
// strata-connect does not read stops it with the nearest one, and a
// duration written as the server's config writes them ("10 s") is
// accepted.
func TestMisspeltVariableStopsStrataConnect(t *testing.T) {
	dir := t.TempDir()
	for env, want := range map[string]string{
		"STRATA_CONNECTORS_STRATA_ADRESS=127.0.0.1:1": "STRATA_CONNECTORS_STRATA_ADRESS names no setting; did you mean STRATA_CONNECTORS_STRATA_ADDRESS?",
		"STRATA_CONNECTORS_SHUTDOWN_TIMEOUT=10 S":     "case-sensitive",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, connectBinary)
		cmd.Env = append(baseEnv(dir), env)
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("%s: strata-connect ran on:\n%s", env, out)
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), want) {
			t.Errorf("%s: %v\n%s\nwant exit 1 saying %q", env, err, out, want)
		}
	}

	cmd := exec.Command(connectBinary)
	cmd.Env = append(baseEnv(dir), "STRATA_CONNECTORS_SHUTDOWN_TIMEOUT=10 s", "STRATA_CONNECTORS_PLUGINS_CALL_TIMEOUT=1 min")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "strata-connect running") {
		select {
		case err := <-exited:
			t.Fatalf("strata-connect exited: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("strata-connect did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("strata-connect did not stop:\n%s", out.String())
	}
}
