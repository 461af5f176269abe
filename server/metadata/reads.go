package metadata

// Read helpers for the server. They never change state and are not
// operations; results point into the applied state, are read-only, and stay
// valid until the next Apply or Restore.

// Stream returns the stream id names, or nil.
func (m *Machine) Stream(id Identifier) *Stream { return m.findStream(id) }

// Streams returns every stream in ascending id order.
func (m *Machine) Streams() []*Stream {
	out := make([]*Stream, 0, len(m.streams))
	for _, id := range sortedKeys(m.streams) {
		out = append(out, m.streams[id])
	}
	return out
}

// Topic returns the topic of s that id names, or nil.
func (s *Stream) Topic(id Identifier) *Topic { return s.findTopic(id) }

// ResolveTopic finds a stream and one of its topics. code is
// CodeStreamIDNotFound or CodeTopicIDNotFound when either is missing.
func (m *Machine) ResolveTopic(stream, topic Identifier) (*Stream, *Topic, Code) {
	return m.resolveTopic(stream, topic)
}

// ResolveSend resolves the target topic of a SendMessages for userID:
// CodeResourceNotFound (Deny 20) when the stream or topic is missing,
// CodeUnauthorized (Deny 41) without send permission (§5.7, §6.5). The
// server then picks the partition (by id, round robin or key) among
// t.Partitions.
func (m *Machine) ResolveSend(userID uint32, stream, topic Identifier) (*Topic, Code) {
	_, t, code := m.resolveTopic(stream, topic)
	if code != CodeOK {
		return nil, CodeResourceNotFound
	}
	if !m.CanSend(userID, t.StreamID, t.ID) {
		return nil, CodeUnauthorized
	}
	return t, CodeOK
}

// User returns the user id names (numeric id or username), or nil.
func (m *Machine) User(id Identifier) *User { return m.findUser(id) }

// UserByName returns the user called username, or nil.
func (m *Machine) UserByName(username string) *User {
	id, ok := m.userNames[username]
	if !ok {
		return nil
	}
	return m.users[id]
}

// Users returns every user in ascending id order.
func (m *Machine) Users() []*User {
	out := make([]*User, 0, len(m.users))
	for _, id := range sortedKeys(m.users) {
		out = append(out, m.users[id])
	}
	return out
}

// Tokens returns the personal access tokens of userID in creation order
// (nil for an unknown user).
func (m *Machine) Tokens(userID uint32) []Token {
	u := m.users[userID]
	if u == nil {
		return nil
	}
	return append([]Token(nil), u.Tokens...)
}

// TokenByHash finds the token whose hash is hash and its owner. Expiry is
// the caller's to check against its clock (ExpiryAt 0 = never).
func (m *Machine) TokenByHash(hash string) (*User, *Token) {
	id, ok := m.tokenHashes[hash]
	if !ok {
		return nil, nil
	}
	u := m.users[id]
	if u == nil {
		return nil, nil
	}
	i := -1
	for j := range u.Tokens {
		if u.Tokens[j].Hash == hash {
			i = j
			break
		}
	}
	if i < 0 {
		return nil, nil
	}
	return u, &u.Tokens[i]
}

// Counts returns the numbers of streams, topics and partitions (GetStats).
func (m *Machine) Counts() (streams, topics, partitions int) {
	for _, s := range m.streams {
		topics += len(s.topics)
		for _, t := range s.topics {
			partitions += len(t.Partitions)
		}
	}
	return len(m.streams), topics, partitions
}

// The Can* reads apply a §5.9 rule to userID (root passes every rule).

// CanReadServers: GetStats, GetClients, GetClient, GetSnapshot (§5.9).
func (m *Machine) CanReadServers(userID uint32) bool {
	return m.allowed(userID, (*Permissions).CanReadServers)
}

// CanReadUsers: GetUser, GetUsers.
func (m *Machine) CanReadUsers(userID uint32) bool {
	return m.allowed(userID, (*Permissions).CanReadUsers)
}

// CanReadStreams: GetStreams.
func (m *Machine) CanReadStreams(userID uint32) bool {
	return m.allowed(userID, (*Permissions).CanReadStreams)
}

// CanReadStream: GetStream.
func (m *Machine) CanReadStream(userID, streamID uint32) bool {
	return m.allowed(userID, func(p *Permissions) bool { return p.CanReadStream(streamID) })
}

// CanReadTopics: GetTopics and the consumer-group reads.
func (m *Machine) CanReadTopics(userID, streamID uint32) bool {
	return m.allowed(userID, func(p *Permissions) bool { return p.CanReadTopics(streamID) })
}

// CanReadTopic: GetTopic.
func (m *Machine) CanReadTopic(userID, streamID, topicID uint32) bool {
	return m.allowed(userID, func(p *Permissions) bool { return p.CanReadTopic(streamID, topicID) })
}

// CanPoll: PollMessages, GetConsumerOffset, StoreConsumerOffset,
// DeleteConsumerOffset.
func (m *Machine) CanPoll(userID, streamID, topicID uint32) bool {
	return m.allowed(userID, func(p *Permissions) bool { return p.CanPoll(streamID, topicID) })
}

// CanSend: SendMessages.
func (m *Machine) CanSend(userID, streamID, topicID uint32) bool {
	return m.allowed(userID, func(p *Permissions) bool { return p.CanSend(streamID, topicID) })
}
