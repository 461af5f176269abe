package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stratabroker/strata/sim"
)

func TestUsageErrors(t *testing.T) {
	// No arguments prints the help, as every binary of the family does.
	var help, helpErr bytes.Buffer
	if code := mainCode(nil, &help, &helpErr); code != 0 || !strings.Contains(help.String(), "strata-sim swarm") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q; want the help and exit 0", code, help.String(), helpErr.String())
	}
	for _, args := range [][]string{
		{"frobnicate"},
		{"run", "--bug", "no-such-bug"},
		{"swarm", "--seeds", "0"},
		{"replay"},
		{"replay", "/nonexistent/scenario.txt"},
	} {
		var out, errOut bytes.Buffer
		if code := mainCode(args, &out, &errOut); code != 1 {
			t.Errorf("%v: exit %d, want 1 (stderr %q)", args, code, errOut.String())
		}
	}
}

func TestExitCodesAreDistinct(t *testing.T) {
	want := map[sim.OutcomeKind]int{sim.OutcomeOK: 0, sim.OutcomeSafety: 2, sim.OutcomeLiveness: 3, sim.OutcomeCrash: 4}
	for kind, code := range want {
		if got := kind.ExitCode(); got != code {
			t.Errorf("%s exits %d, want %d", kind, got, code)
		}
	}
}

func TestRunPrintsParametersOutcomeAndHash(t *testing.T) {
	t.Chdir(t.TempDir())
	var a, b, errOut bytes.Buffer
	codeA := mainCode([]string{"run", "--seed", "11", "--ticks", "1500"}, &a, &errOut)
	codeB := mainCode([]string{"run", "--seed", "11", "--ticks", "1500"}, &b, &errOut)
	for _, want := range []string{"seed=11", "replicas=", "outcome: ", "network: ", "storage: ", "processes: ", "trace_hash="} {
		if !strings.Contains(a.String(), want) {
			t.Fatalf("run output lacks %q:\n%s", want, a.String())
		}
	}
	hash := regexp.MustCompile(`trace_hash=[0-9a-f]{16}`)
	if codeA != codeB || hash.FindString(a.String()) != hash.FindString(b.String()) {
		t.Fatalf("the same seed printed different results: exit %d/%d, %s vs %s", codeA, codeB, hash.FindString(a.String()), hash.FindString(b.String()))
	}
}

func TestSwarmSummaryLine(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errOut bytes.Buffer
	code := mainCode([]string{"swarm", "--seeds", "6", "--from", "40", "--parallel", "2", "--ticks", "1500"}, &out, &errOut)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	m := regexp.MustCompile(`^(\d+) passed, (\d+) failed$`).FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line %q is not the summary:\n%s", last, out.String())
	}
	if (m[2] == "0") != (code == 0) {
		t.Fatalf("summary %q but exit %d", last, code)
	}
	for _, want := range []string{"coverage over 6 seeds:", "view changes (StartView sent)", "crash after PrepareOk", "corrupted packets (rejected)", "invariant checks "} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("swarm output lacks %q:\n%s", want, out.String())
		}
	}
	if m[2] != "0" {
		files, _ := filepath.Glob(filepath.Join("sim-failures", "*"))
		if len(files) == 0 {
			t.Fatal("failures reported but no files written to sim-failures/")
		}
	}
}

func TestReplayScenario(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.txt")
	text := "replicas 3\nclients 2\nseed 5\ntick 1500\nexpect committed>=10\nliveness\nexpect outcome=ok\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := mainCode([]string{"replay", path}, &out, &errOut); code != 0 {
		t.Fatalf("replay exit %d: %s\n%s", code, errOut.String(), out.String())
	}
	if !strings.Contains(out.String(), "scenario expectations held") {
		t.Fatalf("replay output:\n%s", out.String())
	}
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("replicas 3\ntick 100\nexpect committed>=1000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := mainCode([]string{"replay", bad}, &out, &errOut); code != 1 {
		t.Fatalf("a failed expectation exited %d, want 1", code)
	}
}

func TestSetOverridesDrawnParameters(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errOut bytes.Buffer
	args := []string{"run", "--seed", "3", "--ticks", "300", "--set", "replicas=3", "--set", "durability=persisted",
		"--set", "crash_ppm=4000", "--set", "io_latency_ticks_max=20", "--set", "partition_mode=1"}
	mainCode(args, &out, &errOut)
	for _, want := range []string{"replicas=3 ", "durability=persisted", "crash=4000ppm/tick", "io_latency_max=20", "mode=isolate-one"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("run with --set prints no %q:\n%s", want, out.String())
		}
	}
	for _, bad := range [][]string{
		{"swarm", "--seeds", "1", "--set", "no_such_parameter=1"},
		{"swarm", "--seeds", "1", "--set", "replicas"},
		{"run", "--seed", "1", "--set", "durability=sometimes"},
	} {
		out.Reset()
		errOut.Reset()
		if code := mainCode(bad, &out, &errOut); code != 1 {
			t.Errorf("%v: exit %d, want 1 (stderr %q)", bad, code, errOut.String())
		}
	}
}

// TestSetRecomputesTheLivenessWindow: the liveness window is derived from
// the journal's length and the disk's latency, and --set of either
// recomputes it. It stayed the drawn one: seed 177 draws 796 slots at
// 1-tick IO (8,800 ticks), and the narrowed setting's 20-tick IO left a
// restarted replica 8,800 ticks to read up to 16,000 ticks of journal.
func TestSetRecomputesTheLivenessWindow(t *testing.T) {
	t.Chdir(t.TempDir())
	field := regexp.MustCompile(`(journal_slots|io_latency_max|liveness_ticks_max)=(\d+)`)
	for _, sets := range [][]string{
		{"--set", "io_latency_ticks_max=20"},
		{"--set", "journal_slots=1024", "--set", "io_latency_ticks_max=20"},
		{"--set", "io_latency_ticks_max=20", "--set", "journal_slots=1024"},
	} {
		var out, errOut bytes.Buffer
		mainCode(append([]string{"run", "--seed", "177", "--ticks", "300"}, sets...), &out, &errOut)
		got := map[string]int{}
		for _, m := range field.FindAllStringSubmatch(out.String(), -1) {
			got[m[1]], _ = strconv.Atoi(m[2])
		}
		if len(got) != 3 {
			t.Fatalf("%v: run printed no journal_slots, io_latency_max or liveness_ticks_max:\n%s", sets, out.String())
		}
		if need := (got["journal_slots"] + 4) * got["io_latency_max"]; got["liveness_ticks_max"] < need {
			t.Errorf("%v: a liveness window of %d ticks, but reading %d journal slots back at %d ticks takes up to %d", sets,
				got["liveness_ticks_max"], got["journal_slots"], got["io_latency_max"], need)
		}
	}
}
