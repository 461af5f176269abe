package shard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ShardCountMax bounds the number of shards. The router takes the upper 16
// bits of the namespace hash modulo the shard count, so more than 65,536
// shards could not all own partitions; 4096 is far above any machine's
// core count today.
const ShardCountMax = 4096

// allocationTextMax bounds the length of a cpu_allocation value.
const allocationTextMax = 1024

// ErrAllocation is wrapped by every cpu_allocation parse error.
var ErrAllocation = errors.New("shard: invalid cpu_allocation")

// AllocationMode says how an Allocation picks CPUs.
type AllocationMode uint8

// The allocation modes of `cpu_allocation`.
const (
	// AllocationAll runs one shard per CPU the process may run on ("all").
	AllocationAll AllocationMode = iota + 1
	// AllocationCount runs Count shards on the first Count allowed CPUs
	// ("4").
	AllocationCount
	// AllocationRange runs one shard per CPU in RangeStart..RangeEnd-1
	// ("5..8" means CPUs 5, 6 and 7).
	AllocationRange
	// AllocationNUMA picks CPUs by NUMA node ("numa:auto" or
	// "numa:nodes=0,1;cores=4;no_ht=true").
	AllocationNUMA
)

// Allocation is a parsed `cpu_allocation` value.
type Allocation struct {
	Mode AllocationMode
	// Count is the shard count of AllocationCount.
	Count int
	// RangeStart and RangeEnd bound AllocationRange: CPUs RangeStart up to
	// but excluding RangeEnd.
	RangeStart, RangeEnd int
	// Nodes lists the NUMA nodes of AllocationNUMA, ascending; empty means
	// every node.
	Nodes []int
	// CoresPerNode is how many CPUs AllocationNUMA takes from each node;
	// zero means all of them.
	CoresPerNode int
	// NoHyperthreads makes AllocationNUMA take one CPU per physical core.
	NoHyperthreads bool
}

// ParseAllocation parses a `cpu_allocation` value:
//
//	all                                every allowed CPU
//	N                                  N shards (1..ShardCountMax)
//	a..b                               CPUs a..b-1 (a < b)
//	numa:auto                          every node, one CPU per physical core
//	numa:nodes=0,1;cores=4;no_ht=true  listed nodes, cores per node, HT avoidance
//
// In the explicit NUMA form every key is optional (nodes defaults to all,
// cores to all, no_ht to false), keys may appear once each, and spaces
// around separators are ignored.
func ParseAllocation(text string) (Allocation, error) {
	if len(text) > allocationTextMax {
		return Allocation{}, fmt.Errorf("%w: value is %d bytes long, more than %d", ErrAllocation, len(text), allocationTextMax)
	}
	value := strings.TrimSpace(text)
	switch {
	case value == "":
		return Allocation{}, fmt.Errorf("%w: empty value (want all, N, a..b, numa:auto or numa:nodes=...;cores=...;no_ht=...)", ErrAllocation)
	case strings.EqualFold(value, "all"):
		return Allocation{Mode: AllocationAll}, nil
	case strings.HasPrefix(strings.ToLower(value), "numa:"):
		return parseNUMA(value, value[len("numa:"):])
	case strings.Contains(value, ".."):
		return parseRange(value)
	default:
		count, err := parseCount(value, "shard count")
		if err != nil {
			return Allocation{}, fmt.Errorf("%w: %q: %w (want all, N, a..b or numa:...)", ErrAllocation, text, err)
		}
		if count < 1 || count > ShardCountMax {
			return Allocation{}, fmt.Errorf("%w: %q: shard count must be 1..%d", ErrAllocation, text, ShardCountMax)
		}
		return Allocation{Mode: AllocationCount, Count: count}, nil
	}
}

// parseCount parses a non-negative decimal number no larger than 1<<20.
func parseCount(text, what string) (int, error) {
	text = strings.TrimSpace(text)
	if text == "" || strings.IndexFunc(text, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, fmt.Errorf("%s %q is not a non-negative whole number", what, text)
	}
	number, err := strconv.Atoi(text)
	if err != nil || number > 1<<20 {
		return 0, fmt.Errorf("%s %s is too large", what, text)
	}
	return number, nil
}

