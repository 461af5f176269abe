package shard

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestReadTopologyTwoNodes(t *testing.T) {
	topology, err := ReadTopology(twoNodeSysfs(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{4, 5, 6, 7}}}
	if !reflect.DeepEqual(topology.Nodes, want) {
		t.Fatalf("nodes %+v, want %+v", topology.Nodes, want)
	}
	info := topology.CPUs[6]
	if info.Node != 1 || info.CoreID != 0 || info.PackageID != 0 || !slices.Equal(info.Siblings, []int{4, 6}) {
		t.Fatalf("cpu6 = %+v", info)
	}
	if topology.NodeOf(5) != 1 || topology.NodeOf(99) != -1 || (*Topology)(nil).NodeOf(0) != -1 {
		t.Fatalf("NodeOf wrong")
	}
}

func TestReadTopologyWithoutNUMA(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "devices/system/cpu/online"), "0-2\n")
	topology, err := ReadTopology(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(topology.Nodes) != 1 || !slices.Equal(topology.Nodes[0].CPUs, []int{0, 1, 2}) {
		t.Fatalf("nodes %+v", topology.Nodes)
	}
	if info := topology.CPUs[2]; info.CoreID != -1 || !slices.Equal(info.Siblings, []int{2}) {
		t.Fatalf("CPU without topology files: %+v", info)
	}
}

func TestReadTopologyErrors(t *testing.T) {
	if _, err := ReadTopology(t.TempDir()); !errors.Is(err, ErrTopology) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty tree: %v", err)
	}
	bad := writeFakeSysfs(t, map[int]string{0: "0-x"}, nil)
	if _, err := ReadTopology(bad); !errors.Is(err, ErrTopology) || !errors.Is(err, ErrCPUList) {
		t.Errorf("bad cpulist: %v", err)
	}
	overlap := writeFakeSysfs(t, map[int]string{0: "0-1", 1: "1-2"}, nil)
	if _, err := ReadTopology(overlap); !errors.Is(err, ErrTopology) {
		t.Errorf("CPU in two nodes: %v", err)
	}
	badCore := writeFakeSysfs(t, map[int]string{0: "0"}, map[int]fakeCPU{0: {"0", 0}})
	writeFile(t, filepath.Join(badCore, "devices/system/cpu/cpu0/topology/core_id"), "zero\n")
	if _, err := ReadTopology(badCore); !errors.Is(err, ErrTopology) {
		t.Errorf("bad core_id: %v", err)
	}
}

func TestReadTopologyOfThisMachine(t *testing.T) {
	topology, err := ReadTopology(SysfsRootDefault)
	if err != nil {
		t.Skipf("no sysfs here: %v", err)
	}
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	for _, cpu := range allowed {
		info, ok := topology.CPUs[cpu]
		if !ok || !slices.Contains(info.Siblings, cpu) {
			t.Fatalf("allowed CPU %d: topology %+v, present %v", cpu, info, ok)
		}
	}
}
