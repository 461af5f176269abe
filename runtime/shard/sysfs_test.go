package shard

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fakeCPU describes one CPU of a fake sysfs tree.
type fakeCPU struct {
	siblings string
	coreID   int
}

// writeFakeSysfs builds a sysfs tree under t.TempDir(): nodes maps a node
// number to its cpulist, cpus a CPU number to its topology.
func writeFakeSysfs(t *testing.T, nodes map[int]string, cpus map[int]fakeCPU) string {
	t.Helper()
	root := t.TempDir()
	for node, cpulist := range nodes {
		writeFile(t, filepath.Join(root, "devices/system/node", "node"+strconv.Itoa(node), "cpulist"), cpulist+"\n")
	}
	for cpu, info := range cpus {
		directory := filepath.Join(root, "devices/system/cpu", "cpu"+strconv.Itoa(cpu), "topology")
		writeFile(t, filepath.Join(directory, "thread_siblings_list"), info.siblings+"\n")
		writeFile(t, filepath.Join(directory, "core_id"), strconv.Itoa(info.coreID)+"\n")
		writeFile(t, filepath.Join(directory, "physical_package_id"), "0\n")
	}
	return root
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// twoNodeSysfs is a two-socket machine with hyperthreads numbered the way
// Intel servers number them: node 0 has CPUs 0-3 with core siblings (0,2)
// and (1,3); node 1 has CPUs 4-7 with siblings (4,6) and (5,7).
func twoNodeSysfs(t *testing.T) string {
	return writeFakeSysfs(t,
		map[int]string{0: "0-3", 1: "4-7"},
		map[int]fakeCPU{
			0: {"0,2", 0}, 2: {"0,2", 0}, 1: {"1,3", 1}, 3: {"1,3", 1},
			4: {"4,6", 0}, 6: {"4,6", 0}, 5: {"5,7", 1}, 7: {"5,7", 1},
		})
}
