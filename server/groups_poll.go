package server

import (
	"encoding/binary"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/server/partition"
)

// polledHeaderBytes is the size of the poll reply header (§6.6).
const polledHeaderBytes = 16

// groupPartition is a group request resolved against the metadata: the
// partition and the group's numeric id.
type groupPartition struct {
	key       partKey
	groupID   uint32
	createdAt uint64
}

func (g groupPartition) served() servedKey {
	return servedKey{stream: g.key.stream, topic: g.key.topic, group: g.groupID, partition: g.key.partition, topicCreatedAt: g.createdAt}
}

// groupFence is how a group request failed its resolution.
type groupFence uint8

const (
	groupFenceOK groupFence = iota
	// groupFenceNotFound: unknown stream, topic, partition or group.
	groupFenceNotFound
	// groupFenceNotAllowed: the caller is not a member, or does not own the
	// partition (poll: or it is pending hand-off).
	groupFenceNotAllowed
	// groupFenceUnauthorized: no poll permission (41).
	groupFenceUnauthorized
)

// resolveGroupPartition resolves a group consumer's partition and runs the
// ownership fence for client: pollable (poll) or owned including pending
// hand-off (offset writes). With fence false only existence and
// permission are checked (GetConsumerOffset).
func (s *Server) resolveGroupPartition(userID uint32, client wire.Uint128, group wire.Identifier, stream, topic wire.Identifier, partitionID uint32, fence, forPoll bool) (groupPartition, groupFence) {
	s.meta.mu.RLock()
	view := s.meta.snapshot()
	defer s.meta.mu.RUnlock()
	_, t, code := view.ResolveTopic(metaID(stream), metaID(topic))
	if code != metadata.CodeOK || !t.HasPartition(partitionID) {
		return groupPartition{}, groupFenceNotFound
	}
	g := t.Group(metaID(group))
	if g == nil {
		return groupPartition{}, groupFenceNotFound
	}
	if fence {
		member := metaClient(client)
		allowed := g.Owns(member, partitionID)
		if forPoll {
			allowed = g.MayPoll(member, partitionID)
		}
		if !allowed {
			return groupPartition{}, groupFenceNotAllowed
		}
	}
	if !view.CanPoll(userID, t.StreamID, t.ID) {
		return groupPartition{}, groupFenceUnauthorized
	}
	return groupPartition{key: partKey{t.StreamID, t.ID, partitionID}, groupID: g.ID, createdAt: t.CreatedAt}, groupFenceOK
}

// handleGroupPoll runs a group-consumer PollMessages (§6.6): the fence
// first (empty reply with partition_id 0xFFFFFFFF), then permission (41),
// then a poll keyed by the group's offset; the highest offset served is
// remembered for hand-offs.
func (s *Server) handleGroupPoll(c *connection, req *wire.PollMessagesRequest) response {
	_, userID, client, _ := c.binding()
	if !req.Partition.Present {
		return response{body: emptyPoll(c.scratch[:0], 0)}
	}
	// The ownership check, the poll and the record of what was served are
	// one step for a join: a join computes in-flight partitions under the
	// write side, so it never misses a poll that passed the fence.
	s.groupPollMu.RLock()
	defer s.groupPollMu.RUnlock()
	gp, fence := s.resolveGroupPartition(userID, client, req.Consumer.ID, req.StreamID, req.TopicID, req.Partition.ID, true, true)
	switch fence {
	case groupFenceOK:
	case groupFenceUnauthorized:
		return deny(wire.ErrUnauthorized)
	default:
		return response{body: emptyPoll(c.scratch[:0], wire.PartitionIDResync)}
	}
	p, ok := s.parts.get(gp.key)
	if !ok {
		return response{body: emptyPoll(c.scratch[:0], req.Partition.ID)}
	}
	s.notePlacement(c, p)
	out, status := p.poll(c.scratch[:0], uint8(req.Strategy.Kind), req.Strategy.Value, req.Count, groupOffsetKey(gp.groupID), req.AutoCommit)
	c.scratch = out
	if status != wire.ErrorCodeOK {
		return pollFailure(out, req.Partition.ID, status)
	}
	if last, ok := lastPolledOffset(out); ok {
		s.groups().noteServed(gp.served(), last)
	}
	return response{body: out}
}

