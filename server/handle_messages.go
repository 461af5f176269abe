package server

import (
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/net/xxh32"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/server/partition"
)

// handleSendMessages runs SendMessages (§6.4-6.5): resolve the target,
// authorize, validate the batch, then append through the partition.
func (s *Server) handleSendMessages(c *connection, h *wire.RequestHeader, body []byte) response {
	_, userID, client, _ := c.binding()
	var req wire.SendMessagesRequest
	if err := req.Decode(body); err != nil {
		return deny(wire.ErrResourceNotFound)
	}
	stream, topic, batch := metaID(req.StreamID), metaID(req.TopicID), req.Batch

	// The snapshot is immutable: its topic and partition list can be read
	// without a lock and without copying.
	t, code := s.meta.snapshot().ResolveSend(userID, stream, topic)
	switch code {
	case metadata.CodeOK:
	case metadata.CodeUnauthorized:
		return deny(wire.ErrUnauthorized)
	default:
		return deny(wire.ErrResourceNotFound)
	}
	partitions := t.Partitions
	if len(partitions) == 0 {
		return deny(wire.ErrResourceNotFound)
	}
	var partitionID uint32
	switch req.Partitioning.Kind {
	case wire.PartitioningBalanced:
		partitionID = partitions[s.parts.nextBalanced(t.StreamID, t.ID)%uint32(len(partitions))].ID
	case wire.PartitioningPartitionID:
		partitionID = req.Partitioning.PartitionID
		if !t.HasPartition(partitionID) {
			return deny(wire.ErrResourceNotFound)
		}
	case wire.PartitioningMessagesKey:
		partitionID = partitions[xxh32.Checksum(req.Partitioning.Key)%uint32(len(partitions))].ID
	default:
		return deny(wire.ErrResourceNotFound)
	}
	if err := wire.ValidateSendBatch(batch, req.MessagesCount); err != nil {
		return deny(wire.ErrorCode(wire.BatchErrorCode(err)))
	}
	p, ok := s.parts.get(partKey{t.StreamID, t.ID, partitionID})
	if !ok {
		return deny(wire.ErrTransientNotAccepted)
	}
	s.notePlacement(c, p)
	env := partition.Envelope{UserID: userID, ClientLo: client.Lo, ClientHi: client.Hi, Request: h.Request}
	reply, status := p.send(env, batch)
	if status != wire.ErrorCodeOK {
		return deny(status)
	}
	return response{body: reply}
}

// consumerKey maps a plain consumer to its offset key: a numeric id as is,
// a name by XXH32 (§4.3).
func consumerKey(c wire.Consumer) partition.ConsumerKey {
	id := c.ID.Numeric
	if !c.ID.IsNumeric() {
		id = xxh32.Checksum([]byte(c.ID.Name))
	}
	return partition.ConsumerKey{Kind: uint8(c.Kind), ID: id}
}

// partitionOf is the partition a request names; an absent one is 0.
func partitionOf(p wire.OptionalPartition) uint32 {
	if p.Present {
		return p.ID
	}
	return 0
}

// resolvePartition finds the partition of a plain-consumer request and
// checks the poll permission; the denial codes follow §6.6. It counts the
// request's placement (notePlacement).
func (s *Server) resolvePartition(c *connection, userID uint32, t wire.OffsetTarget) (*partitionRuntime, wire.ErrorCode) {
	partitionID := partitionOf(t.Partition)
	m := s.meta.snapshot()
	_, topic, code := m.ResolveTopic(metaID(t.StreamID), metaID(t.TopicID))
	var key partKey
	allowed := false
	if code == metadata.CodeOK {
		key = partKey{topic.StreamID, topic.ID, partitionID}
		allowed = m.CanPoll(userID, topic.StreamID, topic.ID)
		if !topic.HasPartition(partitionID) {
			code = metadata.CodePartitionNotFound
		}
	}
	if code != metadata.CodeOK {
		return nil, wire.ErrorCode(code)
	}
	if !allowed {
		return nil, wire.ErrUnauthorized
	}
	p, ok := s.parts.get(key)
	if !ok {
		return nil, wire.ErrPartitionNotFound
	}
	s.notePlacement(c, p)
	return p, wire.ErrorCodeOK
}

// emptyPoll is the 16-byte poll reply without messages.
func emptyPoll(dst []byte, partitionID uint32) []byte {
	return (&wire.PolledMessagesHeader{PartitionID: partitionID}).AppendTo(dst)
}

