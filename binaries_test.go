package strata_test

// The tests of this package run the built programs as a user does: the
// README's command blocks, the dashboard's queries, the metrics linter and
// the log format, against strata-server and strata-connect processes on
// temporary data directories.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// srcDir is a copy of the repository's sources (what a fresh clone
// holds), and binDir its bin/ with every program built as `make build`
// builds them; TestMain makes both. The README test runs its walkthroughs
// in srcDir (a `make build` there finds everything up to date), after
// removing whatever an earlier walkthrough left (cleanSrcDir).
var srcDir, binDir string

// srcFiles are the files of srcDir after the build.
var srcFiles map[string]bool

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

// runMain copies the sources to a directory named after the repository's
// path (the same from one run to the next, so the build cache serves the
// build: the compiler's cache keys hold the source directory) and builds
// the programs there, under a lock against a concurrent run of the same
// repository's tests.
func runMain(m *testing.M) int {
	repo, err := filepath.Abs(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sum := sha256.Sum256([]byte(repo))
	parent := filepath.Join(os.TempDir(), "strata-readme-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lock, err := os.OpenFile(filepath.Join(parent, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		fmt.Fprintln(os.Stderr, "lock:", err)
		return 1
	}
	srcDir = filepath.Join(parent, "strata")
	if err := os.RemoveAll(srcDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(srcDir)
	if err := copySources(".", srcDir); err != nil {
		fmt.Fprintln(os.Stderr, "copy the sources:", err)
		return 1
	}
	binDir = filepath.Join(srcDir, "bin")
	build := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "./cmd/...")
	build.Dir = srcDir
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		return 1
	}
	if srcFiles, err = listFiles(srcDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// copySources copies the repository at from to dir: the files git
// tracks or would track (untracked files that are not ignored), so no
// data directory, build output or tool of the developer's comes along;
// without git, every file outside .git, bin, local_data, local_state,
// .tools, certs and sim-failures.
func copySources(from, dir string) error {
	var paths []string
	ls := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = from
	if out, err := ls.Output(); err == nil {
		for _, p := range strings.Split(string(out), "\x00") {
			if p != "" {
				paths = append(paths, p)
			}
		}
	} else {
		err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				switch d.Name() {
				case ".git", "bin", "local_data", "local_state", ".tools", "certs", "sim-failures":
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				paths = append(paths, path)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, p := range paths {
		src := filepath.Join(from, p)
		info, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// listFiles lists the files and directories under dir.
func listFiles(dir string) (map[string]bool, error) {
	files := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		files[path] = true
		return nil
	})
	return files, err
}

// cleanSrcDir removes from srcDir everything that was not there after
// TestMain's build (./local_data, ./local_state, snapshot.zip...), so a
// walkthrough starts on a fresh clone.
func cleanSrcDir(t *testing.T) {
	t.Helper()
	var extra []string
	err := filepath.WalkDir(srcDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !srcFiles[path] {
			extra = append(extra, path)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range extra {
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
	}
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
