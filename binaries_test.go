package strata_test

// The tests of this package run the built programs as a user does: the
// README's command blocks, the dashboard's queries, the metrics linter and
// the log format, against strata-server and strata-connect processes on
// temporary data directories.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binDir holds strata-server, strata and strata-connect, built once per
// test binary run by TestMain.
var binDir string

// programs are the commands TestMain builds into binDir.
var programs = []string{"strata-server", "strata", "strata-connect"}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strata-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = filepath.Join(dir, "bin")
	args := []string{"build", "-o", binDir + string(filepath.Separator)}
	for _, p := range programs {
		args = append(args, "./cmd/"+p)
	}
	build := exec.Command("go", args...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// cleanEnviron is the test process's environment without STRATA_
// variables (the CI's STRATA_TEST_* and an engine override stay: they are
// meant for the programs too).
func cleanEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "STRATA_") && !strings.HasPrefix(kv, "STRATA_TEST_") && !strings.HasPrefix(kv, "STRATA_SYSTEM_IO_ENGINE=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// output collects a child's output lines while it runs.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// process is a running program.
type process struct {
	name   string
	cmd    *exec.Cmd
	out    *output
	exited chan error
}

// startProgram runs bin/name with args in env and stops it (SIGTERM, then
// SIGKILL) at the end of the test.
func startProgram(t *testing.T, name string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = env
	p := &process{name: name, cmd: cmd, out: &output{}, exited: make(chan error, 1)}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = io.Copy(p.out, stdout)
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// waitFor waits until the output matches re and returns the submatches.
func (p *process) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := re.FindStringSubmatch(p.out.String()); m != nil {
			return m
		}
		select {
		case err := <-p.exited:
			p.exited <- err
			t.Fatalf("%s exited (%v) before printing %s:\n%s", p.name, err, re, p.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never printed %s:\n%s", p.name, re, p.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the process with SIGTERM (SIGKILL after a minute) and returns
// its exit error; it may be called more than once.
func (p *process) stop(t *testing.T) error {
	t.Helper()
	if p.cmd.ProcessState != nil {
		return nil
	}
	select {
	case err := <-p.exited:
		p.exited <- err
		return err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		p.exited <- err
		return err
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		err := <-p.exited
		p.exited <- err
		t.Errorf("%s did not stop on SIGTERM within a minute:\n%s", p.name, p.out)
		return err
	}
}

// server is a running strata-server.
type server struct {
	*process
	dir      string
	tcp      string
	httpBase string
}

// Boot lines that name the bound addresses.
var (
	tcpLine  = regexp.MustCompile(`listening: tcp (\S+),`)
	httpLine = regexp.MustCompile(`http api on (http://\S+)`)
)

// startServer runs strata-server on a new data directory with the
// development root user, TCP and HTTP on ephemeral ports, and env added.
func startServer(t *testing.T, env ...string) *server {
	t.Helper()
	dir := t.TempDir()
	environ := append(cleanEnviron(), "STRATA_SYSTEM_PATH="+dir, "STRATA_TCP_ADDRESS=127.0.0.1:0",
		"STRATA_HTTP_ENABLED=true", "STRATA_HTTP_ADDRESS=127.0.0.1:0", "STRATA_SYSTEM_MEMORY_POOL_SIZE=512 MiB")
	p := startProgram(t, "strata-server", append(environ, env...), "--with-default-root-credentials")
	s := &server{process: p, dir: dir, tcp: p.waitFor(t, tcpLine)[1]}
	s.httpBase = p.waitFor(t, httpLine)[1]
	return s
}

// lines returns the output lines matching keep.
func lines(text string, keep func(string) bool) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if keep(sc.Text()) {
			out = append(out, sc.Text())
		}
	}
	return out
}
