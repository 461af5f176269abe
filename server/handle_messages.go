package server

import (
	"encoding/binary"
	"sort"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/net/xxh32"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/server/partition"
)

// Partitioning kinds of a send (PROTOCOL.md §4.4).
const (
	partitioningBalanced    = 1
	partitioningPartitionID = 2
	partitioningMessagesKey = 3
)

// Consumer kinds (§4.3).
const (
	consumerKindConsumer = 1
	consumerKindGroup    = 2
)

// handleSendMessages runs SendMessages (§6.4-6.5): resolve the target,
// authorize, validate the batch, then append through the partition.
func (s *Server) handleSendMessages(c *connection, h *wire.RequestHeader, body []byte) response {
	_, userID, client, _ := c.binding()
	r := reader{buf: body}
	metadataLength := int(r.u32())
	metaEnd := 4 + metadataLength
	stream, topic := r.identifier(), r.identifier()
	kind := r.u8()
	valueLength := int(r.u8())
	value := r.take(valueLength)
	messagesCount := r.u32()
	if r.err != nil || r.off != metaEnd {
		return deny(wire.ErrResourceNotFound)
	}
	batch := body[metaEnd:]

	s.meta.mu.RLock()
	t, code := s.meta.machine.ResolveSend(userID, stream, topic)
	var streamID, topicID uint32
	var partitionIDs []uint32
	if code == metadata.CodeOK {
		streamID, topicID = t.StreamID, t.ID
		partitionIDs = make([]uint32, len(t.Partitions))
		for i, p := range t.Partitions {
			partitionIDs[i] = p.ID
		}
	}
	s.meta.mu.RUnlock()
	switch code {
	case metadata.CodeOK:
	case metadata.CodeUnauthorized:
		return deny(wire.ErrUnauthorized)
	default:
		return deny(wire.ErrResourceNotFound)
	}
	if len(partitionIDs) == 0 {
		return deny(wire.ErrResourceNotFound)
	}
	var partitionID uint32
	switch kind {
	case partitioningBalanced:
		partitionID = partitionIDs[s.parts.nextBalanced(streamID, topicID)%uint32(len(partitionIDs))]
	case partitioningPartitionID:
		if valueLength != 4 {
			return deny(wire.ErrResourceNotFound)
		}
		partitionID = binary.LittleEndian.Uint32(value)
		i := sort.Search(len(partitionIDs), func(i int) bool { return partitionIDs[i] >= partitionID })
		if i == len(partitionIDs) || partitionIDs[i] != partitionID {
			return deny(wire.ErrResourceNotFound)
		}
	case partitioningMessagesKey:
		if valueLength == 0 {
			return deny(wire.ErrResourceNotFound)
		}
		partitionID = partitionIDs[xxh32.Checksum(value)%uint32(len(partitionIDs))]
	default:
		return deny(wire.ErrResourceNotFound)
	}
	if err := wire.ValidateBatch(batch, messagesCount); err != nil {
		return deny(wire.ErrorCode(wire.BatchErrorCode(err)))
	}
	p, ok := s.parts.get(partKey{streamID, topicID, partitionID})
	if !ok {
		return deny(wire.ErrTransientNotAccepted)
	}
	env := partition.Envelope{UserID: userID, ClientLo: client.Lo, ClientHi: client.Hi, Request: h.Request}
	reply, status := p.send(env, batch)
	if status != wire.ErrorCodeOK {
		return deny(status)
	}
	return response{body: reply}
}

// consumerTarget is the decoded head shared by poll and offset requests:
// Consumer, stream, topic, [has_partition u8][partition_id u32].
type consumerTarget struct {
	consumerKind uint8
	consumerID   metadata.Identifier
	stream       metadata.Identifier
	topic        metadata.Identifier
	hasPartition bool
	partitionID  uint32
}

// readConsumerTarget decodes a consumerTarget.
func readConsumerTarget(r *reader) consumerTarget {
	var t consumerTarget
	t.consumerKind = r.u8()
	t.consumerID = r.identifier()
	t.stream = r.identifier()
	t.topic = r.identifier()
	t.hasPartition = r.u8() == 1
	t.partitionID = r.u32()
	if r.err == nil && t.consumerKind != consumerKindConsumer && t.consumerKind != consumerKindGroup {
		r.err = errMalformed
	}
	return t
}

// consumerKey maps a plain consumer to its offset key: a numeric id as is,
// a name by XXH32.
func (t consumerTarget) consumerKey() partition.ConsumerKey {
	id := t.consumerID.ID
	if !t.consumerID.Numeric {
		id = xxh32.Checksum([]byte(t.consumerID.Name))
	}
	return partition.ConsumerKey{Kind: t.consumerKind, ID: id}
}

// resolvePartition finds the partition of a plain-consumer request and
// checks the poll permission; the denial codes follow §6.6.
func (s *Server) resolvePartition(userID uint32, t consumerTarget) (*partitionRuntime, wire.ErrorCode) {
	s.meta.mu.RLock()
	_, topic, code := s.meta.machine.ResolveTopic(t.stream, t.topic)
	var key partKey
	allowed := false
	if code == metadata.CodeOK {
		key = partKey{topic.StreamID, topic.ID, t.partitionID}
		allowed = s.meta.machine.CanPoll(userID, topic.StreamID, topic.ID)
		if !topic.HasPartition(t.partitionID) {
			code = metadata.CodePartitionNotFound
		}
	}
	s.meta.mu.RUnlock()
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
	return p, wire.ErrorCodeOK
}

