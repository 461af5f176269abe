package server

import (
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/metadata"
)

// metaClient maps a protocol client id to the metadata machine's.
func metaClient(c wire.Uint128) metadata.ClientID { return metadata.ClientID{Lo: c.Lo, Hi: c.Hi} }

// groupReadDenial maps a stream/topic resolution failure of a group read
// to its Deny status (§5.8: 1009 / 2010).
func groupReadDenial(code metadata.Code) wire.ErrorCode { return wire.ErrorCode(code) }

// handleGetConsumerGroup runs GetConsumerGroup (600): ConsumerGroupDetails,
// or an empty body for an unknown group.
func (s *Server) handleGetConsumerGroup(c *connection, body []byte) response {
	_, userID, _, _ := c.binding()
	var req wire.GetConsumerGroupRequest
	if err := req.Decode(body); err != nil {
		return deny(decodeDenial(err))
	}
	s.meta.mu.RLock()
	view := s.meta.snapshot()
	defer s.meta.mu.RUnlock()
	_, t, code := view.ResolveTopic(metaID(req.StreamID), metaID(req.TopicID))
	if code != metadata.CodeOK {
		return deny(groupReadDenial(code))
	}
	if !view.CanReadTopic(userID, t.StreamID, t.ID) {
		return deny(wire.ErrUnauthorized)
	}
	g := t.Group(metaID(req.GroupID))
	if g == nil {
		return response{}
	}
	return response{body: metadata.AppendConsumerGroupDetails(c.scratch[:0], t, g)}
}

// handleGetConsumerGroups runs GetConsumerGroups (601): every group of the
// topic in ascending id order, no count.
func (s *Server) handleGetConsumerGroups(c *connection, body []byte) response {
	_, userID, _, _ := c.binding()
	var req wire.GetConsumerGroupsRequest
	if err := req.Decode(body); err != nil {
		return deny(decodeDenial(err))
	}
	s.meta.mu.RLock()
	view := s.meta.snapshot()
	defer s.meta.mu.RUnlock()
	_, t, code := view.ResolveTopic(metaID(req.StreamID), metaID(req.TopicID))
	if code != metadata.CodeOK {
		return deny(groupReadDenial(code))
	}
	if !view.CanReadTopic(userID, t.StreamID, t.ID) {
		return deny(wire.ErrUnauthorized)
	}
	return response{body: metadata.AppendConsumerGroups(c.scratch[:0], t)}
}

// handleSyncConsumerGroup runs SyncConsumerGroup (606): the caller's
// generation and pollable partitions, or an empty body when it is not a
// member. Hand-offs of the group that ran past the rebalancing timeout
// are completed first, so a waiting member sees its partition.
func (s *Server) handleSyncConsumerGroup(c *connection, body []byte) response {
	_, _, client, _ := c.binding()
	var req wire.SyncConsumerGroupRequest
	if err := req.Decode(body); err != nil {
		return deny(decodeDenial(err))
	}
	target := groupTarget{stream: metaID(req.StreamID), topic: metaID(req.TopicID), group: metaID(req.GroupID)}
	s.completeDueHandOffs(&target)
	s.meta.mu.RLock()
	defer s.meta.mu.RUnlock()
	_, t, code := s.meta.snapshot().ResolveTopic(target.stream, target.topic)
	if code != metadata.CodeOK {
		return response{}
	}
	g := t.Group(target.group)
	if g == nil {
		return response{}
	}
	generation, partitions, ok := g.Sync(metaClient(client))
	if !ok {
		return response{}
	}
	reply := wire.SyncConsumerGroupReply{Generation: generation, Partitions: partitions}
	return response{body: reply.AppendTo(c.scratch[:0])}
}

// groupTarget names a group by the request's identifiers.
type groupTarget struct {
	stream, topic, group metadata.Identifier
}

// prepareGroupWrite decodes a consumer-group write (602-605) into its
// operation. Join carries the partitions with polled but uncommitted
// data, which the cooperative rebalance hands off instead of moving.
func (s *Server) prepareGroupWrite(operation wire.Operation, body []byte) (metadata.Op, wire.ErrorCode) {
	switch operation {
	case wire.OpCreateConsumerGroup:
		var req wire.CreateConsumerGroupRequest
		if err := req.Decode(body); err != nil {
			return nil, decodeDenial(err)
		}
		return &metadata.CreateConsumerGroup{Stream: metaID(req.StreamID), Topic: metaID(req.TopicID), Name: req.Name}, wire.ErrorCodeOK
	case wire.OpDeleteConsumerGroup:
		var req wire.DeleteConsumerGroupRequest
		if err := req.Decode(body); err != nil {
			return nil, decodeDenial(err)
		}
		return &metadata.DeleteConsumerGroup{Stream: metaID(req.StreamID), Topic: metaID(req.TopicID), Group: metaID(req.GroupID)}, wire.ErrorCodeOK
	case wire.OpJoinConsumerGroup:
		var req wire.JoinConsumerGroupRequest
		if err := req.Decode(body); err != nil {
			return nil, decodeDenial(err)
		}
		target := groupTarget{stream: metaID(req.StreamID), topic: metaID(req.TopicID), group: metaID(req.GroupID)}
		return &metadata.JoinConsumerGroup{Stream: target.stream, Topic: target.topic, Group: target.group,
			InFlight: s.inFlightPartitions(target)}, wire.ErrorCodeOK
	case wire.OpLeaveConsumerGroup:
		var req wire.LeaveConsumerGroupRequest
		if err := req.Decode(body); err != nil {
			return nil, decodeDenial(err)
		}
		return &metadata.LeaveConsumerGroup{Stream: metaID(req.StreamID), Topic: metaID(req.TopicID), Group: metaID(req.GroupID)}, wire.ErrorCodeOK
	}
	return nil, wire.ErrInvalidCommand
}

// handleGroupWrite runs a consumer-group write (602-605) like every other
// metadata write: decode, then deduplicate and sequence under the
// metadata lock. The member of a join or leave is the caller's bound
// client id (the envelope's). A committed delete drops the group's
// offsets through its EffectConsumerGroupDeleted (partitions.go).
func (s *Server) handleGroupWrite(c *connection, h *wire.RequestHeader, body []byte) response {
	_, userID, client, session := c.binding()
	if h.Operation == wire.OpJoinConsumerGroup {
		// No group poll may pass its fence between the in-flight
		// computation and the commit of the join (lock order: groupPollMu,
		// then the metadata lock).
		s.groupPollMu.Lock()
		defer s.groupPollMu.Unlock()
	}
	o, status := s.prepareGroupWrite(h.Operation, body)
	if status != wire.ErrorCodeOK {
		return deny(status)
	}
	env := metadata.Envelope{UserID: userID, ClientLo: client.Lo, ClientHi: client.Hi, Request: h.Request}
	encoded := metadata.EncodeOp(env, o)

	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	return s.sequenceLocked(h, client, session, encoded, nil, nil)
}

// submitInternalLocked sequences an internal metadata operation (member
// removal, hand-off completion) issued by the server itself. The caller
// holds the metadata lock for writing.
func (s *Server) submitInternalLocked(o metadata.Op) (metadata.Code, error) {
	_, reply, err := s.meta.submitLocked(o.Operation(), metadata.EncodeOp(metadata.Envelope{UserID: metadata.RootUserID}, o))
	if err != nil {
		return 0, err
	}
	code, _ := metadata.ReplyCode(reply)
	return code, nil
}