// handlePollMessages runs PollMessages (§6.6); group polls go to
// handleGroupPoll (groups_poll.go).
func (s *Server) handlePollMessages(c *connection, h *wire.RequestHeader, body []byte) response {
	_, userID, _, _ := c.binding()
	var req wire.PollMessagesRequest
	if err := req.Decode(body); err != nil {
		return response{body: emptyPoll(c.scratch[:0], 0)}
	}
	if req.Consumer.Kind == wire.ConsumerKindGroup {
		return s.handleGroupPoll(c, &req)
	}
	target := wire.OffsetTarget{Consumer: req.Consumer, StreamID: req.StreamID, TopicID: req.TopicID, Partition: req.Partition}
	p, code := s.resolvePartition(c, userID, target)
	if code != wire.ErrorCodeOK {
		return deny(code)
	}
	out, status := p.poll(c.scratch[:0], uint8(req.Strategy.Kind), req.Strategy.Value, req.Count, consumerKey(req.Consumer), req.AutoCommit)
	c.scratch = out
	if status != wire.ErrorCodeOK {
		return pollFailure(out, partitionOf(req.Partition), status)
	}
	return response{body: out}
}

// handleGetConsumerOffset runs GetConsumerOffset (120).
func (s *Server) handleGetConsumerOffset(c *connection, body []byte) response {
	_, userID, _, _ := c.binding()
	var req wire.GetConsumerOffsetRequest
	if err := req.Decode(body); err != nil {
		return response{}
	}
	if req.Consumer.Kind == wire.ConsumerKindGroup {
		return s.handleGroupGetOffset(c, &req)
	}
	p, code := s.resolvePartition(c, userID, req.OffsetTarget)
	switch code {
	case wire.ErrorCodeOK:
	case wire.ErrPartitionNotFound, wire.ErrUnauthorized:
		return deny(code)
	default:
		return response{}
	}
	stored, current, ok, status := p.storedOffset(consumerKey(req.Consumer))
	if status != wire.ErrorCodeOK {
		return deny(status)
	}
	if !ok {
		return response{}
	}
	record := wire.ConsumerOffset{PartitionID: partitionOf(req.Partition), CurrentOffset: current, StoredOffset: stored}
	return response{body: record.AppendTo(c.scratch[:0])}
}

// handleStoreConsumerOffset runs StoreConsumerOffset (121).
func (s *Server) handleStoreConsumerOffset(c *connection, h *wire.RequestHeader, body []byte) response {
	var req wire.StoreConsumerOffsetRequest
	if err := req.Decode(body); err != nil {
		return deny(wire.ErrResourceNotFound)
	}
	op := partition.StoreConsumerOffset{Offset: req.Offset, Mode: partition.StoreExplicit}
	return s.offsetWrite(c, h, req.OffsetTarget, partition.OperationStoreConsumerOffset, func(key partition.ConsumerKey, env partition.Envelope) []byte {
		op.Consumer = key
		return op.Encode(env)
	})
}

// handleDeleteConsumerOffset runs DeleteConsumerOffset (122).
func (s *Server) handleDeleteConsumerOffset(c *connection, h *wire.RequestHeader, body []byte) response {
	var req wire.DeleteConsumerOffsetRequest
	if err := req.Decode(body); err != nil {
		return deny(wire.ErrResourceNotFound)
	}
	return s.offsetWrite(c, h, req.OffsetTarget, partition.OperationDeleteConsumerOffset, func(key partition.ConsumerKey, env partition.Envelope) []byte {
		return partition.DeleteConsumerOffset{Consumer: key}.Encode(env)
	})
}

// offsetWrite resolves and applies an offset store or delete; failures are
// denials (§5.7), success is the empty result section.
func (s *Server) offsetWrite(c *connection, h *wire.RequestHeader, t wire.OffsetTarget, operation uint8, encode func(partition.ConsumerKey, partition.Envelope) []byte) response {
	_, userID, client, _ := c.binding()
	if t.Consumer.Kind == wire.ConsumerKindGroup {
		return s.groupOffsetWrite(c, h, t, operation, encode)
	}
	if !t.Partition.Present {
		return deny(wire.ErrResourceNotFound)
	}
	p, code := s.resolvePartition(c, userID, t)
	switch code {
	case wire.ErrorCodeOK:
	case wire.ErrUnauthorized:
		return deny(code)
	default:
		return deny(wire.ErrResourceNotFound)
	}
	env := partition.Envelope{UserID: userID, ClientLo: client.Lo, ClientHi: client.Hi, Request: h.Request}
	if status := p.applyOffset(encode(consumerKey(t.Consumer), env), operation); status != wire.ErrorCodeOK {
		return deny(status)
	}
	return response{body: wire.AppendResultOK(c.scratch[:0])}
}
