package strata_test

// TestREADMEBlocksRun runs the command blocks of README.md and
// connectors/README.md as written, in order, each README on a fresh
// server, so that they stay true. The blocks are read at test time.
//
// The rules, for whoever edits a README:
//
//   - A code block (indented by four spaces, or fenced with ```) is a
//     shell script and runs, unless the line before it (blank lines
//     aside) is a marker comment, which Markdown does not show:
//
//     <!-- readme-test: skip: REASON -->   the block is not run (it is
//     not commands, or runs for ever, or is the test suite itself);
//     <!-- readme-test: server-stopped --> the block runs with the
//     server of README.md stopped (strata-server repair), which is
//     started again after it.
//
//   - README.md's blocks run against the server `make run` starts: the
//     test runs the Makefile's run recipe in the background first, on a
//     fresh ./local_data. connectors/README.md's blocks start their own.
//
//   - A command that ends in "&" runs in the background, and the next
//     command runs once the program listens, as a user would wait for it:
//     strata-server on 127.0.0.1:8090, strata-connect on 127.0.0.1:8081.
//     Every background program is stopped (SIGTERM) at the end.
//
//   - The blocks run in one bash with `set -euo pipefail`: a command that
//     fails fails the test, naming it; curl runs with --fail-with-body, so
//     an HTTP error answer is a failure too.
//
// The programs listen on their default ports, so the scripts run in a
// network namespace of their own (unshare -rn) where one can be made;
// otherwise only when the ports are free, and the test skips with the
// reason when neither. It skips too when a tool a block needs (bash, make,
// curl, jq, ...) is missing; .ci/run installs curl and jq.
// STRATA_TEST_README_VERBOSE=1 logs the whole output of each walkthrough.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeBlock is a code block of a README.
type readmeBlock struct {
	line int    // 1-based line of its first line
	text string // the block, unindented
	// marker is "", "skip" or "server-stopped"; reason follows skip.
	marker, reason string
}

// readmeMarker is a marker comment before a block.
var readmeMarker = regexp.MustCompile(`^<!--\s*readme-test:\s*(skip|server-stopped)\s*(?::\s*(.*?))?\s*-->$`)

// readmeBlocks extracts the code blocks of a Markdown text.
func readmeBlocks(text string) ([]readmeBlock, error) {
	lines := strings.Split(text, "\n")
	var blocks []readmeBlock
	lastText := "" // the last non-blank line outside a block
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		indented := strings.HasPrefix(line, "    ") && (i == 0 || strings.TrimSpace(lines[i-1]) == "")
		fenced := strings.HasPrefix(line, "```")
		if !indented && !fenced {
			if strings.TrimSpace(line) != "" {
				lastText = strings.TrimSpace(line)
			}
			continue
		}
		b := readmeBlock{line: i + 1}
		if m := readmeMarker.FindStringSubmatch(lastText); m != nil {
			b.marker, b.reason = m[1], m[2]
		} else if strings.Contains(lastText, "readme-test") {
			return nil, fmt.Errorf("line %d: malformed marker %q", i, lastText)
		}
		var body []string
		if fenced {
			b.line++
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				body = append(body, lines[i])
			}
		} else {
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				body = append(body, strings.TrimPrefix(lines[i], "    "))
			}
			i--
		}
		b.text = strings.TrimRight(strings.Join(body, "\n"), "\n ")
		blocks = append(blocks, b)
		lastText = ""
	}
	return blocks, nil
}

