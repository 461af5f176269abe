package shard

import (
	"errors"
	"fmt"
	"strings"
)

// ErrPlan is wrapped by every error turning an allocation into a plan.
var ErrPlan = errors.New("shard: cannot place shards")

// Plan says how many shards run and on which CPU each one runs.
type Plan struct {
	// Allocation is the setting the plan came from.
	Allocation Allocation
	// CPUs[i] is the CPU shard i runs on (pinned when pinning is on).
	// When pinning is off and more shards than allowed CPUs were asked
	// for, CPUs repeat.
	CPUs []int
	// Nodes[i] is the NUMA node of CPUs[i], -1 when unknown.
	Nodes []int
	// Pin says whether shard threads are pinned to their CPU.
	Pin bool
}

// Shards returns the shard count.
func (p Plan) Shards() int { return len(p.CPUs) }

// String describes the plan for the start-up log, e.g.
// "2 shards (cpu_allocation=2, pinned): shard 0 -> CPU 0 (node 0), shard 1 -> CPU 1 (node 0)".
func (p Plan) String() string {
	var text strings.Builder
	pinning := "pinned"
	if !p.Pin {
		pinning = "not pinned"
	}
	fmt.Fprintf(&text, "%d shards (cpu_allocation=%s, %s):", len(p.CPUs), p.Allocation, pinning)
	for shard, cpu := range p.CPUs {
		if shard > 0 {
			text.WriteByte(',')
		}
		fmt.Fprintf(&text, " shard %d -> CPU %d", shard, cpu)
		if shard < len(p.Nodes) && p.Nodes[shard] >= 0 {
			fmt.Fprintf(&text, " (node %d)", p.Nodes[shard])
		}
	}
	return text.String()
}

// BuildPlan places the shards of an allocation on the allowed CPUs
// (ascending, as AllowedCPUs returns them). topology may be nil except for
// NUMA allocations; when given it fills Plan.Nodes. pin records whether
// threads will be pinned: only then must a shard count fit the allowed
// CPUs.
func BuildPlan(allocation Allocation, allowed []int, topology *Topology, pin bool) (Plan, error) {
	if len(allowed) == 0 {
		return Plan{}, fmt.Errorf("%w: the process may run on no CPU", ErrPlan)
	}
	var cpus []int
	var err error
	switch allocation.Mode {
	case AllocationAll:
		cpus = append(cpus, allowed...)
	case AllocationCount:
		cpus, err = placeCount(allocation.Count, allowed, pin)
	case AllocationRange:
		cpus, err = placeRange(allocation, allowed)
	case AllocationNUMA:
		cpus, err = placeNUMA(allocation, allowed, topology)
	default:
		err = fmt.Errorf("%w: allocation mode %d is not known", ErrPlan, allocation.Mode)
	}
	if err != nil {
		return Plan{}, err
	}
	if len(cpus) > ShardCountMax {
		return Plan{}, fmt.Errorf("%w: cpu_allocation=%s gives %d shards, more than %d", ErrPlan, allocation, len(cpus), ShardCountMax)
	}
	plan := Plan{Allocation: allocation, CPUs: cpus, Nodes: make([]int, len(cpus)), Pin: pin}
	for shard, cpu := range cpus {
		plan.Nodes[shard] = topology.NodeOf(cpu)
	}
	return plan, nil
}

// placeCount takes the first count allowed CPUs.
func placeCount(count int, allowed []int, pin bool) ([]int, error) {
	if count < 1 || count > ShardCountMax {
		return nil, fmt.Errorf("%w: shard count %d is outside 1..%d", ErrPlan, count, ShardCountMax)
	}
	if count > len(allowed) && pin {
		return nil, fmt.Errorf("%w: cpu_allocation=%d asks for %d pinned shards but the process may run on only %d CPUs (%s); lower it or set pin_cores = false",
			ErrPlan, count, count, len(allowed), FormatCPUList(allowed))
	}
	cpus := make([]int, count)
	for shard := range cpus {
		cpus[shard] = allowed[shard%len(allowed)]
	}
	return cpus, nil
}

