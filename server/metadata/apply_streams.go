package metadata

func (m *Machine) findStream(id Identifier) *Stream {
	if id.Numeric {
		return m.streams[id.ID]
	}
	sid, ok := m.streamNames[id.Name]
	if !ok {
		return nil
	}
	return m.streams[sid]
}

// managedStream resolves a stream the envelope's user may manage, or
// returns 1009 / 1 (unauthorized), checked in that order.
func (m *Machine) managedStream(env Envelope, id Identifier) (*Stream, Code) {
	s := m.findStream(id)
	if s == nil {
		return nil, CodeStreamIDNotFound
	}
	if !m.allowed(env.UserID, func(p *Permissions) bool { return p.CanManageStream(s.ID) }) {
		return nil, CodeUnauthorized
	}
	return s, CodeOK
}

func (m *Machine) createStream(env Envelope, timestamp uint64, o *CreateStream) ([]byte, Code) {
	if !m.allowed(env.UserID, (*Permissions).CanCreateStream) {
		return nil, CodeUnauthorized
	}
	if _, taken := m.streamNames[o.Name]; taken {
		return nil, CodeStreamNameAlreadyExists
	}
	id, ok := lowestFreeID(m.streams, streamsMax)
	if !ok {
		return nil, CodeTooManyStreams
	}
	s := newStream(id, o.Name, timestamp)
	m.streams[id] = s
	m.streamNames[s.Name] = id
	m.emit(Effect{Kind: EffectStreamCreated, StreamID: id})
	stream := StreamRecord(s, 0, 0)
	return appendRecord(nil, &stream), CodeOK
}

func (m *Machine) updateStream(env Envelope, o *UpdateStream) Code {
	s, code := m.managedStream(env, o.Stream)
	if code != CodeOK {
		return code
	}
	if other, taken := m.streamNames[o.Name]; taken && other != s.ID {
		return CodeStreamNameAlreadyExists
	}
	delete(m.streamNames, s.Name)
	s.Name = o.Name
	m.streamNames[s.Name] = s.ID
	return CodeOK
}

func (m *Machine) deleteStream(env Envelope, o *DeleteStream) Code {
	s, code := m.managedStream(env, o.Stream)
	if code != CodeOK {
		return code
	}
	for _, t := range s.Topics() {
		m.emit(Effect{Kind: EffectTopicDeleted, StreamID: s.ID, TopicID: t.ID, PartitionIDs: t.partitionIDs()})
	}
	m.emit(Effect{Kind: EffectStreamDeleted, StreamID: s.ID})
	delete(m.streamNames, s.Name)
	delete(m.streams, s.ID)
	return CodeOK
}

func (m *Machine) purgeStream(env Envelope, o *PurgeStream) Code {
	s, code := m.managedStream(env, o.Stream)
	if code != CodeOK {
		return code
	}
	for _, t := range s.Topics() {
		m.emit(Effect{Kind: EffectTopicPurged, StreamID: s.ID, TopicID: t.ID, PartitionIDs: t.partitionIDs()})
	}
	return CodeOK
}
