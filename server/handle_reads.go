package server

import (
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/metadata"
)

// partitionRecord builds the §4.11.3 record of one partition with its
// counters.
func (s *Server) partitionRecord(streamID, topicID uint32, p metadata.Partition) wire.Partition {
	if rt, ok := s.parts.get(partKey{streamID, topicID, p.ID}); ok {
		current, messages, size, segments := rt.stats()
		return metadata.PartitionRecord(p, uint32(max(segments, 1)), current, size, messages)
	}
	return metadata.PartitionRecord(p, 1, 0, 0, 0)
}

// topicDetails builds the TopicDetails record of t with its counters; the
// caller holds the metadata lock.
func (s *Server) topicDetails(t *metadata.Topic) wire.TopicDetails {
	var partitions []wire.Partition
	var size, messages uint64
	for _, p := range t.Partitions {
		record := s.partitionRecord(t.StreamID, t.ID, p)
		size += record.SizeBytes
		messages += record.MessagesCount
		partitions = append(partitions, record)
	}
	return wire.TopicDetails{TopicHeader: metadata.TopicHeaderRecord(t, size, messages), Partitions: partitions}
}

// topicHeader builds the TopicHeader of t with its counters.
func (s *Server) topicHeader(t *metadata.Topic) wire.TopicHeader {
	return s.topicDetails(t).TopicHeader
}

// streamDetails builds the StreamDetails record of st with its counters;
// the caller holds the metadata lock.
func (s *Server) streamDetails(st *metadata.Stream) wire.StreamDetails {
	var topics []wire.TopicHeader
	var size, messages uint64
	for _, t := range st.Topics() {
		header := s.topicHeader(t)
		size += header.SizeBytes
		messages += header.MessagesCount
		topics = append(topics, header)
	}
	return wire.StreamDetails{Stream: metadata.StreamRecord(st, size, messages), Topics: topics}
}

// encodeOr3 answers with an encoded record, or denies when it does not
// encode.
func (s *Server) encodeOr3(body []byte, err error) response {
	if err != nil {
		return deny(wire.ErrCannotSerializeResource)
	}
	return response{body: body}
}

// handleGetStream runs GetStream (200).
func (s *Server) handleGetStream(c *connection, body []byte) response {
	_, userID, _, _ := c.binding()
	var req wire.GetStreamRequest
	if err := req.Decode(body); err != nil {
		return deny(wire.ErrInvalidCommand)
	}
	m := s.meta.snapshot()
	st := m.Stream(metaID(req.StreamID))
	if st == nil {
		return response{}
	}
	if !m.CanReadStream(userID, st.ID) {
		return deny(wire.ErrUnauthorized)
	}
	details := s.streamDetails(st)
	return s.encodeOr3(details.AppendTo(c.scratch[:0]))
}

// handleGetStreams runs GetStreams (201).
func (s *Server) handleGetStreams(c *connection) response {
	_, userID, _, _ := c.binding()
	m := s.meta.snapshot()
	if !m.CanReadStreams(userID) {
		return deny(wire.ErrUnauthorized)
	}
	var streams []wire.Stream
	for _, st := range m.Streams() {
		streams = append(streams, s.streamDetails(st).Stream)
	}
	return s.encodeOr3(wire.AppendStreams(c.scratch[:0], streams))
}

// handleGetTopic runs GetTopic (300).
func (s *Server) handleGetTopic(c *connection, body []byte) response {
	_, userID, _, _ := c.binding()
	var req wire.GetTopicRequest
	if err := req.Decode(body); err != nil {
		return deny(wire.ErrInvalidCommand)
	}
	m := s.meta.snapshot()
	_, t, code := m.ResolveTopic(metaID(req.StreamID), metaID(req.TopicID))
	if code != metadata.CodeOK {
		return response{}
	}
	if !m.CanReadTopic(userID, t.StreamID, t.ID) {
		return deny(wire.ErrUnauthorized)
	}
	details := s.topicDetails(t)
	return s.encodeOr3(details.AppendTo(c.scratch[:0]))
}

// handleGetTopics runs GetTopics (301): `[count u32]` + headers.
func (s *Server) handleGetTopics(c *connection, body []byte) response {
	_, userID, _, _ := c.binding()
	var req wire.GetTopicsRequest
	if err := req.Decode(body); err != nil {
		return deny(wire.ErrInvalidCommand)
	}
	m := s.meta.snapshot()
	st := m.Stream(metaID(req.StreamID))
	if st == nil {
		return s.encodeOr3(wire.AppendTopicList(c.scratch[:0], nil))
	}
	if !m.CanReadTopics(userID, st.ID) {
		return deny(wire.ErrUnauthorized)
	}
	var headers []wire.TopicHeader
	for _, t := range st.Topics() {
		headers = append(headers, s.topicHeader(t))
	}
	return s.encodeOr3(wire.AppendTopicList(c.scratch[:0], headers))
}

// handleGetUser runs GetUser (31).
func (s *Server) handleGetUser(c *connection, body []byte) response {
	_, userID, _, _ := c.binding()
	var req wire.GetUserRequest
	if err := req.Decode(body); err != nil {
		return deny(wire.ErrInvalidCommand)
	}
	m := s.meta.snapshot()
	if !m.CanReadUsers(userID) {
		return deny(wire.ErrUnauthorized)
	}
	u := m.User(metaID(req.UserID))
	if u == nil {
		return response{}
	}
	details := metadata.UserDetailsRecord(u)
	return s.encodeOr3(details.AppendTo(c.scratch[:0]))
}

// handleGetUsers runs GetUsers (32).
func (s *Server) handleGetUsers(c *connection) response {
	_, userID, _, _ := c.binding()
	m := s.meta.snapshot()
	if !m.CanReadUsers(userID) {
		return deny(wire.ErrUnauthorized)
	}
	var users []wire.User
	for _, u := range m.Users() {
		users = append(users, metadata.UserRecord(u))
	}
	return s.encodeOr3(wire.AppendUsers(c.scratch[:0], users))
}

// handleGetPersonalAccessTokens runs GetPersonalAccessTokens (41): the
// caller's own tokens.
func (s *Server) handleGetPersonalAccessTokens(c *connection) response {
	_, userID, _, _ := c.binding()
	m := s.meta.snapshot()
	var tokens []wire.PersonalAccessTokenInfo
	for _, t := range m.Tokens(userID) {
		tokens = append(tokens, metadata.TokenRecord(&t))
	}
	return s.encodeOr3(wire.AppendPersonalAccessTokens(c.scratch[:0], tokens))
}