// commands splits a block into shell commands (continuation lines
// joined), without blank lines.
func commands(block string) []string {
	var out []string
	var current strings.Builder
	for _, line := range strings.Split(block, "\n") {
		if strings.TrimSpace(line) == "" && current.Len() == 0 {
			continue
		}
		current.WriteString(line)
		if strings.HasSuffix(line, `\`) {
			current.WriteString("\n")
			continue
		}
		out = append(out, current.String())
		current.Reset()
	}
	if current.Len() > 0 {
		out = append(out, current.String())
	}
	return out
}

// backgroundPorts are where a program a README starts in the background
// listens: the next command waits for it.
var backgroundPorts = map[string][]string{
	"bin/strata-server":  {"127.0.0.1:8090"},
	"bin/strata-connect": {"127.0.0.1:8081"},
}

// readmePorts are the default ports the README programs use.
var readmePorts = []string{"127.0.0.1:8090", "127.0.0.1:3000", "127.0.0.1:8092", "127.0.0.1:8080", "127.0.0.1:8081"}

// externalTools are the programs the READMEs' blocks use besides ours
// (bin/...) and bash's builtins; a block that uses another must add it.
var externalTools = []string{"curl", "jq", "seq", "grep", "make", "go", "unzip", "head", "sleep", "tac"}

// shellWord is a command word (the program of a command).
var shellWord = regexp.MustCompile(`^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*([A-Za-z0-9_./-]+)`)

// script turns blocks into one bash script: each command echoed, then
// run; background programs waited for; the server of README.md started
// with the Makefile's run recipe (when runRecipe is not empty), stopped
// around server-stopped blocks; every background job stopped at exit.
func script(t *testing.T, name string, blocks []readmeBlock, runRecipe string) (string, map[string]bool) {
	t.Helper()
	var b strings.Builder
	tools := map[string]bool{"bash": true, "tac": true, "seq": true}
	b.WriteString(`set -euo pipefail
__wait_port() { # host:port: wait until it accepts connections (60 s at most)
  local host=${1%:*} port=${1##*:} i
  for i in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "readme-test: nothing listens on $1 after 60 s" >&2; return 1
}
__stop_jobs() { # the last started first, as a user stops them
  local pids pid
  pids=$(jobs -p | tac)
  for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
}
trap __stop_jobs EXIT
# An HTTP error answer is a failure even where the README's curl has no -f.
curl() { command curl --fail-with-body "$@"; }
`)
	startServer := func() {
		fmt.Fprintf(&b, "echo '+ (make run, in the background) %s' >&2\n%s &\n__server=$!\n", runRecipe, runRecipe)
		b.WriteString("__wait_port 127.0.0.1:8090\n")
		if strings.Contains(runRecipe, "STRATA_HTTP_ENABLED=true") {
			b.WriteString("__wait_port 127.0.0.1:3000\n")
		}
	}
	if runRecipe != "" {
		startServer()
	}
	for _, blk := range blocks {
		switch blk.marker {
		case "skip":
			t.Logf("%s:%d: not run (%s)", name, blk.line, blk.reason)
			continue
		case "server-stopped":
			if runRecipe == "" {
				t.Fatalf("%s:%d: server-stopped marker, but this README has no make run server", name, blk.line)
			}
			b.WriteString("echo '+ (stopping the server)' >&2\nkill -TERM $__server; wait $__server || true\n")
		}
		t.Logf("%s:%d: runs", name, blk.line)
		fmt.Fprintf(&b, "echo '# %s:%d' >&2\n", name, blk.line)
		for _, cmd := range commands(blk.text) {
			for _, tool := range externalTools {
				if regexp.MustCompile(`(^|[|$(]\s*)` + tool + `\b`).MatchString(cmd) {
					tools[tool] = true
				}
			}
			fmt.Fprintf(&b, "printf '+ %%s\\n' %s >&2\n%s\n", shellQuote(cmd), cmd)
			if background := strings.HasSuffix(strings.TrimSpace(cmd), "&"); background {
				m := shellWord.FindStringSubmatch(strings.TrimSpace(cmd))
				ports, ok := backgroundPorts[m[1]]
				if !ok {
					t.Fatalf("%s:%d: %q runs in the background: say in backgroundPorts what it listens on", name, blk.line, cmd)
				}
				for _, p := range ports {
					fmt.Fprintf(&b, "__wait_port %s\n", p)
				}
			}
		}
		if blk.marker == "server-stopped" {
			startServer()
		}
	}
	b.WriteString("echo 'readme-test: every block ran' >&2\n")
	return b.String(), tools
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// makeRunRecipe is the Makefile's run recipe, with $(BIN) expanded.
func makeRunRecipe(t *testing.T, makefile string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(makefile))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "run:") && sc.Scan() && strings.HasPrefix(sc.Text(), "\t") {
			return strings.ReplaceAll(strings.TrimSpace(sc.Text()), "$(BIN)", "bin")
		}
	}
	t.Fatal("the Makefile has no run recipe")
	return ""
}

// namespaceRunner returns the command prefix that runs a script in a
// network namespace of its own with a loopback, or nil with the reason
// when none can be made.
func namespaceRunner() ([]string, string) {
	if _, err := exec.LookPath("unshare"); err != nil {
		return nil, "unshare is not installed"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, "ip (iproute2) is not installed"
	}
	probe := exec.Command("unshare", "-rn", "sh", "-c", "ip link set lo up")
	if out, err := probe.CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("unshare -rn: %v %s", err, strings.TrimSpace(string(out)))
	}
	return []string{"unshare", "-rn", "bash", "-c", `ip link set lo up && exec bash "$0"`}, ""
}

// busyPorts lists the README ports something listens on.
func busyPorts() []string {
	var busy []string
	for _, p := range readmePorts {
		if conn, err := net.DialTimeout("tcp", p, 200*time.Millisecond); err == nil {
			_ = conn.Close()
			busy = append(busy, p)
		}
	}
	return busy
}

// readmeTimeout bounds one README's script.
const readmeTimeout = 5 * time.Minute

func TestREADMEBlocksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README walkthroughs take a while")
	}
	runner, why := namespaceRunner()
	if runner == nil {
		if busy := busyPorts(); len(busy) > 0 {
			t.Skipf("cannot run the README walkthroughs: no network namespace (%s) and %v are in use", why, busy)
		}
		t.Logf("no network namespace (%s): running on the host's loopback, whose README ports are free", why)
	}
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	recipe := makeRunRecipe(t, string(makefile))
	goCache := goEnv(t, "GOCACHE")
	goModCache := goEnv(t, "GOMODCACHE")
	for _, readme := range []struct {
		path      string
		runRecipe string // README.md runs against make run's server
	}{{"README.md", recipe}, {"connectors/README.md", ""}} {
		t.Run(readme.path, func(t *testing.T) {
			data, err := os.ReadFile(readme.path)
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := readmeBlocks(string(data))
			if err != nil {
				t.Fatalf("%s: %v", readme.path, err)
			}
			text, tools := script(t, readme.path, blocks, readme.runRecipe)
			for tool := range tools {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("%s needs %s, which is not installed (.ci/run installs curl and jq)", readme.path, tool)
				}
			}
			cleanSrcDir(t)
			t.Cleanup(func() { cleanSrcDir(t) })
			scriptPath := filepath.Join(t.TempDir(), "readme.sh")
			if err := os.WriteFile(scriptPath, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{}, runner...), scriptPath)
			if runner == nil {
				args = []string{"bash", scriptPath}
			}
			ctx, cancel := context.WithTimeout(context.Background(), readmeTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Dir = srcDir
			home := t.TempDir()
			cmd.Env = append(cleanEnviron(), "HOME="+home, "GOCACHE="+goCache, "GOMODCACHE="+goModCache, "GOPROXY=off")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 10 * time.Second
			started := time.Now()
			out, err := cmd.CombinedOutput()
			elapsed := time.Since(started)
			shown := tail(string(out), 12)
			if os.Getenv("STRATA_TEST_README_VERBOSE") != "" {
				shown = string(out)
			}
			t.Logf("%s: %d blocks in %v; the output ends:\n%s", readme.path, len(blocks), elapsed.Round(time.Millisecond), shown)
			if err != nil || !strings.Contains(string(out), "readme-test: every block ran") {
				failed := lastCommand(string(out))
				t.Fatalf("%s: %v (after %v); the last command run was:\n  %s\noutput (last 80 lines):\n%s", readme.path, err, elapsed.Round(time.Millisecond),
					failed, tail(string(out), 80))
			}
		})
	}
}

// lastCommand is the last "+ command" line of a script's output.
func lastCommand(out string) string {
	last := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "+ ") {
			last = line[2:]
		}
	}
	return last
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}
