package sim

import (
	"slices"
	"testing"
)

// TestBrokerCoreAvoidsFaultyDiskOfPersistedTopics: with every topic
// persisted, a down node restarts from its disk, so the liveness core
// prefers it to an up node whose disk is faulty, as the cluster's
// chooseCore does under persisted durability (seed 15882: the core of the
// faulty node 0 and node 2, with node 1 isolated, could not nack node 0's
// corrupt uncommitted prepare, and group 3 stayed in a view change). With
// every topic replicated a down node has lost its memory, and the up node
// is preferred, and so it is when any topic is replicated.
func TestBrokerCoreAvoidsFaultyDiskOfPersistedTopics(t *testing.T) {
	for _, tc := range []struct {
		mask uint64
		want []int
	}{
		{mask: 0b1111, want: []int{1, 2}},
		{mask: 0, want: []int{0, 2}},
		{mask: 0b0011, want: []int{0, 2}},
	} {
		p := DrawParams(15882)
		p.Workload = WorkloadBroker
		p.ReplicaCount = 3
		p.Groups = 4
		p.PersistedGroupsMask = tc.mask
		p.StorageFaultyReplica = []int{0}
		w, err := newBrokerWorld(&p, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.nodes[1].up = false
		if got := w.chooseCore(); !slices.Equal(got, tc.want) {
			t.Errorf("persisted groups %04b, node 0's disk faulty, node 1 down: core %v, want %v", tc.mask, got, tc.want)
		}
	}
}
