package sim

import "slices"

// NetworkCounters counts what the simulated network did, for the run report.
type NetworkCounters struct {
	Sent             uint64
	Delivered        uint64
	DroppedLoss      uint64
	DroppedPartition uint64
	DroppedCapacity  uint64
	DroppedDown      uint64 // delivered to a node that was not running
	Duplicated       uint64
	Reordered        uint64
	Partitions       uint64
	Clogs            uint64
	Corrupted        uint64 // packets corrupted in flight
}

// pathCapacityLiveness is the least room a path has once faults stop.
const pathCapacityLiveness = 256

// packet is one message in flight on a path.
type packet[P any] struct {
	deliverTick uint64
	sequence    uint64 // global send order, the tie-breaker of delivery
	from, to    int
	payload     P
	corrupted   bool
}

// path is the queue of packets from one node to another.
type path[P any] struct {
	packets       []packet[P]
	clogUntilTick uint64
}

// Network is the simulated network: one bounded queue per directed path
// between nodes (replicas first, then clients), seeded delay, loss,
// duplication, reordering, partitions between replicas and clogged paths.
// Delivery happens by tick in (delivery tick, send sequence) order, so a run
// is deterministic. P is the message type; clone copies a payload for
// duplication; corrupt, if not nil, returns a corrupted copy of a payload
// (CorruptPPM of the packets are delivered corrupted, flagged as such).
type Network[P any] struct {
	nodeCount    int
	replicaCount int
	params       *Params
	prng         *PRNG
	clone        func(P) P
	corrupt      func(P, *PRNG) P
	// primary, if set, names the replica that is primary now (for
	// PartitionIsolatePrimary; -1 if none is).
	primary func() int
	// isolatedPrimary is the replica a PartitionIsolatePrimary partition
	// cut off, or -1.
	isolatedPrimary int
	// hold, if set, keeps the current partition from healing this tick.
	hold  func() bool
	paths []path[P] // nodeCount*nodeCount, index from*nodeCount+to
	// cut[from*nodeCount+to] is true while a partition blocks the path.
	cut         []bool
	partitioned bool
	// faultsEnabled is false in the liveness phase: no loss, no new
	// partitions or clogs.
	faultsEnabled bool
	sequence      uint64
	due           []packet[P] // scratch for DeliverDue
	Counters      NetworkCounters
}

// NewNetwork returns a network between replicaCount replicas and
// nodeCount-replicaCount clients.
func NewNetwork[P any](nodeCount, replicaCount int, params *Params, prng *PRNG, clone func(P) P, corrupt func(P, *PRNG) P) *Network[P] {
	return &Network[P]{
		corrupt:         corrupt,
		nodeCount:       nodeCount,
		replicaCount:    replicaCount,
		params:          params,
		prng:            prng,
		clone:           clone,
		paths:           make([]path[P], nodeCount*nodeCount),
		isolatedPrimary: -1,
		cut:             make([]bool, nodeCount*nodeCount),
		faultsEnabled:   true,
	}
}

// SetFaults turns random network faults on or off.
func (n *Network[P]) SetFaults(enabled bool) { n.faultsEnabled = enabled }

// Send queues payload from one node to another at tick now.
func (n *Network[P]) Send(now uint64, from, to int, payload P) {
	n.Counters.Sent++
	if n.faultsEnabled && n.prng.Chance(n.params.LossPPM) {
		n.Counters.DroppedLoss++
		return
	}
	n.enqueue(now, from, to, payload)
	if n.faultsEnabled && n.prng.Chance(n.params.DuplicatePPM) {
		n.Counters.Duplicated++
		n.enqueue(now, from, to, n.clone(payload))
	}
}

func (n *Network[P]) enqueue(now uint64, from, to int, payload P) {
	pa := &n.paths[from*n.nodeCount+to]
	capacity := n.params.PathCapacityMax
	if !n.faultsEnabled {
		// A path that drops every burst is a fault too: the liveness
		// phase gives every path room.
		capacity = max(capacity, pathCapacityLiveness)
	}
	if len(pa.packets) >= capacity {
		n.Counters.DroppedCapacity++
		return
	}
	corrupted := false
	if n.corrupt != nil && n.faultsEnabled && n.prng.Chance(n.params.CorruptPPM) {
		payload, corrupted = n.corrupt(payload, n.prng), true
		n.Counters.Corrupted++
	}
	delay := uint64(n.prng.Range(n.params.DelayTicksMin, n.params.DelayTicksMax))
	if n.faultsEnabled && n.prng.Chance(n.params.ReorderPPM) {
		n.Counters.Reordered++
		delay += uint64(n.prng.Range(1, networkDelayTicksMax))
	}
	n.sequence++
	pa.packets = append(pa.packets, packet[P]{
		deliverTick: now + delay,
		sequence:    n.sequence,
		from:        from,
		to:          to,
		payload:     payload,
		corrupted:   corrupted,
	})
}