// lastPolledOffset returns the offset of the last message of a poll
// reply: the last record's base_offset plus its last frame's
// offset_delta. Offsets a recovery skipped may lie between the records,
// so the count of messages does not give it.
func lastPolledOffset(reply []byte) (uint64, bool) {
	if len(reply) < polledHeaderBytes || binary.LittleEndian.Uint32(reply[12:]) == 0 {
		return 0, false
	}
	var last uint64
	found := false
	records := reply[polledHeaderBytes:]
	for pos := 0; pos+wire.BatchHeaderSize <= len(records); {
		n := int(wire.BatchView(records[pos:]).BatchLength())
		if n < wire.BatchHeaderSize || n > len(records)-pos {
			break
		}
		batch := wire.BatchView(records[pos : pos+n])
		for frames := batch.Frames(); ; {
			f, ok := frames.Next()
			if !ok {
				break
			}
			last, found = batch.BaseOffset()+uint64(f.OffsetDelta()), true
		}
		pos += n
	}
	return last, found
}

// handleGroupGetOffset runs GetConsumerOffset (120) for a group: anyone
// with poll permission may read it, member or not (§6.7).
func (s *Server) handleGroupGetOffset(c *connection, req *wire.GetConsumerOffsetRequest) response {
	_, userID, client, _ := c.binding()
	partitionID := partitionOf(req.Partition)
	gp, fence := s.resolveGroupPartition(userID, client, req.Consumer.ID, req.StreamID, req.TopicID, partitionID, false, false)
	switch fence {
	case groupFenceOK:
	case groupFenceUnauthorized:
		return deny(wire.ErrUnauthorized)
	default:
		return response{}
	}
	p, ok := s.parts.get(gp.key)
	if !ok {
		return response{}
	}
	s.notePlacement(c, p)
	stored, current, ok, status := p.storedOffset(groupOffsetKey(gp.groupID))
	if status != wire.ErrorCodeOK {
		return deny(status)
	}
	if !ok {
		return response{}
	}
	record := wire.ConsumerOffset{PartitionID: partitionID, CurrentOffset: current, StoredOffset: stored}
	return response{body: record.AppendTo(c.scratch[:0])}
}

// groupOffsetWrite runs a group offset store or delete (121/122): only a
// member owning the partition (pending hand-off included) may write, else
// Deny 20 (§6.7). The key is rewritten to the group's numeric id. A
// committed store may complete a pending hand-off of the partition.
func (s *Server) groupOffsetWrite(c *connection, h *wire.RequestHeader, t wire.OffsetTarget, operation uint8, encode func(partition.ConsumerKey, partition.Envelope) []byte) response {
	_, userID, client, _ := c.binding()
	if !t.Partition.Present {
		return deny(wire.ErrResourceNotFound)
	}
	gp, fence := s.resolveGroupPartition(userID, client, t.Consumer.ID, t.StreamID, t.TopicID, t.Partition.ID, true, false)
	switch fence {
	case groupFenceOK:
	case groupFenceUnauthorized:
		return deny(wire.ErrUnauthorized)
	default:
		return deny(wire.ErrResourceNotFound)
	}
	p, ok := s.parts.get(gp.key)
	if !ok {
		return deny(wire.ErrResourceNotFound)
	}
	env := partition.Envelope{UserID: userID, ClientLo: client.Lo, ClientHi: client.Hi, Request: h.Request}
	s.notePlacement(c, p)
	if status := p.applyOffset(encode(groupOffsetKey(gp.groupID), env), operation); status != wire.ErrorCodeOK {
		return deny(status)
	}
	if operation == partition.OperationStoreConsumerOffset {
		target := groupTarget{stream: metadata.NumericID(gp.key.stream), topic: metadata.NumericID(gp.key.topic), group: metadata.NumericID(gp.groupID)}
		s.completeDueHandOffs(&target)
	}
	return response{body: wire.AppendResultOK(c.scratch[:0])}
}
