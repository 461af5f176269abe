package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseScenario(t *testing.T) {
	sc, err := ParseScenario(`
# a comment
replicas 3
clients 2
durability persisted
seed 42
set loss_ppm 1000
tick 500            # trailing comment
partition 0|1,2
partition-oneway 1|2
clog 0>1 200
crash 1 torn
power-loss all
restart all
corrupt 2 wal-prepares 3
heal
faults off
liveness
expect committed>=100
expect commit[2]==7
expect outcome=ok
expect violation=commits
`)
	if err != nil {
		t.Fatal(err)
	}
	if sc.ReplicaCount != 3 || sc.ClientCount != 2 || sc.Durability != DurabilityPersisted || sc.Seed != 42 || len(sc.Sets) != 1 {
		t.Fatalf("header parsed wrong: %+v", sc)
	}
	if len(sc.Steps) != 15 {
		t.Fatalf("%d steps", len(sc.Steps))
	}
	p := sc.Steps[1]
	if p.Command != "partition" || len(p.SideA) != 1 || len(p.SideB) != 2 || p.SideB[1] != 2 {
		t.Fatalf("partition parsed wrong: %+v", p)
	}
	if c := sc.Steps[4]; c.Command != "crash" || c.Replica != 1 || !c.Torn {
		t.Fatalf("crash parsed wrong: %+v", c)
	}
	if pl := sc.Steps[5]; pl.Replica != -1 {
		t.Fatalf("power-loss all parsed wrong: %+v", pl)
	}
	e := sc.Steps[11].Expect
	if e.Subject != "committed" || e.Op != ">=" || e.Value != 100 || !e.Holds(100) || e.Holds(99) {
		t.Fatalf("expectation parsed wrong: %+v", e)
	}
	if e := sc.Steps[12].Expect; e.Subject != "commit" || e.Index != 2 || e.Op != "==" || e.Value != 7 {
		t.Fatalf("indexed expectation parsed wrong: %+v", e)
	}
	if p := sc.ScenarioParams(); p.LossPPM != 1000 || p.ReplicaCount != 3 {
		t.Fatalf("params: %+v", p)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	bad := []string{
		"",
		"replicas 3\n",
		"tick 0\n",
		"replicas 7\ntick 1\n",
		"tick 5\nreplicas 3\n",
		"partition 0|0\n",
		"partition 0,1\n",
		"replicas 3\npartition 0|5\n",
		"crash\n",
		"crash 1 sideways\n",
		"restart 1 torn\n",
		"clog 1>1 5\n",
		"corrupt 1 superblock 0\n",
		"expect committed\n",
		"expect outcome>=3\n",
		"expect bogus>=3\n",
		"set no_such_param 4\n",
		"frobnicate\n",
		"durability sometimes\ntick 1\n",
	}
	for _, text := range bad {
		if _, err := ParseScenario(text); err == nil {
			t.Errorf("ParseScenario(%q) accepted", text)
		}
	}
}

// FuzzParseScenario checks that the parser never panics and that every
// accepted scenario has a script with valid replica indexes.
func FuzzParseScenario(f *testing.F) {
	f.Add("replicas 3\ntick 100\ncrash 1\nrestart 1\nexpect committed>=1\n")
	f.Add("swarm 7\nbug commit-without-quorum\nrun\nliveness\nexpect outcome=safety\n")
	f.Add("partition 0|1,2\npartition-oneway 2|0\nclog 0>2 9\ncorrupt 1 wal-headers 0\n")
	f.Add("expect commit[9]>=1\n")
	f.Fuzz(func(t *testing.T, text string) {
		sc, err := ParseScenario(text)
		if err != nil {
			return
		}
		if len(sc.Steps) == 0 {
			t.Fatal("accepted a scenario without a script")
		}
		for _, st := range sc.Steps {
			if st.Replica >= sc.ReplicaCount {
				t.Fatalf("step %+v names replica beyond %d", st, sc.ReplicaCount)
			}
			for _, r := range append(append([]int(nil), st.SideA...), st.SideB...) {
				if r < 0 || r >= sc.ReplicaCount {
					t.Fatalf("partition side names replica %d", r)
				}
			}
		}
	})
}

// TestScenarios replays every scenarios/*.txt file. A scenario marked
// open-bug reproduces a known, unfixed bug and is reported as skipped.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "scenarios", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios found")
	}
	for _, file := range files {
		file := file
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := ParseScenario(string(text))
			if err != nil {
				t.Fatal(err)
			}
			res, err := RunScenario(sc, nil)
			if err != nil {
				if sc.OpenBug != "" {
					t.Skipf("open bug (%s): %v", sc.OpenBug, err)
				}
				var b strings.Builder
				if res != nil {
					res.Print(&b)
				}
				t.Fatalf("%v\n%s", err, b.String())
			}
			if sc.OpenBug != "" {
				t.Logf("scenario marked open-bug %q now passes: the open-bug line can go", sc.OpenBug)
			}
		})
	}
}

// TestFailureScenarioSpellsOutEveryParameter checks that a failure file
// reproduces the drawn parameters exactly without consulting DrawParams.
func TestFailureScenarioSpellsOutEveryParameter(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		want := DrawParams(seed)
		want.normalize()
		sc, err := ParseScenario(FailureScenario(&Result{Params: want}, nil))
		if err != nil {
			t.Fatal(err)
		}
		if sc.Swarm {
			t.Fatal("failure file leans on DrawParams")
		}
		got := sc.ScenarioParams()
		got.normalize()
		got.StorageFaultyMax, want.StorageFaultyMax = 0, 0
		got.overridden = 0 // the file sets the derived parameters explicitly
		if len(got.StorageFaultyReplica) == 0 {
			got.StorageFaultyReplica = nil
		}
		if len(want.StorageFaultyReplica) == 0 {
			want.StorageFaultyReplica = nil
		}
		if !sameParams(&got, &want) {
			t.Fatalf("seed %d:\n got %+v\nwant %+v", seed, got, want)
		}
	}
}
