package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Child-process limits.
const (
	// serverBootTimeout bounds the wait for the server's banner.
	serverBootTimeout = 60 * time.Second
	// serverStopTimeout bounds a graceful stop before the child is killed.
	serverStopTimeout = 30 * time.Second
	// serverLogTailMax bounds the log kept for error messages.
	serverLogTailMax = 64 << 10
)

// ErrServer: the child server could not be built, started or stopped.
var ErrServer = errors.New("server process")

// bannerLine is strata-server's boot line naming its TCP address.
var bannerLine = regexp.MustCompile(`listening: tcp (\S+),`)

// repoRoot finds the module root (the directory holding go.mod) from the
// working directory upwards.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no go.mod above the working directory", ErrServer)
		}
		dir = parent
	}
}

// buildServer runs `go build -o dir/strata-server ./cmd/strata-server` in
// the repository and returns the binary's path.
func buildServer(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "strata-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/strata-server")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: go build ./cmd/strata-server: %w\n%s", ErrServer, err, out)
	}
	return bin, nil
}

// serverProcess is a strata-server child on a fresh data directory.
type serverProcess struct {
	cmd     *exec.Cmd
	Address string
	DataDir string
	log     *tailBuffer
	exited  chan error
}

// startServer runs bin with --with-default-root-credentials on dataDir and
// a free loopback port and waits for its banner.
func startServer(ctx context.Context, bin, dataDir string, extraEnv ...string) (*serverProcess, error) {
	cmd := exec.Command(bin, "--with-default-root-credentials")
	cmd.Env = append(os.Environ(), "STRATA_SYSTEM_PATH="+dataDir, "STRATA_TCP_ADDRESS=127.0.0.1:0")
	cmd.Env = append(cmd.Env, extraEnv...)
	p, m, err := startChild(ctx, cmd, bannerLine)
	if err != nil {
		return nil, err
	}
	p.DataDir = dataDir
	if len(m) > 1 {
		p.Address = m[1]
	}
	return p, nil
}

// startChild starts cmd and waits until a line of its stderr matches
// ready, returning the match's submatches.
func startChild(ctx context.Context, cmd *exec.Cmd, ready *regexp.Regexp) (*serverProcess, []string, error) {
	cmd.Stdout = io.Discard
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrServer, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("%w: start %s: %w", ErrServer, cmd.Path, err)
	}
	p := &serverProcess{cmd: cmd, log: &tailBuffer{}, exited: make(chan error, 1)}
	found := make(chan []string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		s := bufio.NewScanner(pipe)
		for s.Scan() {
			line := s.Text()
			p.log.add(line)
			if m := ready.FindStringSubmatch(line); m != nil {
				select {
				case found <- m:
				default:
				}
			}
		}
	}()
	go func() {
		<-scanned
		p.exited <- cmd.Wait()
	}()
	timer := time.NewTimer(serverBootTimeout)
	defer timer.Stop()
	select {
	case m := <-found:
		return p, m, nil
	case err := <-p.exited:
		return nil, nil, fmt.Errorf("%w: %s exited before it was ready (%v):\n%s", ErrServer, cmd.Path, err, p.log.String())
	case <-timer.C:
		return nil, nil, errors.Join(fmt.Errorf("%w: %s not ready within %v:\n%s", ErrServer, cmd.Path, serverBootTimeout, p.log.String()), p.kill())
	case <-ctx.Done():
		return nil, nil, errors.Join(ctx.Err(), p.kill())
	}
}

// Pid returns the child's process id.
func (p *serverProcess) Pid() int { return p.cmd.Process.Pid }

// Stop asks the server to shut down (SIGTERM) and waits, killing it after
// serverStopTimeout.
func (p *serverProcess) Stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%w: %w", ErrServer, err)
	}
	timer := time.NewTimer(serverStopTimeout)
	defer timer.Stop()
	select {
	case err := <-p.exited:
		if err != nil {
			return fmt.Errorf("%w: exit: %w\n%s", ErrServer, err, p.log.String())
		}
		return nil
	case <-timer.C:
		return p.kill()
	}
}

func (p *serverProcess) kill() error {
	err := p.cmd.Process.Kill()
	<-p.exited
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%w: kill: %w", ErrServer, err)
	}
	return nil
}

// tailBuffer keeps the last serverLogTailMax bytes of a child's log; the
// scanner goroutine adds, error paths read.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	size  int
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > serverLogTailMax && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