// emptyPoll is the 16-byte poll reply without messages.
func emptyPoll(dst []byte, partitionID uint32) []byte {
	return (&wire.PolledMessagesHeader{PartitionID: partitionID}).AppendTo(dst)
}

// handlePollMessages runs PollMessages (§6.6) for plain consumers. Group
// polls answer the re-sync fence until consumer groups arrive.
func (s *Server) handlePollMessages(c *connection, h *wire.RequestHeader, body []byte) response {
	_, userID, _, _ := c.binding()
	r := reader{buf: body}
	t := readConsumerTarget(&r)
	strategy := r.u8()
	value := r.u64()
	count := r.u32()
	autoCommit := r.u8() != 0
	if r.done() != nil || strategy < partition.StrategyOffset || strategy > partition.StrategyNext {
		return response{body: emptyPoll(c.scratch[:0], 0)}
	}
	if t.consumerKind == consumerKindGroup {
		return response{body: emptyPoll(c.scratch[:0], wire.PartitionIDResync)}
	}
	if !t.hasPartition {
		t.partitionID = 0
	}
	p, code := s.resolvePartition(userID, t)
	if code != wire.ErrorCodeOK {
		return deny(code)
	}
	out, status := p.poll(c.scratch[:0], strategy, value, count, t.consumerKey(), autoCommit)
	c.scratch = out
	if status != wire.ErrorCodeOK {
		return response{body: emptyPoll(out[:0], t.partitionID)}
	}
	return response{body: out}
}

// handleGetConsumerOffset runs GetConsumerOffset (120).
func (s *Server) handleGetConsumerOffset(c *connection, body []byte) response {
	_, userID, _, _ := c.binding()
	r := reader{buf: body}
	t := readConsumerTarget(&r)
	if r.done() != nil || t.consumerKind == consumerKindGroup {
		return response{}
	}
	if !t.hasPartition {
		t.partitionID = 0
	}
	p, code := s.resolvePartition(userID, t)
	switch code {
	case wire.ErrorCodeOK:
	case wire.ErrPartitionNotFound, wire.ErrUnauthorized:
		return deny(code)
	default:
		return response{}
	}
	stored, current, ok := p.storedOffset(t.consumerKey())
	if !ok {
		return response{}
	}
	record := wire.ConsumerOffset{PartitionID: t.partitionID, CurrentOffset: current, StoredOffset: stored}
	return response{body: record.AppendTo(c.scratch[:0])}
}

// handleStoreConsumerOffset runs StoreConsumerOffset (121).
func (s *Server) handleStoreConsumerOffset(c *connection, h *wire.RequestHeader, body []byte) response {
	r := reader{buf: body}
	t := readConsumerTarget(&r)
	offset := r.u64()
	ack := r.u8()
	if r.done() != nil || ack > 1 {
		return deny(wire.ErrResourceNotFound)
	}
	op := partition.StoreConsumerOffset{Offset: offset, Mode: partition.StoreExplicit}
	return s.offsetWrite(c, h, t, partition.OperationStoreConsumerOffset, func(key partition.ConsumerKey, env partition.Envelope) []byte {
		op.Consumer = key
		return op.Encode(env)
	})
}

// handleDeleteConsumerOffset runs DeleteConsumerOffset (122).
func (s *Server) handleDeleteConsumerOffset(c *connection, h *wire.RequestHeader, body []byte) response {
	r := reader{buf: body}
	t := readConsumerTarget(&r)
	ack := r.u8()
	if r.done() != nil || ack > 1 {
		return deny(wire.ErrResourceNotFound)
	}
	return s.offsetWrite(c, h, t, partition.OperationDeleteConsumerOffset, func(key partition.ConsumerKey, env partition.Envelope) []byte {
		return partition.DeleteConsumerOffset{Consumer: key}.Encode(env)
	})
}

// offsetWrite resolves and applies an offset store or delete; failures are
// denials (§5.7), success is the empty result section.
func (s *Server) offsetWrite(c *connection, h *wire.RequestHeader, t consumerTarget, operation uint8, encode func(partition.ConsumerKey, partition.Envelope) []byte) response {
	_, userID, client, _ := c.binding()
	if !t.hasPartition || t.consumerKind == consumerKindGroup {
		return deny(wire.ErrResourceNotFound)
	}
	p, code := s.resolvePartition(userID, t)
	switch code {
	case wire.ErrorCodeOK:
	case wire.ErrUnauthorized:
		return deny(code)
	default:
		return deny(wire.ErrResourceNotFound)
	}
	env := partition.Envelope{UserID: userID, ClientLo: client.Lo, ClientHi: client.Hi, Request: h.Request}
	if status := p.applyOffset(encode(t.consumerKey(), env), operation); status != wire.ErrorCodeOK {
		return deny(status)
	}
	return response{body: wire.AppendResultOK(c.scratch[:0])}
}
