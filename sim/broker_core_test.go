package sim

import (
	"slices"
	"testing"

	"github.com/stratabroker/strata/vsr"
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

// TestBrokerCoreLetsRecoveringReplicasRecover: a node that lost a
// replicated group's memory and is still recovering in it may be in the
// liveness core only with a view-change quorum of that group's memoryful
// replicas besides it, which a core of a bare view-change quorum is not:
// its recovery needs that many answers, and its peers' view change needs
// its vote (seed 2002 at --ticks 6000: node 2, recovering in group 0,
// was taken into the core of nodes 0, 1, 2 and 4 over nodes 1 and 3,
// unhealthy only in a persisted group, and node 5, memoryful in group 0,
// and group 0 stayed in a view change through the liveness phase). Here
// node 2 recovers in replicated group 0, nodes 1 and 3 have not caught up
// in persisted group 1, and node 5 has not caught up in group 0 but holds
// its log (normal): every one of them ranks the same, the shuffle orders
// them by the seed, and the core never holds node 2.
func TestBrokerCoreLetsRecoveringReplicasRecover(t *testing.T) {
	for seed := uint64(1); seed <= 16; seed++ {
		p := DrawParams(2002)
		p.Seed = seed
		p.Workload = WorkloadBroker
		p.ReplicaCount = 6
		p.Groups = 2
		p.PersistedGroupsMask = 0b10
		p.StorageFaultyReplica = nil
		w, err := newBrokerWorld(&p, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.faultsEnabled = false
		w.network.SetFaults(false)
		for _, node := range w.nodes {
			for _, s := range node.storages {
				s.SetFaults(false)
			}
		}
		opened := func() bool {
			for i := 0; i < w.n; i++ {
				for g := 0; g < w.groups; g++ {
					if st := w.host(i, g).Replica().Status(); st == vsr.StatusOpening || st == vsr.StatusRecovering {
						return false
					}
				}
			}
			return true
		}
		for tick := 0; tick < 1000 && !opened(); tick++ {
			w.Tick()
		}
		if !opened() {
			t.Fatalf("seed %d: the groups did not open in 1000 ticks without faults", seed)
		}
		w.Crash(2, false)
		w.Restart(2)
		if st := w.host(2, 0).Replica().Status(); st != vsr.StatusOpening && st != vsr.StatusRecovering {
			t.Fatalf("seed %d: node 2 restarted %s in replicated group 0, want opening or recovering", seed, st)
		}
		if st := w.host(5, 0).Replica().Status(); st == vsr.StatusOpening || st == vsr.StatusRecovering {
			t.Fatalf("seed %d: node 5 is %s in group 0", seed, st)
		}
		w.unhealthy[1][1], w.unhealthy[1][3] = true, true
		w.unhealthy[0][5], w.unhealthy[1][5] = true, true
		if w.waived(0) != "" || w.waived(1) != "" {
			t.Fatalf("seed %d: a group's checks are waived: %q %q", seed, w.waived(0), w.waived(1))
		}
		core := w.chooseCore()
		if len(core) != ViewChangeQuorum(6) || slices.Contains(core, 2) || !w.coreCanRecover(core) {
			t.Errorf("seed %d: core %v holds node 2, recovering in replicated group 0 with too few memoryful peers", seed, core)
		}
	}
}
