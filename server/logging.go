package server

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/server/logging"
)

// LogFileName is the server log's name under the logs directory.
const LogFileName = "strata-server.log"

// NewLogger builds the server's zap logger from [system.logging]: text
// (console) or JSON lines, written both to console (the process's stderr,
// through a Console; nil writes no console copy) and to
// {system.path}/{logging.path}/strata-server.log, the record. The returned
// close function syncs and closes the file.
func NewLogger(cfg *config.Config, console io.Writer) (*zap.Logger, func(), error) {
	level, err := logging.ParseLevel(cfg.System.Logging.Level)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: system.logging.level: %v", config.ErrInvalid, err)
	}
	dir := cfg.System.Logging.Path
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cfg.System.Path, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create log directory: %w", err)
	}
	file, err := os.OpenFile(filepath.Join(dir, LogFileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open log file: %w", err)
	}
	// The format every Strata program logs in (server/logging).
	encoder, err := logging.NewEncoder(cfg.System.Logging.Format)
	if err != nil {
		_ = file.Close()
		return nil, nil, fmt.Errorf("%w: system.logging.format: %v", config.ErrInvalid, err)
	}
	cores := []zapcore.Core{zapcore.NewCore(encoder, zapcore.AddSync(file), level)}
	// zap reports its own write failures (a full disk under the log file)
	// on its error output: the console too, never the raw stderr.
	errorOutput := zapcore.AddSync(io.Discard)
	if console != nil {
		sink := zapcore.AddSync(console)
		cores = append(cores, zapcore.NewCore(encoder, sink, level))
		errorOutput = sink
	}
	logger := zap.New(zapcore.NewTee(cores...), zap.ErrorOutput(errorOutput))
	if c, ok := console.(*Console); ok {
		c.onFailure(func(err error) {
			logger.Warn("console output failed: the log continues in the log file only", zap.String("file", file.Name()), zap.Error(err))
		})
	}
	closeFn := func() {
		_ = logger.Sync()
		_ = file.Close()
	}
	return logger, closeFn, nil
}

// Console bounds.
const (
	// consoleQueueLines is how many lines wait for a slow console before
	// new ones are dropped (the log file keeps them all).
	consoleQueueLines = 4096
	// consoleSyncWait bounds how long Sync waits for a stalled console.
	consoleSyncWait = 2 * time.Second
)

// Console is a best-effort copy of the log on the process's stderr (or
// any writer): a console that breaks or stalls can never stop the server.
// The terminal or pipe behind stderr belongs to someone else (`make run |
// tee`, a closed terminal, a paused pager): a write to it may fail (EPIPE
// once tee has exited) or block for ever. So Write never blocks and never
// fails: it queues a copy of the line for one goroutine that writes the
// queue out, and drops the line when the queue is full; after the first
// failed write the console is given up and every later line is dropped.
// The log file is the record. (A process must also not die of the
// SIGPIPE of such a write: strata-server asks for SIGPIPE with
// signal.Notify, which turns it into the EPIPE error handled here.)
type Console struct {
	out      io.Writer
	syncWait time.Duration
	queue    chan consoleItem
	stop     chan struct{}
	stopped  sync.Once
	failed   atomic.Bool
	closed   atomic.Bool
	dropped  atomic.Uint64
	failure  atomic.Pointer[func(error)]
}

// consoleItem is one queued line, or (line nil) a Sync's marker.
type consoleItem struct {
	line []byte
	done chan struct{}
}

// NewConsole starts a Console writing to out.
func NewConsole(out io.Writer) *Console {
	c := &Console{out: out, syncWait: consoleSyncWait, queue: make(chan consoleItem, consoleQueueLines), stop: make(chan struct{})}
	go c.run()
	return c
}

// Write queues a copy of p; it never blocks and never fails.
func (c *Console) Write(p []byte) (int, error) {
	if c.failed.Load() || c.closed.Load() {
		c.dropped.Add(1)
		return len(p), nil
	}
	select {
	case c.queue <- consoleItem{line: append([]byte(nil), p...)}:
	default:
		c.dropped.Add(1)
	}
	return len(p), nil
}

// Sync waits until what was written before it is out, or the console has
// failed, or consoleSyncWait has passed (a stalled reader).
func (c *Console) Sync() error {
	if c.failed.Load() {
		return nil
	}
	done := make(chan struct{})
	timeout := time.NewTimer(c.syncWait)
	defer timeout.Stop()
	select {
	case c.queue <- consoleItem{done: done}:
	case <-timeout.C:
		return nil
	case <-c.stop:
		return nil
	}
	select {
	case <-done:
	case <-timeout.C:
	case <-c.stop:
	}
	return nil
}

// Close syncs and stops the writer goroutine; later writes are dropped.
func (c *Console) Close() error {
	_ = c.Sync()
	c.closed.Store(true)
	c.stopped.Do(func() { close(c.stop) })
	return nil
}

// Failed reports whether a write to the console failed (it is then given
// up).
func (c *Console) Failed() bool { return c.failed.Load() }

// Dropped is the number of lines not written to the console.
func (c *Console) Dropped() uint64 { return c.dropped.Load() }

// onFailure sets the function called once, from the writer goroutine,
// when the console fails.
func (c *Console) onFailure(fn func(error)) { c.failure.Store(&fn) }

// run writes the queue out until Close.
func (c *Console) run() {
	for {
		var item consoleItem
		select {
		case item = <-c.queue:
		case <-c.stop:
			return
		}
		if item.done != nil {
			close(item.done)
			continue
		}
		if c.failed.Load() {
			c.dropped.Add(1)
			continue
		}
		if _, err := c.out.Write(item.line); err != nil {
			// The hook runs before the console counts as failed, so that a
			// Sync from now on waits for it.
			if fn := c.failure.Load(); fn != nil {
				(*fn)(err)
			}
			c.failed.Store(true)
			c.dropped.Add(1)
		}
	}
}