// placeRange takes every CPU of the range, all of which must be allowed.
func placeRange(allocation Allocation, allowed []int) ([]int, error) {
	permitted := cpuSet(allowed)
	var cpus, refused []int
	for cpu := allocation.RangeStart; cpu < allocation.RangeEnd; cpu++ {
		if permitted[cpu] {
			cpus = append(cpus, cpu)
		} else {
			refused = append(refused, cpu)
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("%w: cpu_allocation=%s names CPUs %s outside the process's allowed set %s",
			ErrPlan, allocation, FormatCPUList(refused), FormatCPUList(allowed))
	}
	return cpus, nil
}

// placeNUMA takes CPUs node by node.
func placeNUMA(allocation Allocation, allowed []int, topology *Topology) ([]int, error) {
	if topology == nil || len(topology.Nodes) == 0 {
		return nil, fmt.Errorf("%w: cpu_allocation=%s needs the NUMA topology, which is not available", ErrPlan, allocation)
	}
	nodesByID := map[int]Node{}
	for _, node := range topology.Nodes {
		nodesByID[node.ID] = node
	}
	explicit := len(allocation.Nodes) > 0
	nodes := topology.Nodes
	if explicit {
		nodes = nil
		for _, id := range allocation.Nodes {
			node, ok := nodesByID[id]
			if !ok {
				return nil, fmt.Errorf("%w: cpu_allocation=%s names NUMA node %d, but this machine has nodes %s",
					ErrPlan, allocation, id, FormatCPUList(nodeIDs(topology)))
			}
			nodes = append(nodes, node)
		}
	}
	permitted := cpuSet(allowed)
	var cpus []int
	for _, node := range nodes {
		candidates := nodeCandidates(node, permitted, topology, allocation.NoHyperthreads)
		if len(candidates) == 0 {
			if explicit {
				return nil, fmt.Errorf("%w: cpu_allocation=%s: NUMA node %d has no CPU in the process's allowed set %s",
					ErrPlan, allocation, node.ID, FormatCPUList(allowed))
			}
			continue
		}
		if allocation.CoresPerNode > 0 {
			if len(candidates) < allocation.CoresPerNode {
				return nil, fmt.Errorf("%w: cpu_allocation=%s: NUMA node %d offers %d usable CPUs (%s), fewer than cores=%d",
					ErrPlan, allocation, node.ID, len(candidates), FormatCPUList(candidates), allocation.CoresPerNode)
			}
			candidates = candidates[:allocation.CoresPerNode]
		}
		cpus = append(cpus, candidates...)
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("%w: cpu_allocation=%s: no NUMA node has a CPU in the process's allowed set %s",
			ErrPlan, allocation, FormatCPUList(allowed))
	}
	return cpus, nil
}

// nodeCandidates returns the node's allowed CPUs, ascending; with
// noHyperthreads only the lowest allowed thread of each physical core.
func nodeCandidates(node Node, permitted map[int]bool, topology *Topology, noHyperthreads bool) []int {
	var candidates []int
	for _, cpu := range node.CPUs {
		if !permitted[cpu] {
			continue
		}
		if noHyperthreads && hasLowerPermittedSibling(cpu, topology.CPUs[cpu].Siblings, permitted) {
			continue
		}
		candidates = append(candidates, cpu)
	}
	return candidates
}

// hasLowerPermittedSibling reports whether another thread of cpu's core
// with a lower number is allowed (and so represents the core instead).
func hasLowerPermittedSibling(cpu int, siblings []int, permitted map[int]bool) bool {
	for _, sibling := range siblings {
		if sibling < cpu && permitted[sibling] {
			return true
		}
	}
	return false
}

func cpuSet(cpus []int) map[int]bool {
	set := make(map[int]bool, len(cpus))
	for _, cpu := range cpus {
		set[cpu] = true
	}
	return set
}

func nodeIDs(topology *Topology) []int {
	ids := make([]int, len(topology.Nodes))
	for index, node := range topology.Nodes {
		ids[index] = node.ID
	}
	return ids
}

// PlanFromSetting parses a cpu_allocation value and places it on this
// process's allowed CPUs (sched_getaffinity) using the topology under
// sysfsRoot (SysfsRootDefault in production). The topology is required
// only by NUMA allocations; for the others a topology that cannot be read
// just leaves Plan.Nodes at -1.
func PlanFromSetting(value string, sysfsRoot string, pin bool) (Plan, error) {
	allocation, err := ParseAllocation(value)
	if err != nil {
		return Plan{}, err
	}
	allowed, err := AllowedCPUs()
	if err != nil {
		return Plan{}, err
	}
	topology, topologyErr := ReadTopology(sysfsRoot)
	if topologyErr != nil {
		if allocation.Mode == AllocationNUMA {
			return Plan{}, fmt.Errorf("%w: cpu_allocation=%s: %w", ErrPlan, allocation, topologyErr)
		}
		topology = nil
	}
	return BuildPlan(allocation, allowed, topology, pin)
}
