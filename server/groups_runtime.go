package server

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/server/partition"
)

// groupRebalancingTimeout is consumer_group.rebalancing_timeout: a pending
// hand-off completes after it even if the source never commits (§7).
const groupRebalancingTimeout = 30 * time.Second

// servedKey names one partition of one group. topicCreatedAt tells a
// topic from a later one that reuses its id.
type servedKey struct {
	stream, topic, group, partition uint32
	topicCreatedAt                  uint64
}

// groupRuntime is the server's non-replicated consumer-group bookkeeping:
// the highest offset served to each group per partition (§6.6), which
// decides what is in flight at a join and when a hand-off may complete.
type groupRuntime struct {
	mu     sync.Mutex
	served map[servedKey]uint64
}

// newGroupRuntime returns empty bookkeeping.
func newGroupRuntime() *groupRuntime {
	return &groupRuntime{served: map[servedKey]uint64{}}
}

// groups returns s's group runtime.
func (s *Server) groups() *groupRuntime { return s.groupState }

// noteServed records that offsets up to last were served to a group.
func (g *groupRuntime) noteServed(k servedKey, last uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if previous, ok := g.served[k]; !ok || last > previous {
		g.served[k] = last
	}
}

// servedOffset returns the highest offset served to a group.
func (g *groupRuntime) servedOffset(k servedKey) (uint64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.served[k]
	return v, ok
}

// forgetGroup drops the bookkeeping of a deleted group.
func (g *groupRuntime) forgetGroup(stream, topic, group uint32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k := range g.served {
		if k.stream == stream && k.topic == topic && k.group == group {
			delete(g.served, k)
		}
	}
}

// groupOffsetKey is the offset key of a group (§6.7: kind 2, numeric id).
func groupOffsetKey(groupID uint32) partition.ConsumerKey {
	return partition.ConsumerKey{Kind: uint8(wire.ConsumerKindGroup), ID: groupID}
}

// inFlight reports whether a group was served data on a partition beyond
// its committed offset.
func (s *Server) inFlight(k servedKey) bool {
	served, ok := s.groups().servedOffset(k)
	if !ok {
		return false
	}
	p, ok := s.parts.get(partKey{k.stream, k.topic, k.partition})
	if !ok {
		return false
	}
	committed, current, stored, status := p.storedOffset(groupOffsetKey(k.group))
	if status != wire.ErrorCodeOK {
		// The group's offset could not be read here: count the served
		// data as uncommitted (the hand-off waits for a commit).
		return true
	}
	if served > current {
		// Served before a purge: nothing of it is left to commit.
		return false
	}
	return !stored || served > committed
}

// inFlightPartitions lists, ascending, the partitions of a group with
// polled but uncommitted data (the JoinConsumerGroup operation's input).
func (s *Server) inFlightPartitions(target groupTarget) []uint32 {
	s.meta.mu.RLock()
	_, t, code := s.meta.snapshot().ResolveTopic(target.stream, target.topic)
	var keys []servedKey
	if code == metadata.CodeOK {
		if g := t.Group(target.group); g != nil {
			for _, p := range t.Partitions {
				keys = append(keys, servedKey{stream: t.StreamID, topic: t.ID, group: g.ID, partition: p.ID, topicCreatedAt: t.CreatedAt})
			}
		}
	}
	s.meta.mu.RUnlock()
	var out []uint32
	for _, k := range keys {
		if s.inFlight(k) {
			out = append(out, k.partition)
		}
	}
	return out
}

// dropGroupOffsets deletes a deleted group's offset in every partition
// that holds one (an offset delete operation: memory, then
// offsets/groups/{id}) and its bookkeeping.
//
// It runs in the metadata writer's task (on is shard 0; see runOnOwner).
func (s *Server) dropGroupOffsets(on *shard.Shard, streamID, topicID, groupID uint32, partitionIDs []uint32) {
	key := groupOffsetKey(groupID)
	body := partition.DeleteConsumerOffset{Consumer: key}.Encode(partition.Envelope{})
	for _, id := range partitionIDs {
		p, ok := s.parts.get(partKey{streamID, topicID, id})
		if !ok {
			continue
		}
		// A delete of the group's offset, as a member would send it, where
		// the applied state holds one; one gone meanwhile answers 3021,
		// which is no failure here.
		w := &opWait{}
		err := runOnOwner(on, p.owner, func() {
			if _, stored := p.machine.StoredOffset(key); !stored {
				w.complete(applied{status: wire.ErrorCodeOK})
				return
			}
			p.submit(partition.OperationDeleteConsumerOffset, body, w)
			w.detach()
		})
		if err != nil {
			s.log.Warn("dropping a deleted group's offset failed", zap.Uint32("group_id", groupID), zap.Uint32("partition_id", id), zap.Error(err))
			continue
		}
		if result := w.wait(); result.status != wire.ErrorCodeOK && result.status != wire.ErrConsumerOffsetNotFound {
			s.log.Warn("dropping a deleted group's offset failed", zap.Uint32("group_id", groupID), zap.Uint32("partition_id", id), zap.Uint32("status", uint32(result.status)), zap.Error(result.err))
		}
	}
	s.groups().forgetGroup(streamID, topicID, groupID)
}