// parseRange parses "a..b".
func parseRange(value string) (Allocation, error) {
	low, high, _ := strings.Cut(value, "..")
	start, err := parseCPUNumber(low)
	if err != nil {
		return Allocation{}, fmt.Errorf("%w: range %q: start: %w", ErrAllocation, value, err)
	}
	if strings.HasPrefix(high, "=") {
		return Allocation{}, fmt.Errorf("%w: range %q: inclusive ranges are not supported; a..b means CPUs a to b-1", ErrAllocation, value)
	}
	end, err := parseNumberAtMost(high, CPUNumberMax+1)
	if err != nil {
		return Allocation{}, fmt.Errorf("%w: range %q: end: %w", ErrAllocation, value, err)
	}
	if end <= start {
		return Allocation{}, fmt.Errorf("%w: range %q is empty: the end is exclusive and must be above the start", ErrAllocation, value)
	}
	return Allocation{Mode: AllocationRange, RangeStart: start, RangeEnd: end}, nil
}

// parseNUMA parses the part after "numa:".
func parseNUMA(value, spec string) (Allocation, error) {
	allocation := Allocation{Mode: AllocationNUMA}
	spec = strings.TrimSpace(spec)
	if strings.EqualFold(spec, "auto") {
		allocation.NoHyperthreads = true
		return allocation, nil
	}
	if spec == "" {
		return Allocation{}, fmt.Errorf("%w: %q: nothing after numa: (want auto or nodes=...;cores=...;no_ht=...)", ErrAllocation, value)
	}
	seen := map[string]bool{}
	for _, field := range strings.Split(spec, ";") {
		key, fieldValue, hasValue := strings.Cut(field, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		fieldValue = strings.TrimSpace(fieldValue)
		if !hasValue || key == "" {
			return Allocation{}, fmt.Errorf("%w: %q: %q is not key=value", ErrAllocation, value, field)
		}
		if seen[key] {
			return Allocation{}, fmt.Errorf("%w: %q: key %s given twice", ErrAllocation, value, key)
		}
		seen[key] = true
		switch key {
		case "nodes":
			nodes, err := parseNodeList(fieldValue)
			if err != nil {
				return Allocation{}, fmt.Errorf("%w: %q: nodes: %w", ErrAllocation, value, err)
			}
			allocation.Nodes = nodes
		case "cores":
			cores, err := parseCount(fieldValue, "cores")
			if err != nil {
				return Allocation{}, fmt.Errorf("%w: %q: %w", ErrAllocation, value, err)
			}
			if cores > ShardCountMax {
				return Allocation{}, fmt.Errorf("%w: %q: cores %d is above %d", ErrAllocation, value, cores, ShardCountMax)
			}
			allocation.CoresPerNode = cores
		case "no_ht":
			switch strings.ToLower(fieldValue) {
			case "true":
				allocation.NoHyperthreads = true
			case "false":
				allocation.NoHyperthreads = false
			default:
				return Allocation{}, fmt.Errorf("%w: %q: no_ht must be true or false, not %q", ErrAllocation, value, fieldValue)
			}
		default:
			return Allocation{}, fmt.Errorf("%w: %q: unknown key %q (want nodes, cores, no_ht)", ErrAllocation, value, key)
		}
	}
	return allocation, nil
}

// parseNodeList parses "0,1" (or the range form "0-1") into ascending,
// distinct node numbers.
func parseNodeList(text string) ([]int, error) {
	if text == "" {
		return nil, errors.New("empty node list")
	}
	nodes, err := ParseCPUList(text)
	if err != nil {
		return nil, err
	}
	return nodes, nil
}

// String renders the allocation in the syntax ParseAllocation reads.
func (a Allocation) String() string {
	switch a.Mode {
	case AllocationAll:
		return "all"
	case AllocationCount:
		return strconv.Itoa(a.Count)
	case AllocationRange:
		return fmt.Sprintf("%d..%d", a.RangeStart, a.RangeEnd)
	case AllocationNUMA:
		var parts []string
		if len(a.Nodes) > 0 {
			nodes := make([]string, len(a.Nodes))
			for index, node := range a.Nodes {
				nodes[index] = strconv.Itoa(node)
			}
			parts = append(parts, "nodes="+strings.Join(nodes, ","))
		}
		if a.CoresPerNode > 0 {
			parts = append(parts, "cores="+strconv.Itoa(a.CoresPerNode))
		}
		parts = append(parts, "no_ht="+strconv.FormatBool(a.NoHyperthreads))
		return "numa:" + strings.Join(parts, ";")
	default:
		return "invalid"
	}
}
