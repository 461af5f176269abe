package strata_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stratabroker/strata/connectors"
)

// TestGoModIsTidy: go.mod lists the direct dependencies as direct (they
// were all "// indirect") and go.sum holds what the build needs: `go mod
// tidy -diff` prints nothing. It runs offline (GOPROXY=off) and skips
// when the module cache lacks what tidy needs to decide.
func TestGoModIsTidy(t *testing.T) {
	cmd := exec.Command("go", "mod", "tidy", "-diff")
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil && stdout.Len() == 0 {
		t.Skipf("go mod tidy -diff could not run offline (module cache incomplete?): %v: %s", err, stderr.String())
	}
	if err != nil || stdout.Len() != 0 {
		t.Fatalf("go.mod/go.sum are not tidy (run go mod tidy):\n%s%s", stdout.String(), stderr.String())
	}
}

// TestExampleStateIsIgnored: running the connectors example writes its
// source state and archive under local_state/, which git ignores.
func TestExampleStateIsIgnored(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if err := exec.Command("git", "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not a git work tree")
	}
	cfg, err := connectors.LoadRuntimeConfig("connectors/examples/config/connect.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{cfg.State.Path + "/source_random.state", "local_state/events.jsonl", "local_data/metadata/journal.wal"}
	out, err := exec.Command("git", append([]string{"check-ignore", "--"}, paths...)...).Output()
	if err != nil {
		t.Fatalf("git check-ignore: %v (%s)", err, out)
	}
	for _, p := range paths {
		if !strings.Contains(string(out), p) {
			t.Errorf("%s is not ignored by git", p)
		}
	}
}
