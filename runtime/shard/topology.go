package shard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// SysfsRootDefault is where sysfs is mounted on Linux.
const SysfsRootDefault = "/sys"

// sysfsFileMax bounds how much of one sysfs attribute is read.
const sysfsFileMax = cpuListTextMax

// ErrTopology is wrapped by every error reading the CPU topology.
var ErrTopology = errors.New("shard: cannot read CPU topology")

// Node is one NUMA node and its CPUs, ascending.
type Node struct {
	ID   int
	CPUs []int
}

// CPUInfo is what sysfs says about one CPU.
type CPUInfo struct {
	// Node is the CPU's NUMA node.
	Node int
	// CoreID and PackageID identify the physical core (core_id is unique
	// only within a package); -1 when sysfs does not say.
	CoreID, PackageID int
	// Siblings are the hardware threads sharing the CPU's physical core,
	// itself included, ascending.
	Siblings []int
}

// Topology is the machine's NUMA nodes and hyperthread siblings.
type Topology struct {
	// Nodes are ascending by ID.
	Nodes []Node
	// CPUs describes every CPU that appears in a node.
	CPUs map[int]CPUInfo
}

// ReadTopology reads the topology below the sysfs root (SysfsRootDefault
// in production; tests pass a fake tree): the CPUs of each
// devices/system/node/node*/cpulist, and for each CPU
// devices/system/cpu/cpuN/topology/{thread_siblings_list,core_id,
// physical_package_id}. A kernel without NUMA support has no node
// directories; the CPUs of devices/system/cpu/online then form node 0.
// A CPU without topology files is its own single-thread core.
func ReadTopology(sysfsRoot string) (*Topology, error) {
	nodeDirectories, err := filepath.Glob(filepath.Join(sysfsRoot, "devices/system/node/node[0-9]*"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTopology, err)
	}
	topology := &Topology{CPUs: map[int]CPUInfo{}}
	for _, directory := range nodeDirectories {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(directory), "node"))
		if err != nil || id > CPUNumberMax {
			continue // not a node directory (e.g. "node0abc")
		}
		cpus, err := readCPUListFile(filepath.Join(directory, "cpulist"))
		if err != nil {
			return nil, err
		}
		topology.Nodes = append(topology.Nodes, Node{ID: id, CPUs: cpus})
	}
	if len(topology.Nodes) == 0 {
		cpus, err := readCPUListFile(filepath.Join(sysfsRoot, "devices/system/cpu/online"))
		if err != nil {
			return nil, err
		}
		topology.Nodes = []Node{{ID: 0, CPUs: cpus}}
	}
	sort.Slice(topology.Nodes, func(i, j int) bool { return topology.Nodes[i].ID < topology.Nodes[j].ID })
	for _, node := range topology.Nodes {
		for _, cpu := range node.CPUs {
			if _, duplicate := topology.CPUs[cpu]; duplicate {
				return nil, fmt.Errorf("%w: CPU %d is listed in two NUMA nodes", ErrTopology, cpu)
			}
			info, err := readCPUInfo(sysfsRoot, cpu)
			if err != nil {
				return nil, err
			}
			info.Node = node.ID
			topology.CPUs[cpu] = info
		}
	}
	return topology, nil
}

// readCPUInfo reads one CPU's topology directory.
func readCPUInfo(sysfsRoot string, cpu int) (CPUInfo, error) {
	directory := filepath.Join(sysfsRoot, "devices/system/cpu", "cpu"+strconv.Itoa(cpu), "topology")
	info := CPUInfo{CoreID: -1, PackageID: -1, Siblings: []int{cpu}}
	siblings, err := readCPUListFile(filepath.Join(directory, "thread_siblings_list"))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return CPUInfo{}, err
	case len(siblings) > 0:
		info.Siblings = siblings
	}
	for _, field := range []struct {
		name   string
		target *int
	}{{"core_id", &info.CoreID}, {"physical_package_id", &info.PackageID}} {
		text, err := readSysfsFile(filepath.Join(directory, field.name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return CPUInfo{}, err
		}
		value, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return CPUInfo{}, fmt.Errorf("%w: cpu%d %s holds %q, not a number", ErrTopology, cpu, field.name, strings.TrimSpace(text))
		}
		*field.target = value
	}
	return info, nil
}

// readCPUListFile reads and parses a sysfs CPU list attribute.
func readCPUListFile(path string) ([]int, error) {
	text, err := readSysfsFile(path)
	if err != nil {
		return nil, err
	}
	cpus, err := ParseCPUList(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrTopology, path, err)
	}
	return cpus, nil
}

// readSysfsFile reads a small sysfs attribute; a missing file keeps
// os.ErrNotExist in its chain.
func readSysfsFile(path string) (string, error) {
	// sysfs attributes are at most a page; os.ReadFile copes with the
	// page-sized st_size they report.
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrTopology, err)
	}
	if len(data) > sysfsFileMax {
		return "", fmt.Errorf("%w: %s is larger than %d bytes", ErrTopology, path, sysfsFileMax)
	}
	return string(data), nil
}

// NodeOf returns the NUMA node of a CPU, or -1 when unknown.
func (t *Topology) NodeOf(cpu int) int {
	if t == nil {
		return -1
	}
	if info, ok := t.CPUs[cpu]; ok {
		return info.Node
	}
	return -1
}
