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
// is preferred, and so it is when any topic is replicated, unless every
// replicated topic's checks are already waived (more than f of its
// replicas lost their memory at once): its memory no longer matters, and
// the persisted ranking applies (seed 12641: the core of the faulty node
// 0 and nodes 2 and 3, node 1 down, could not repair persisted group 0's
// ops 1 and 3, which only node 0's bad disk and node 1 held).
func TestBrokerCoreAvoidsFaultyDiskOfPersistedTopics(t *testing.T) {
	for _, tc := range []struct {
		mask   uint64
		waived []int // groups whose checks are waived
		want   []int
	}{
		{mask: 0b1111, want: []int{1, 2}},
		{mask: 0, want: []int{0, 2}},
		{mask: 0b0011, want: []int{0, 2}},
		{mask: 0b0011, waived: []int{3}, want: []int{0, 2}},
		{mask: 0b0011, waived: []int{2, 3}, want: []int{1, 2}},
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
		for _, g := range tc.waived {
			w.lostMemory[g] = "lost"
		}
		w.nodes[1].up = false
		if got := w.chooseCore(); !slices.Equal(got, tc.want) {
			t.Errorf("persisted groups %04b, waived %v, node 0's disk faulty, node 1 down: core %v, want %v", tc.mask, tc.waived, got, tc.want)
		}
	}
}

// TestBrokerCoreIgnoresHealthOfWaivedGroups: a node that lost a
// replicated group's memory and has not caught up is unhealthy, and the
// liveness core avoids it, but not for a group whose checks are waived
// (more than f of its replicas lost their memory at once), whose health
// no check looks at (seed 181: node 4, faulty but healthy in every group
// still checked, was passed over for node 1, recovering in group 1 with
// no normal primary to answer it, and group 1's core of nodes 0, 1 and 2
// could neither recover node 1 nor change views).
func TestBrokerCoreIgnoresHealthOfWaivedGroups(t *testing.T) {
	for _, tc := range []struct {
		waived bool
		want   []int
	}{
		{waived: false, want: []int{0, 2}},
		{waived: true, want: []int{1, 2}},
	} {
		p := DrawParams(181)
		p.Workload = WorkloadBroker
		p.ReplicaCount = 3
		p.Groups = 4
		p.PersistedGroupsMask = 0
		p.StorageFaultyReplica = []int{0}
		w, err := newBrokerWorld(&p, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.unhealthy[3][1] = true
		if tc.waived {
			w.lostMemory[3] = "lost"
		}
		if got := w.chooseCore(); !slices.Equal(got, tc.want) {
			t.Errorf("node 0's disk faulty, node 1 unhealthy in group 3 (waived %v): core %v, want %v", tc.waived, got, tc.want)
		}
	}
}
