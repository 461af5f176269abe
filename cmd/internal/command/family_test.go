package command_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/cmd/internal/command"
)

// The binaries that share the shape.
var family = []string{"strata", "strata-server", "strata-bench", "strata-connect", "strata-sim"}

// usageExit is the exit status of a command-line mistake: 2, except for
// strata-sim, whose 2, 3 and 4 report what a run found (a safety or
// liveness violation, a panic) and whose mistakes exit 1.
func usageExit(name string) int {
	if name == "strata-sim" {
		return 1
	}
	return command.ExitUsage
}

const (
	stampCommit = "0123456789ab"
	stampDate   = "2026-01-02T03:04:05Z"
)

// run runs bin with args and returns stdout, stderr and the exit code; a
// binary that does not exit within the deadline (strata-server starting a
// broker for "help") fails the test.
func run(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cmd.Environ(), "STRATA_ADDRESS=127.0.0.1:1", "STRATA_SYSTEM_PATH="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not exit: %s", filepath.Base(bin), strings.Join(args, " "), stderr.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// TestEveryBinaryHasTheSameShape builds the binaries as the Makefile does
// and checks help, version, completion and mistakes on each.
func TestEveryBinaryHasTheSameShape(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	dir := t.TempDir()
	const pkg = "github.com/stratabroker/strata/cmd/internal/buildinfo"
	args := []string{"build", "-ldflags", "-X " + pkg + ".commit=" + stampCommit + " -X " + pkg + ".date=" + stampDate, "-o", dir + "/"}
	for _, name := range family {
		args = append(args, "github.com/stratabroker/strata/cmd/"+name)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, name := range family {
		bin := filepath.Join(dir, name)
		t.Run(name, func(t *testing.T) {
			for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"help", "version"}, {"help", "completion"}} {
				out, errOut, code := run(t, bin, args...)
				if code != 0 || !strings.Contains(out, "Usage:") || errOut != "" {
					t.Errorf("%s %s: exit %d, stdout %.200q, stderr %q; want help and exit 0", name, strings.Join(args, " "), code, out, errOut)
				}
			}
			for _, args := range [][]string{{"--version"}, {"version"}} {
				out, errOut, code := run(t, bin, args...)
				for _, want := range []string{name + " 0.9.0-edge.5\n", "commit:    " + stampCommit + "\n", "built:     " + stampDate + "\n",
					"go:        " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n", "protocol:  0.11.0"} {
					if code != 0 || !strings.Contains(out, want) {
						t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want %q", name, args[0], code, out, errOut, want)
					}
				}
			}
			for shell, head := range map[string]string{"bash": "# bash completion V2 for " + name, "zsh": "#compdef " + name,
				"fish": "# fish completion for " + name} {
				out, errOut, code := run(t, bin, "completion", shell)
				if code != 0 || !strings.HasPrefix(out, head) {
					t.Errorf("%s completion %s: exit %d, %.80q %q", name, shell, code, out, errOut)
				}
			}
			for _, args := range [][]string{{"nosuch"}, {"help", "nosuch"}, {"versoin"}, {"--no-such-flag"}, {"completion", "tcsh"}} {
				out, errOut, code := run(t, bin, args...)
				if code != usageExit(name) || out != "" || errOut == "" {
					t.Errorf("%s %s: exit %d, stdout %.200q, stderr %q; want an error and exit %d", name, strings.Join(args, " "), code, out, errOut, usageExit(name))
				}
			}
			if _, errOut, _ := run(t, bin, "versoin"); !strings.Contains(errOut, `did you mean "version"?`) {
				t.Errorf("%s versoin: %q, want a suggestion", name, errOut)
			}
		})
	}
}

func TestSuggestions(t *testing.T) {
	root := &cobra.Command{Use: "strata"}
	group := &cobra.Command{Use: "stream", Aliases: []string{"s"}}
	for _, sub := range []*cobra.Command{{Use: "list", Aliases: []string{"l", "ls"}}, {Use: "get", Aliases: []string{"g", "info"}},
		{Use: "create", Aliases: []string{"c", "add"}}, {Use: "delete", Aliases: []string{"d", "rm"}}} {
		sub.Run = func(*cobra.Command, []string) {}
		group.AddCommand(sub)
	}
	root.AddCommand(group)
	for typed, want := range map[string]string{"lst": "list", "lsit": "list", "lis": "list", "gte": "get", "inf": "get",
		"crate": "create", "delet": "delete", "x": "", "li": "list", "remove": "", "rmm": "delete"} {
		if got := strings.Join(command.Suggestions(group, typed), ","); got != want {
			t.Errorf("Suggestions(%q) = %q, want %q", typed, got, want)
		}
	}
}

func TestGroupsRejectUnknownCommands(t *testing.T) {
	root := &cobra.Command{Use: "tool"}
	group := &cobra.Command{Use: "stream"}
	group.AddCommand(&cobra.Command{Use: "list", Run: func(*cobra.Command, []string) {}})
	root.AddCommand(group)
	var out, errOut bytes.Buffer
	if code := command.Main(context.Background(), root, []string{"stream", "lst"}, &out, &errOut); code != command.ExitUsage ||
		!strings.Contains(errOut.String(), `tool: unknown command "lst" for "tool stream"; did you mean "list"?`) {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	root = &cobra.Command{Use: "tool"}
	group = &cobra.Command{Use: "stream"}
	group.AddCommand(&cobra.Command{Use: "list", Run: func(*cobra.Command, []string) {}})
	root.AddCommand(group)
	if code := command.Main(context.Background(), root, []string{"stream"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Available Commands:") {
		t.Fatalf("a group alone: exit %d, %q", code, out.String())
	}
}