// handOffDue reports whether a pending hand-off may complete now: the
// group's committed offset caught up with what the source was served, or
// the rebalancing timeout passed.
func (s *Server) handOffDue(h metadata.PendingHandOff, topicCreatedAt uint64, nowMicros uint64) bool {
	if nowMicros >= h.SinceMicros+uint64(groupRebalancingTimeout.Microseconds()) {
		return true
	}
	return !s.inFlight(servedKey{stream: h.StreamID, topic: h.TopicID, group: h.GroupID, partition: h.PartitionID, topicCreatedAt: topicCreatedAt})
}

// completeDueHandOffs completes the pending hand-offs that are due, of one
// group (target non-nil) or of every group.
func (s *Server) completeDueHandOffs(target *groupTarget) {
	type candidate struct {
		handOff   metadata.PendingHandOff
		createdAt uint64
	}
	var candidates []candidate
	s.meta.mu.RLock()
	view := s.meta.snapshot()
	if target != nil {
		if _, t, code := view.ResolveTopic(target.stream, target.topic); code == metadata.CodeOK {
			if g := t.Group(target.group); g != nil {
				for _, h := range g.HandOffs() {
					candidates = append(candidates, candidate{metadata.PendingHandOff{StreamID: t.StreamID, TopicID: t.ID, GroupID: g.ID, HandOff: h}, t.CreatedAt})
				}
			}
		}
	} else {
		for _, h := range view.PendingHandOffs() {
			if st := view.Stream(metadata.NumericID(h.StreamID)); st != nil {
				if t := st.Topic(metadata.NumericID(h.TopicID)); t != nil {
					candidates = append(candidates, candidate{h, t.CreatedAt})
				}
			}
		}
	}
	s.meta.mu.RUnlock()
	now := s.nowMicros()
	for _, c := range candidates {
		if !s.handOffDue(c.handOff, c.createdAt, now) {
			continue
		}
		h := c.handOff
		s.meta.mu.Lock()
		_, err := s.submitInternalLocked(&metadata.CompleteConsumerGroupHandOff{StreamID: h.StreamID, TopicID: h.TopicID, GroupID: h.GroupID, PartitionID: h.PartitionID})
		s.meta.mu.Unlock()
		if err != nil {
			s.log.Warn("completing a consumer-group hand-off failed", zap.Error(err))
			return
		}
	}
}

// releaseGroupMemberships removes client from every consumer group it
// joined (§7 removal: socket close), unless the client id is still bound
// to a live session (it re-registered on another connection). Call it
// after the session of a closed connection is released; it takes the
// metadata lock.
func (s *Server) releaseGroupMemberships(client wire.Uint128) {
	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	if s.meta.bindings.live(client) {
		return
	}
	s.releaseGroupMembershipsLocked(client)
}

// releaseGroupMembershipsLocked removes client from every group it joined
// (logout, eviction). The caller holds the metadata lock for writing.
// Nothing is sequenced when client is a member of no group.
func (s *Server) releaseGroupMembershipsLocked(client wire.Uint128) {
	id := metaClient(client)
	if !s.meta.snapshot().IsGroupMember(id) {
		return
	}
	if _, err := s.submitInternalLocked(&metadata.RemoveConsumerGroupMember{Client: id}); err != nil {
		s.log.Warn("removing a client from its consumer groups failed", zap.Error(err))
	}
}

// clientGroups lists the groups the client bound to c is a member of
// (ClientDetails of GetMe / GetClient; its length is ClientInfo's
// consumer_groups_count).
func (s *Server) clientGroups(c *connection) []wire.ClientGroup {
	bound, _, client, _ := c.binding()
	if !bound {
		return nil
	}
	s.meta.mu.RLock()
	refs := s.meta.snapshot().GroupsOfClient(metaClient(client))
	s.meta.mu.RUnlock()
	out := make([]wire.ClientGroup, len(refs))
	for i, r := range refs {
		out[i] = wire.ClientGroup{StreamID: r.StreamID, TopicID: r.TopicID, GroupID: r.GroupID}
	}
	return out
}

// consumerGroupsCount is the Stats consumer_groups_count.
func (s *Server) consumerGroupsCount() uint32 {
	s.meta.mu.RLock()
	defer s.meta.mu.RUnlock()
	return uint32(s.meta.snapshot().ConsumerGroupsCount())
}