// DeliverDue removes every packet due at or before now from unclogged paths
// and hands it to deliver, in (delivery tick, send sequence) order, saying
// whether the network corrupted it. Packets on a path that a partition
// cuts at delivery time are dropped.
func (n *Network[P]) DeliverDue(now uint64, deliver func(from, to int, payload P, corrupted bool)) {
	n.due = n.due[:0]
	for i := range n.paths {
		pa := &n.paths[i]
		if len(pa.packets) == 0 || pa.clogUntilTick > now {
			continue
		}
		kept := pa.packets[:0]
		for _, pk := range pa.packets {
			if pk.deliverTick <= now {
				n.due = append(n.due, pk)
			} else {
				kept = append(kept, pk)
			}
		}
		var zero packet[P]
		for j := len(kept); j < len(pa.packets); j++ {
			pa.packets[j] = zero
		}
		pa.packets = kept
	}
	slices.SortFunc(n.due, func(a, b packet[P]) int {
		if a.deliverTick != b.deliverTick {
			return cmpUint64(a.deliverTick, b.deliverTick)
		}
		return cmpUint64(a.sequence, b.sequence)
	})
	for i := range n.due {
		pk := &n.due[i]
		if n.cut[pk.from*n.nodeCount+pk.to] {
			n.Counters.DroppedPartition++
			continue
		}
		n.Counters.Delivered++
		deliver(pk.from, pk.to, pk.payload, pk.corrupted)
	}
	var zero packet[P]
	for i := range n.due {
		n.due[i] = zero
	}
}

// Tick draws this tick's random partition and clog events.
func (n *Network[P]) Tick(now uint64) {
	if !n.faultsEnabled {
		return
	}
	if n.partitioned {
		if (n.hold == nil || !n.hold()) && n.prng.Chance(n.params.UnpartitionPPM) {
			// Half the time the network flaps straight into another
			// partition, so that replicas on different sides never hear
			// each other's views in between.
			if n.params.PartitionMode != PartitionNone && n.prng.Chance(PPM/2) {
				n.partitionRandom()
			} else {
				n.Heal()
			}
		}
	} else if n.params.PartitionMode != PartitionNone && n.prng.Chance(n.params.PartitionPPM) {
		n.partitionRandom()
	}
	if n.replicaCount > 1 && n.prng.Chance(n.params.ClogPPM) {
		from := n.prng.IntN(n.replicaCount)
		to := n.prng.IntN(n.replicaCount)
		if from != to {
			n.Clog(from, to, now+uint64(n.prng.Range(1, n.params.ClogTicksMax)))
		}
	}
}

func (n *Network[P]) partitionRandom() {
	side := make([]int, n.replicaCount)
	switch n.params.PartitionMode {
	case PartitionIsolateOne:
		side[n.prng.IntN(n.replicaCount)] = 1
		n.Partition(side, false)
	case PartitionIsolatePrimary:
		target := -1
		if n.primary != nil {
			target = n.primary()
		}
		if target < 0 {
			target = n.prng.IntN(n.replicaCount)
		}
		n.IsolatePrimary(target)
	case PartitionUniform, PartitionAsymmetric:
		for i := range side {
			side[i] = n.prng.IntN(2)
		}
		n.Partition(side, n.params.PartitionMode == PartitionAsymmetric)
	}
}

// Partition cuts every replica path between different sides (side[i] is
// replica i's side; a negative side stays connected to everyone). If
// oneWay, only paths from a lower side number to a higher one are cut. It
// replaces any partition in force.
func (n *Network[P]) Partition(side []int, oneWay bool) {
	n.Heal()
	n.Counters.Partitions++
	n.partitioned = true
	for a := 0; a < n.replicaCount; a++ {
		for b := 0; b < n.replicaCount; b++ {
			if side[a] == side[b] || side[a] < 0 || side[b] < 0 {
				continue
			}
			if oneWay && side[a] > side[b] {
				continue
			}
			n.cut[a*n.nodeCount+b] = true
		}
	}
}

// IsolatePrimary cuts replica off from the other replicas (clients still
// reach it), replacing any partition, and remembers it as the isolated
// primary.
func (n *Network[P]) IsolatePrimary(replica int) {
	side := make([]int, n.replicaCount)
	side[replica] = 1
	n.Partition(side, false)
	n.isolatedPrimary = replica
}

// IsolatedPrimary returns the replica an IsolatePrimary partition in
// force cut off, or -1.
func (n *Network[P]) IsolatedPrimary() int { return n.isolatedPrimary }

// Isolate cuts every path to and from node, clients included.
func (n *Network[P]) Isolate(node int) {
	n.partitioned = true
	for other := 0; other < n.nodeCount; other++ {
		if other != node {
			n.cut[node*n.nodeCount+other] = true
			n.cut[other*n.nodeCount+node] = true
		}
	}
}

// Heal removes every partition.
func (n *Network[P]) Heal() {
	for i := range n.cut {
		n.cut[i] = false
	}
	n.partitioned = false
	n.isolatedPrimary = -1
}

// Clog holds every packet on the path from one node to another until tick
// untilTick.
func (n *Network[P]) Clog(from, to int, untilTick uint64) {
	n.Counters.Clogs++
	n.paths[from*n.nodeCount+to].clogUntilTick = untilTick
}

// Unclog releases every clogged path.
func (n *Network[P]) Unclog() {
	for i := range n.paths {
		n.paths[i].clogUntilTick = 0
	}
}

// DropTo discards every packet queued to node (used when it crashes: a
// restarted process does not receive its old connections' traffic).
func (n *Network[P]) DropTo(node int) {
	for from := 0; from < n.nodeCount; from++ {
		pa := &n.paths[from*n.nodeCount+node]
		n.Counters.DroppedDown += uint64(len(pa.packets))
		clear(pa.packets)
		pa.packets = pa.packets[:0]
	}
}

// InFlight returns the number of queued packets.
func (n *Network[P]) InFlight() int {
	total := 0
	for i := range n.paths {
		total += len(n.paths[i].packets)
	}
	return total
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
