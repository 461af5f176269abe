package sim

import (
	"fmt"
	"strings"
)

// Limits of the broker workload's parameters.
const (
	// brokerGroupsMax bounds the partition groups each node hosts.
	brokerGroupsMax = 6
	// brokerBatchMessagesMax bounds the messages of one send.
	brokerBatchMessagesMax = 8
	// brokerPollMessagesMax bounds the messages one poll asks for.
	brokerPollMessagesMax = 16
	// brokerSafetyTicksMax bounds a broker seed's faulty phase: every tick
	// drives Groups replicas per node, so the long runs of the kv workload
	// would cost minutes.
	brokerSafetyTicksMax = 6_000
)

// brokerSharePPM is the share of the default swarm's seeds that draw the
// broker workload (DrawParams).
const brokerSharePPM = PPM / 8

// drawBroker draws the broker workload's parameters from their own
// sub-stream (so that the kv workload's parameters of a seed never change)
// and, for brokerSharePPM of the seeds, selects the broker workload.
func drawBroker(r *PRNG, p *Params) {
	selected := r.Chance(brokerSharePPM)
	drawBrokerParams(r, p)
	if selected {
		p.UseBroker()
	}
}

// UseBroker selects the broker workload (the --workload broker flag and
// the scenario line do the same to a drawn seed): its safety phase is
// capped at brokerSafetyTicksMax.
func (p *Params) UseBroker() {
	p.Workload = WorkloadBroker
	p.SafetyTicks = min(p.SafetyTicks, brokerSafetyTicksMax)
}

// drawBrokerParams draws the partition groups, their topics' durability
// policies, the flush threshold and the batch size. Under a persisted
// seed's fault model (any crash pattern, power loss) a replicated topic is
// drawn too: its durability check is waived once more than f nodes lost
// its memory at once, as the durability seed allows.
func drawBrokerParams(r *PRNG, p *Params) {
	p.Groups = r.Range(1, brokerGroupsMax)
	for g := 0; g < p.Groups; g++ {
		if r.Chance(PPM / 2) {
			p.PersistedGroupsMask |= 1 << uint(g)
		}
	}
	switch x := r.IntN(10); {
	case x < 3:
		p.FlushMessages = r.Range(1, 4)
	case x < 8:
		p.FlushMessages = r.Range(5, 64)
	default:
		p.FlushMessages = 1024 // the default threshold: flushes are rare
	}
	p.BatchMessagesMax = r.Range(1, brokerBatchMessagesMax)
	p.Metadata = 1 // not drawn: the parameter stream stays as it was
}

// groupPersisted reports whether group g's topic is persisted.
func (p *Params) groupPersisted(g int) bool { return p.PersistedGroupsMask&(1<<uint(g)) != 0 }

func persistedGroupsString(p *Params) string {
	var parts []string
	for g := 0; g < p.Groups; g++ {
		if p.groupPersisted(g) {
			parts = append(parts, fmt.Sprint(g))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}
