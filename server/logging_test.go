package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratabroker/strata/server/config"
)

// stalledWriter blocks every write until released, like a pipe whose
// reader stopped reading.
type stalledWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *stalledWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// brokenWriter fails every write like a pipe whose reader has gone.
type brokenWriter struct {
	mu     sync.Mutex
	writes int
}

func (w *brokenWriter) Write([]byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return 0, syscall.EPIPE
}

// within fails the test when fn has not returned after a generous
// deadline (it would otherwise hang the test binary).
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

// TestConsoleNeverBlocksOnAStalledReader: with the writer stalled, far
// more lines than the queue holds are written without blocking, Sync
// returns after its bound, and the lines queued come out once the reader
// reads again.
func TestConsoleNeverBlocksOnAStalledReader(t *testing.T) {
	w := &stalledWriter{release: make(chan struct{})}
	c := NewConsole(w)
	c.syncWait = 50 * time.Millisecond
	lines := 3 * consoleQueueLines
	within(t, "writes to a stalled console", func() {
		for i := 0; i < lines; i++ {
			if n, err := c.Write([]byte("line\n")); n != 5 || err != nil {
				t.Errorf("write: %d, %v", n, err)
				return
			}
		}
	})
	within(t, "Sync of a stalled console", func() { _ = c.Sync() })
	if c.Dropped() == 0 {
		t.Fatal("a full queue dropped nothing")
	}
	close(w.release)
	c.syncWait = 30 * time.Second
	within(t, "Sync after the reader came back", func() { _ = c.Sync() })
	written := strings.Count(w.String(), "line\n")
	if written == 0 || uint64(written)+c.Dropped() != uint64(lines) {
		t.Fatalf("written %d + dropped %d != %d lines", written, c.Dropped(), lines)
	}
	t.Logf("%d lines written, %d dropped while stalled", written, c.Dropped())
	_ = c.Close()
}

// TestLoggerSurvivesABrokenConsole: once the console fails (EPIPE), the
// logger keeps writing the log file, says there that the console failed,
// and the console is never written again.
func TestLoggerSurvivesABrokenConsole(t *testing.T) {
	cfg, err := config.Load("", []string{"STRATA_SYSTEM_PATH=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	w := &brokenWriter{}
	console := NewConsole(w)
	logger, closeLog, err := NewLogger(cfg, console)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		logger.Info("still logging")
	}
	within(t, "Sync of a broken console", func() { _ = logger.Sync() })
	closeLog()
	_ = console.Close()
	if !console.Failed() {
		t.Fatal("the console did not notice the broken pipe")
	}
	w.mu.Lock()
	writes := w.writes
	w.mu.Unlock()
	if writes != 1 {
		t.Fatalf("%d writes to a broken console, want 1", writes)
	}
	data, err := os.ReadFile(filepath.Join(cfg.System.Path, cfg.System.Logging.Path, LogFileName))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(data), "still logging"); got != 100 {
		t.Fatalf("the log file holds %d of 100 lines", got)
	}
	if !strings.Contains(string(data), "console output failed") || !strings.Contains(string(data), syscall.EPIPE.Error()) {
		t.Fatalf("the log file does not say the console failed:\n%s", data)
	}
}
