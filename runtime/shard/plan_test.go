package shard

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func mustParse(t *testing.T, text string) Allocation {
	t.Helper()
	allocation, err := ParseAllocation(text)
	if err != nil {
		t.Fatal(err)
	}
	return allocation
}

func TestBuildPlanSimpleModes(t *testing.T) {
	allowed := []int{0, 1, 2, 3, 8, 9}
	cases := []struct {
		text string
		pin  bool
		want []int
	}{
		{"all", true, allowed},
		{"1", true, []int{0}},
		{"4", true, []int{0, 1, 2, 3}},
		{"6", true, allowed},
		{"8", false, []int{0, 1, 2, 3, 8, 9, 0, 1}},
		{"1..4", true, []int{1, 2, 3}},
		{"8..10", true, []int{8, 9}},
	}
	for _, c := range cases {
		plan, err := BuildPlan(mustParse(t, c.text), allowed, nil, c.pin)
		if err != nil || !slices.Equal(plan.CPUs, c.want) || plan.Shards() != len(c.want) || plan.Pin != c.pin {
			t.Errorf("%s (pin %v): %v, %v; want %v", c.text, c.pin, plan.CPUs, err, c.want)
			continue
		}
		for _, node := range plan.Nodes {
			if node != -1 {
				t.Errorf("%s: node %d without a topology", c.text, node)
			}
		}
	}
}

func TestBuildPlanRefusesCPUsOutsideTheAllowedSet(t *testing.T) {
	allowed := []int{0, 1, 2, 3}
	for _, c := range []struct{ text, mention string }{
		{"5", "only 4 CPUs"},
		{"2..6", "CPUs 4-5 outside"},
		{"10..12", "CPUs 10-11 outside"},
	} {
		_, err := BuildPlan(mustParse(t, c.text), allowed, nil, true)
		if !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %v, want ErrPlan mentioning %q", c.text, err, c.mention)
		}
	}
	if _, err := BuildPlan(mustParse(t, "all"), nil, nil, true); !errors.Is(err, ErrPlan) {
		t.Errorf("empty allowed set: %v", err)
	}
	if _, err := BuildPlan(Allocation{}, allowed, nil, true); !errors.Is(err, ErrPlan) {
		t.Errorf("zero allocation: %v", err)
	}
}

func TestBuildPlanNUMA(t *testing.T) {
	topology, err := ReadTopology(twoNodeSysfs(t))
	if err != nil {
		t.Fatal(err)
	}
	every := []int{0, 1, 2, 3, 4, 5, 6, 7}
	cases := []struct {
		text      string
		allowed   []int
		wantCPUs  []int
		wantNodes []int
	}{
		// One thread per physical core on both nodes.
		{"numa:auto", every, []int{0, 1, 4, 5}, []int{0, 0, 1, 1}},
		// When a core's first thread is not allowed, its sibling stands in.
		{"numa:auto", []int{1, 2, 3, 6}, []int{1, 2, 6}, []int{0, 0, 1}},
		// Nodes without allowed CPUs are skipped by auto.
		{"numa:auto", []int{4, 5, 6, 7}, []int{4, 5}, []int{1, 1}},
		{"numa:nodes=1;cores=2;no_ht=true", every, []int{4, 5}, []int{1, 1}},
		{"numa:nodes=0,1;cores=1;no_ht=true", every, []int{0, 4}, []int{0, 1}},
		{"numa:nodes=0;cores=3;no_ht=false", every, []int{0, 1, 2}, []int{0, 0, 0}},
		{"numa:nodes=0,1", every, every, []int{0, 0, 0, 0, 1, 1, 1, 1}},
		{"numa:cores=2", every, []int{0, 1, 4, 5}, []int{0, 0, 1, 1}},
	}
	for _, c := range cases {
		plan, err := BuildPlan(mustParse(t, c.text), c.allowed, topology, true)
		if err != nil || !slices.Equal(plan.CPUs, c.wantCPUs) || !slices.Equal(plan.Nodes, c.wantNodes) {
			t.Errorf("%s on %v: CPUs %v nodes %v, %v; want %v %v", c.text, c.allowed, plan.CPUs, plan.Nodes, err, c.wantCPUs, c.wantNodes)
		}
	}
	// Non-NUMA plans learn each CPU's node from a topology when given one.
	plan, err := BuildPlan(mustParse(t, "3..6"), every, topology, true)
	if err != nil || !slices.Equal(plan.Nodes, []int{0, 1, 1}) {
		t.Errorf("range plan nodes %v, %v", plan.Nodes, err)
	}
	if text := plan.String(); !strings.Contains(text, "3 shards (cpu_allocation=3..6, pinned)") || !strings.Contains(text, "shard 2 -> CPU 5 (node 1)") {
		t.Errorf("plan description %q", text)
	}
}

func TestBuildPlanNUMAErrors(t *testing.T) {
	topology, err := ReadTopology(twoNodeSysfs(t))
	if err != nil {
		t.Fatal(err)
	}
	every := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, c := range []struct {
		text    string
		allowed []int
		topo    *Topology
		mention string
	}{
		{"numa:nodes=2", every, topology, "names NUMA node 2, but this machine has nodes 0-1"},
		{"numa:nodes=0;cores=3;no_ht=true", every, topology, "offers 2 usable CPUs (0-1), fewer than cores=3"},
		{"numa:nodes=1", []int{0, 1}, topology, "node 1 has no CPU in the process's allowed set 0-1"},
		{"numa:auto", []int{9}, topology, "no NUMA node has a CPU"},
		{"numa:auto", every, nil, "needs the NUMA topology"},
	} {
		_, err := BuildPlan(mustParse(t, c.text), c.allowed, c.topo, true)
		if !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s on %v: %v; want ErrPlan mentioning %q", c.text, c.allowed, err, c.mention)
		}
	}
}

func TestPlanFromSettingOnThisMachine(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanFromSetting("all", SysfsRootDefault, true)
	if err != nil || !slices.Equal(plan.CPUs, allowed) {
		t.Fatalf("all: %v, %v; allowed %v", plan.CPUs, err, allowed)
	}
	plan, err = PlanFromSetting("1", SysfsRootDefault, true)
	if err != nil || !slices.Equal(plan.CPUs, allowed[:1]) {
		t.Fatalf("1: %v, %v", plan.CPUs, err)
	}
	if _, err := PlanFromSetting("bogus", SysfsRootDefault, true); !errors.Is(err, ErrAllocation) {
		t.Fatalf("bogus: %v", err)
	}
	if _, err := PlanFromSetting("1000..1001", SysfsRootDefault, true); !errors.Is(err, ErrPlan) {
		t.Fatalf("CPU 1000: %v", err)
	}
	// A missing topology only matters to NUMA allocations.
	missing := t.TempDir()
	if _, err := PlanFromSetting("1", missing, true); err != nil {
		t.Fatalf("count without topology: %v", err)
	}
	if _, err := PlanFromSetting("numa:auto", missing, true); !errors.Is(err, ErrPlan) || !errors.Is(err, ErrTopology) {
		t.Fatalf("numa without topology: %v", err)
	}
}
