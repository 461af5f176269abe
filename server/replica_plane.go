package server

import (
	"fmt"
	"time"

	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/vsr"
)

// The replica plane: a server that is one replica of a cluster.
//
// With Options.Cluster.ReplicaCount > 1 every partition is a consensus
// group of that many replicas, one on each server of the cluster: the
// same group host (server/group) as a group of one, with Peers bound to a
// ReplicaTransport instead of nobody. What the host sends to a peer goes
// through the transport; what a peer sent comes in through
// ReceiveReplica, which hands it to the host on the partition's owning
// shard, the one goroutine that touches the host. A ticker drives the
// groups' timeouts (heartbeats, view changes, recovery, repair), ticking
// only the groups that are due, and sends the primaries' commit
// heartbeats coalesced, one frame per peer and tick (replica_ticks.go); a
// group of one needs none and a single node starts no ticker.
//
// The primary of a group in view v is replica (v + group) % n
// (vsr.PrimaryIndex), so the partitions' primaries are spread over the
// servers. Only the primary serves its partition: a send elsewhere is
// answered 58 TransientNotAccepted by the group host (not primary, retry
// anywhere), and so are a poll and an offset read, which the read index
// (vsr/read_index.go) refuses. The in-memory bus of the tests is one
// binding of ReplicaTransport; a TCP binding on the
// replica port, `[cluster]` configuration and client redirection are
// others that need nothing more from the server than this file offers.
//
// Until metadata is replicated, each server keeps its own metadata: a
// cluster's streams and topics are created on every server alike (ids are
// assigned from 0 in creation order, and a partition's consensus group id
// is the metadata's count of partitions created before it, so the same
// creations give the same ids and the same group ids: partition_groups.go),
// and a message for a group no partition of the server has (not yet, or
// no more: a deleted partition's, whose ids a re-created one may hold) is
// dropped, as a lost message is, and counted (ReplicaPlaneStats.Unroutable).

// ReplicaTransport carries messages between the replicas of a cluster.
type ReplicaTransport interface {
	// Send hands m to the server with replica index to. It never blocks
	// and may lose, delay, duplicate or reorder messages (vsr resends);
	// the callee owns m. It runs on a shard goroutine, inside a group host
	// call: it must not call back into the server.
	Send(to uint8, m *vsr.Message)
}

// ClusterOptions make a server one replica of a cluster.
type ClusterOptions struct {
	// ReplicaCount is the number of replicas of every partition group; 0
	// or 1 is a single node (a group of one per partition).
	ReplicaCount uint8
	// ReplicaIndex is this server's index, below ReplicaCount.
	ReplicaIndex uint8
	// Transport carries the replica plane; required with ReplicaCount > 1.
	Transport ReplicaTransport
	// TickInterval is the period of the groups' ticks (default 10 ms): a
	// backup starts a view change after vsr's NormalHeartbeatTimeoutTicks
	// (100) ticks without hearing from its primary.
	TickInterval time.Duration
	// JournalSlots and CheckpointEveryOps, when not zero, replace the
	// partition groups' journal window and descriptor checkpoint interval
	// (tests make a replica fall behind its peers' journals in a few
	// hundred ops).
	JournalSlots       uint64
	CheckpointEveryOps uint64
}

// clusterTickDefault is the default TickInterval.
const clusterTickDefault = 10 * time.Millisecond

func (o ClusterOptions) clustered() bool { return o.ReplicaCount > 1 }

// check validates o.
func (o ClusterOptions) check() error {
	if !o.clustered() {
		return nil
	}
	switch {
	case o.Transport == nil:
		return fmt.Errorf("%w: cluster of %d replicas without a replica transport", config.ErrInvalid, o.ReplicaCount)
	case o.ReplicaIndex >= o.ReplicaCount:
		return fmt.Errorf("%w: replica index %d of a cluster of %d", config.ErrInvalid, o.ReplicaIndex, o.ReplicaCount)
	}
	return nil
}

// configure makes a partition group's replica configuration the cluster's.
// A group of one keeps its own (ReleaseApplied: no peer ever asks for a
// body).
func (o ClusterOptions) configure(c *vsr.Config) {
	if !o.clustered() {
		return
	}
	c.ReplicaCount, c.ReplicaIndex = o.ReplicaCount, o.ReplicaIndex
	c.ReleaseApplied = false // peers repair from the journal's bodies
	if o.JournalSlots > 0 {
		c.JournalSlots = o.JournalSlots
	}
}

// checkpointEvery is the partition groups' descriptor checkpoint interval.
func (o ClusterOptions) checkpointEvery() uint64 {
	if o.clustered() && o.CheckpointEveryOps > 0 {
		return o.CheckpointEveryOps
	}
	return vsrCheckpointEvery
}

