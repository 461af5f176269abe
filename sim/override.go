package sim

import (
	"fmt"
	"sort"
	"strconv"
)

// SetParam overrides one parameter of p by name, as `strata-sim swarm
// --set NAME=VALUE` does to narrow a swarm to a corner of the space: any
// name a scenario's `set` line takes, and replicas, clients, durability
// (persisted or replicated). The parameters DrawParams derives from
// others are then recomputed from the values in force, unless they were
// overridden themselves (Params.derive): a longer journal or a slower disk
// lengthens the liveness phase and a longer journal bounds the message
// size, whatever the order of the overrides. A change of the replica count
// keeps the rest within the fault model: storage-faulty replicas that no
// longer exist or exceed f are dropped, and a single replica is never
// partitioned (normalize also makes sure of that).
func SetParam(p *Params, name, value string) error {
	switch name {
	case "durability":
		switch value {
		case "persisted":
			p.Durability = DurabilityPersisted
		case "replicated":
			p.Durability = DurabilityReplicated
		default:
			return fmt.Errorf("%w: durability is persisted or replicated, not %q", ErrScenario, value)
		}
		p.derive()
		return nil
	}
	v, err := strconv.ParseInt(value, 10, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("%w: %s=%q is not a number", ErrScenario, name, value)
	}
	switch name {
	case "replicas":
		p.ReplicaCount = clampInt(v, 1, replicaCountMax)
		p.derive()
		var faulty []int
		for _, r := range p.StorageFaultyReplica {
			if r < p.ReplicaCount && len(faulty) < p.StorageFaultyMax {
				faulty = append(faulty, r)
			}
		}
		p.StorageFaultyReplica = faulty
		if p.ReplicaCount == 1 {
			p.PartitionMode, p.PartitionPPM, p.ClogPPM = PartitionNone, 0, 0
		}
		return nil
	case "clients":
		p.ClientCount = clampInt(v, 1, clientCountMax)
		p.derive()
		return nil
	}
	if _, ok := paramSetters[name]; !ok {
		names := []string{"replicas", "clients", "durability"}
		for n := range paramSetters {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("%w: unknown parameter %q (known: %v)", ErrScenario, name, names)
	}
	p.setParam(name, v)
	return nil
}

// setParam sets the parameter a scenario's `set` line names (a key of
// paramSetters), marks it overridden if it is a derived one, and
// recomputes the derived parameters.
func (p *Params) setParam(name string, v int64) {
	paramSetters[name](p, v)
	p.overridden |= derivedParamNames[name]
	p.derive()
}
