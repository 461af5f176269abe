package sim

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// determinismSeeds are run twice, and again in a subprocess with a
// different GOMAXPROCS; every run of a seed must give the same trace hash.
// Seeds from determinismBrokerBase on run seed-determinismBrokerBase with
// the broker workload.
var determinismSeeds = []uint64{1, 2, 3, 17, 99, determinismBrokerBase + 1, determinismBrokerBase + 17}

const determinismBrokerBase = 1 << 32

const determinismHelperEnv = "STRATA_TEST_SIM_DETERMINISM_HELPER"

func determinismRun(seed uint64) *Result {
	p := DrawParams(seed % determinismBrokerBase)
	if seed >= determinismBrokerBase {
		p.UseBroker()
	} else {
		p.Workload = WorkloadKV
	}
	p.SafetyTicks = 2000
	return Run(Options{Params: p})
}

func TestDeterminismSameSeedSameHash(t *testing.T) {
	for _, seed := range determinismSeeds {
		a, b := determinismRun(seed), determinismRun(seed)
		if a.TraceHash != b.TraceHash || a.Ticks != b.Ticks || a.Outcome.Kind != b.Outcome.Kind {
			t.Fatalf("seed %d: runs differ: %016x/%d/%s vs %016x/%d/%s", seed, a.TraceHash, a.Ticks, a.Outcome.Kind, b.TraceHash, b.Ticks, b.Outcome.Kind)
		}
		if a.Network.Delivered == 0 {
			t.Fatalf("seed %d delivered nothing: the hash covers nothing", seed)
		}
	}
	if determinismRun(1).TraceHash == determinismRun(2).TraceHash {
		t.Fatal("different seeds gave the same trace hash")
	}
}

func TestDeterminismAcrossGOMAXPROCS(t *testing.T) {
	if os.Getenv(determinismHelperEnv) != "" {
		// The subprocess: print each seed's hash.
		for _, seed := range determinismSeeds {
			fmt.Printf("hash %d %016x\n", seed, determinismRun(seed).TraceHash)
		}
		return
	}
	want := map[uint64]string{}
	old := runtime.GOMAXPROCS(1)
	for _, seed := range determinismSeeds {
		want[seed] = fmt.Sprintf("%016x", determinismRun(seed).TraceHash)
	}
	runtime.GOMAXPROCS(old)
	procs := runtime.NumCPU() + 3
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeterminismAcrossGOMAXPROCS$", "-test.count=1")
	cmd.Env = append(os.Environ(), determinismHelperEnv+"=1", "GOMAXPROCS="+strconv.Itoa(procs))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("subprocess: %v\n%s", err, out)
	}
	got := 0
	for _, line := range strings.Split(string(out), "\n") {
		var seed uint64
		var hash string
		if _, err := fmt.Sscanf(line, "hash %d %s", &seed, &hash); err != nil {
			continue
		}
		got++
		if want[seed] != hash {
			t.Errorf("seed %d: hash %s with GOMAXPROCS=1, %s with GOMAXPROCS=%d", seed, want[seed], hash, procs)
		}
	}
	if got != len(determinismSeeds) {
		t.Fatalf("subprocess printed %d hashes, want %d:\n%s", got, len(determinismSeeds), out)
	}
}

// TestFailureScenarioReplaysTheRun checks that the scenario file a failed
// swarm run writes replays that run exactly: same outcome, same trace hash.
func TestFailureScenarioReplaysTheRun(t *testing.T) {
	for _, seed := range []uint64{3, 17} {
		p := DrawParams(seed)
		p.SafetyTicks = 1500
		res := Run(Options{Params: p})
		sc, err := ParseScenario(FailureScenario(res, nil))
		if err != nil {
			t.Fatal(err)
		}
		replay, err := RunScenario(sc, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if replay.TraceHash != res.TraceHash || replay.Outcome.Kind != res.Outcome.Kind {
			t.Fatalf("seed %d: run %016x %s, replay %016x %s", seed, res.TraceHash, res.Outcome.Kind, replay.TraceHash, replay.Outcome.Kind)
		}
	}
}