// replicaPeers is a partition group's group.Peers in a cluster.
type replicaPeers struct{ t ReplicaTransport }

func (p replicaPeers) SendToReplica(replica uint8, m *vsr.Message) { p.t.Send(replica, m) }

// groupPeers returns the peers of a partition group on this server.
func (s *Server) groupPeers() group.Peers {
	if s.cluster.clustered() {
		if _, ok := s.cluster.Transport.(AnnouncementTransport); ok {
			return announcingPeers{replicaPeers{s.cluster.Transport}, &s.plane}
		}
		return replicaPeers{s.cluster.Transport}
	}
	return noPeers{}
}

// ReceiveReplica takes a message a peer replica sent (the transport's
// receiving side): it is handed to the group it names on the partition's
// owning shard. A message for a group this server does not have (counted
// unroutable), or that finds the owner's inbox full or the server
// stopping, is dropped. The server owns m from here on. Safe from any
// goroutine.
func (s *Server) ReceiveReplica(m *vsr.Message) {
	if !s.cluster.clustered() {
		return
	}
	p, ok := s.parts.byGroup(m.Group)
	if !ok {
		s.plane.unroutable.Add(1)
		return
	}
	_ = p.owner.Submit(func() { p.vsr.step(m) })
}

// startReplicaPlane starts the groups' ticker (a cluster only).
func (s *Server) startReplicaPlane() {
	if !s.cluster.clustered() || s.replicaStop != nil {
		return
	}
	interval := s.cluster.TickInterval
	if interval <= 0 {
		interval = clusterTickDefault
	}
	s.plane.tickShard = s.superblocks.tick
	stop, stopped := make(chan struct{}), make(chan struct{})
	s.replicaStop, s.replicaStopped = stop, stopped
	go func() {
		defer close(stopped)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				s.tickGroups()
			}
		}
	}()
}

// stopReplicaPlane stops the ticker and waits for it.
func (s *Server) stopReplicaPlane() {
	if s.replicaStop == nil {
		return
	}
	close(s.replicaStop)
	<-s.replicaStopped
	s.replicaStop = nil
}

// tickGroups runs one tick of the replica plane: the last tick's
// announcements go out, and every shard that finished its last tick task
// gets one that ticks its due groups (replica_ticks.go). Nothing is
// allocated per tick but the frames.
func (s *Server) tickGroups() {
	s.plane.ticks.Add(1)
	s.flushAnnouncements()
	for _, owner := range s.shards {
		ts := s.plane.sched(owner)
		select {
		case ts.busy <- struct{}{}:
			if owner.Submit(ts.run) != nil {
				<-ts.busy
			}
		default: // the last tick still runs there
		}
	}
}

// ReplicaStatus is one replica's view of a partition group.
type ReplicaStatus struct {
	// Replica is this server's index; Primary the index of the primary of
	// View (vsr.PrimaryIndex).
	Replica, Primary uint8
	View             uint64
	// Group is the partition's consensus group id.
	Group uint64
	// Status is vsr's (normal, view change, recovering).
	Status vsr.Status
	// Serving: this replica is the primary, normal, caught up: it answers
	// sends and polls.
	Serving bool
	// OpNumber, CommitNumber and CheckpointOp are the replica's.
	OpNumber, CommitNumber, CheckpointOp uint64
	// NextOffset is the applied partition state's next offset.
	NextOffset uint64
	// Fenced is why the partition stopped serving ("" when it serves).
	Fenced string
}

// PartitionReplicaStatus reports this server's replica of a partition's
// group; false when the partition is not here.
func (s *Server) PartitionReplicaStatus(stream, topic, partition uint32) (ReplicaStatus, bool) {
	p, ok := s.parts.get(partKey{stream, topic, partition})
	if !ok {
		return ReplicaStatus{}, false
	}
	var st ReplicaStatus
	found := false
	if err := p.run(func() {
		g := p.vsr
		if g == nil || g.closed {
			return
		}
		r := g.host.Replica()
		n := max(s.cluster.ReplicaCount, 1)
		st = ReplicaStatus{Replica: r.Index(), View: r.View(), Group: r.Group(), Primary: vsr.PrimaryIndex(r.View(), r.Group(), n), Status: r.Status(),
			Serving: g.host.Serving(), OpNumber: r.OpNumber(), CommitNumber: r.CommitNumber(), CheckpointOp: r.CheckpointOp(),
			NextOffset: p.machine.NextOffset()}
		if p.fenced != nil {
			st.Fenced = p.fenced.Error()
		}
		found = true
	}); err != nil {
		return ReplicaStatus{}, false
	}
	return st, found
}
