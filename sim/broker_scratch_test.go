package sim

import (
	"strings"
	"testing"
)

// scratchSeed runs broker seeds from 1 until one in which a scratch
// topic's group was created and deleted on some node, and returns its
// world after the run (nil if none of max seeds did).
func scratchSeed(t *testing.T, max uint64) (*brokerWorld, *Result) {
	t.Helper()
	for seed := uint64(1); seed <= max; seed++ {
		p := DrawParams(seed)
		p.UseBroker()
		var world *brokerWorld
		res := runBroker(Options{Params: p}, func(w *brokerWorld) error {
			world = w
			for k := 0; k < w.params.SafetyTicks && w.violation == nil; k++ {
				w.Tick()
			}
			w.Liveness()
			return nil
		})
		if res.Outcome.Kind != OutcomeOK {
			t.Fatalf("seed %d: %s: %s", seed, res.Outcome.Checker, firstLineOf(res.Outcome.Detail))
		}
		if b := res.broker; b != nil && b.scratch.created > 0 && b.scratch.deleted > 0 {
			return world, res
		}
	}
	return nil, nil
}

// TestBrokerScratchGroupsComeAndGo checks that scratch topics' groups are
// started and stopped with their topics: a deleted slot has no host and
// no storage on any node whose metadata applied the delete, and a node
// applying one of its ops there is a topic-gate violation.
func TestBrokerScratchGroupsComeAndGo(t *testing.T) {
	w, res := scratchSeed(t, 60)
	if w == nil {
		t.Fatal("no scratch group was created and deleted in 60 broker seeds")
	}
	t.Logf("seed %d: scratch %+v", res.Params.Seed, res.broker.scratch)
	checked := false
	for g := w.params.Groups; g < w.groups; g++ {
		if sg := w.slots[g]; sg.persisted != (sg.topic == brokerPersistedScratchTopic) || w.configs[0][g].Replica.Group != uint64(g) {
			t.Fatalf("group %d (topic %s): persisted %v, vsr group %d", g, metaTopicName(sg.topic), sg.persisted, w.configs[0][g].Replica.Group)
		}
		if !w.deleted(g) {
			continue
		}
		for i, node := range w.nodes {
			mn := w.meta.nodes[i]
			if !node.up || mn.host == nil || !mn.opened || mn.appliedOp < w.slots[g].createdOp {
				continue
			}
			if t := scratchTopicOf(mn.host.Machine(), w.slots[g].topic); t != nil && t.ID == w.slots[g].topicID && t.CreatedAt == w.slots[g].createdAt {
				continue // a node outside the core that has not applied the delete
			}
			if node.hosts[g] != nil || node.storages[g] != nil {
				t.Fatalf("node %d still holds deleted scratch group %d", i, g)
			}
			w.checkScratchGate(i, g, 1)
			if w.violation == nil || w.violationKind != "topic-gate" || !strings.Contains(w.violation.Error(), "after the delete") {
				t.Fatalf("an op of deleted group %d applied at node %d was not flagged: %v", g, i, w.violation)
			}
			w.violation = nil
			checked = true
		}
	}
	if !checked {
		t.Fatal("no node applied a scratch topic's delete")
	}
}
