package metadata

import "github.com/stratabroker/strata/net/wire"

func (s *Stream) findTopic(id Identifier) *Topic {
	if id.Numeric {
		return s.topics[id.ID]
	}
	tid, ok := s.topicNames[id.Name]
	if !ok {
		return nil
	}
	return s.topics[tid]
}

// resolveTopic finds the stream and topic or returns 1009 / 2010.
func (m *Machine) resolveTopic(stream, topic Identifier) (*Stream, *Topic, Code) {
	s := m.findStream(stream)
	if s == nil {
		return nil, nil, CodeStreamIDNotFound
	}
	t := s.findTopic(topic)
	if t == nil {
		return s, nil, CodeTopicIDNotFound
	}
	return s, t, CodeOK
}

// managedTopic resolves a topic the envelope's user may manage, or returns
// 1009 / 2010 / 1 (unauthorized), checked in that order.
func (m *Machine) managedTopic(env Envelope, stream, topic Identifier) (*Stream, *Topic, Code) {
	s, t, code := m.resolveTopic(stream, topic)
	if code != CodeOK {
		return nil, nil, code
	}
	if !m.allowed(env.UserID, func(p *Permissions) bool { return p.CanManageTopic(s.ID, t.ID) }) {
		return nil, nil, CodeUnauthorized
	}
	return s, t, CodeOK
}

func validCompression(c uint8) bool { return c == CompressionNone || c == CompressionGzip }

// validTopicOptions checks the resolved options Apply can verify from the
// operation alone (the server has already parsed and range-checked them).
func validTopicOptions(o *TopicOptions, partitionsCount uint32) bool {
	if !validCompression(o.CompressionAlgorithm) {
		return false
	}
	if o.PreallocateSegments && o.SegmentSizeBytes != 0 &&
		uint64(partitionsCount) > preallocatedBytesMax/o.SegmentSizeBytes {
		return false
	}
	return true
}

// capBelowSegment reports whether a max_topic_size value is a real cap
// below the segment size (1019).
// orNever resolves the server default 0 of message_expiry and
// max_topic_size to NeverExpires.
func orNever(v uint64) uint64 {
	if v == 0 {
		return NeverExpires
	}
	return v
}

func capBelowSegment(maxTopicSizeBytes, segmentSizeBytes uint64) bool {
	return maxTopicSizeBytes != 0 && maxTopicSizeBytes != NeverExpires && maxTopicSizeBytes < segmentSizeBytes
}

func (m *Machine) createTopic(env Envelope, timestamp uint64, o *CreateTopic) ([]byte, Code) {
	s := m.findStream(o.Stream)
	if s == nil {
		return nil, CodeStreamIDNotFound
	}
	if !m.allowed(env.UserID, func(p *Permissions) bool { return p.CanCreateTopic(s.ID) }) {
		return nil, CodeUnauthorized
	}
	if _, taken := s.topicNames[o.Name]; taken {
		return nil, CodeTopicNameAlreadyExists
	}
	id, ok := lowestFreeID(s.topics, topicsPerStreamMax)
	if !ok {
		return nil, CodeTooManyTopics
	}
	if o.PartitionsCount > partitionsPerRequestMax {
		return nil, CodeTooManyPartitions
	}
	if !validTopicOptions(&o.Options, o.PartitionsCount) {
		return nil, CodeInvalidOptionValue
	}
	if capBelowSegment(o.Options.MaxTopicSizeBytes, o.Options.SegmentSizeBytes) {
		return nil, CodeInvalidTopicSize
	}
	if _, err := parseOptions(o.ExplicitOptions); err != nil {
		return nil, CodeInvalidOptionValue
	}
	if _, err := parseOptions(o.DerivedOptions); err != nil {
		return nil, CodeInvalidOptionValue
	}
	firstGroup, ok := m.takeConsensusGroups(o.PartitionsCount)
	if !ok {
		return nil, CodePartitionIDSpaceExhausted
	}
	t := &Topic{
		ID: id, StreamID: s.ID, Name: o.Name, CreatedAt: timestamp, Options: o.Options,
		ExplicitOptions: o.ExplicitOptions, DerivedOptions: o.DerivedOptions,
	}
	t.Partitions = make([]Partition, o.PartitionsCount)
	for i := range t.Partitions {
		t.Partitions[i] = Partition{ID: uint32(i), CreatedAt: timestamp, ConsensusGroup: firstGroup + uint64(i)}
	}
	s.topics[id] = t
	s.topicNames[t.Name] = id
	m.emit(Effect{Kind: EffectTopicCreated, StreamID: s.ID, TopicID: id, PartitionIDs: t.partitionIDs()})
	header := TopicHeaderRecord(t, 0, 0)
	payload := appendRecord(nil, &header)
	for _, p := range t.Partitions {
		record := PartitionRecord(p, 0, 0, 0, 0)
		payload = record.AppendTo(payload)
	}
	return payload, CodeOK
}

func (m *Machine) updateTopic(env Envelope, o *UpdateTopic) Code {
	s, t, code := m.managedTopic(env, o.Stream, o.Topic)
	if code != CodeOK {
		return code
	}
	if other, taken := s.topicNames[o.Name]; taken && other != t.ID {
		return CodeTopicNameAlreadyExists
	}
	if o.SetCompression && !validCompression(o.CompressionAlgorithm) {
		return CodeInvalidOptionValue
	}
	if o.SetMaxTopicSize && capBelowSegment(o.MaxTopicSizeBytes, t.Options.SegmentSizeBytes) {
		return CodeInvalidTopicSize
	}
	// The block as sent says which keys stay explicit and which were reset
	// to the server default (net/wire's rule, the same on every replica).
	sent, err := parseOptions(o.Options)
	if err != nil {
		return CodeInvalidOptionValue
	}
	setExplicit, setDerived := wire.SplitTopicUpdate(sent)
	explicit, derived, err := patchOptions(t.ExplicitOptions, t.DerivedOptions, setExplicit, setDerived)
	if err != nil {
		return CodeInvalidOptionValue
	}
	delete(s.topicNames, t.Name)
	t.Name = o.Name
	s.topicNames[t.Name] = t.ID
	if o.SetCompression {
		t.Options.CompressionAlgorithm = o.CompressionAlgorithm
	}
	// 0 is the server default, which is never / unlimited (as at create).
	if o.SetMessageExpiry {
		t.Options.MessageExpiryMicros = orNever(o.MessageExpiryMicros)
	}
	if o.SetMaxTopicSize {
		t.Options.MaxTopicSizeBytes = orNever(o.MaxTopicSizeBytes)
	}
	t.ExplicitOptions, t.DerivedOptions = explicit, derived
	m.emit(Effect{Kind: EffectTopicUpdated, StreamID: s.ID, TopicID: t.ID})
	return CodeOK
}

func (m *Machine) deleteTopic(env Envelope, o *DeleteTopic) Code {
	s, t, code := m.managedTopic(env, o.Stream, o.Topic)
	if code != CodeOK {
		return code
	}
	m.emit(Effect{Kind: EffectTopicDeleted, StreamID: s.ID, TopicID: t.ID, PartitionIDs: t.partitionIDs()})
	delete(s.topicNames, t.Name)
	delete(s.topics, t.ID)
	return CodeOK
}

func (m *Machine) purgeTopic(env Envelope, o *PurgeTopic) Code {
	s, t, code := m.managedTopic(env, o.Stream, o.Topic)
	if code != CodeOK {
		return code
	}
	m.emit(Effect{Kind: EffectTopicPurged, StreamID: s.ID, TopicID: t.ID, PartitionIDs: t.partitionIDs()})
	return CodeOK
}

func (m *Machine) createPartitions(env Envelope, timestamp uint64, o *CreatePartitions) Code {
	s, t, code := m.managedTopic(env, o.Stream, o.Topic)
	if code != CodeOK {
		return code
	}
	if o.Count == 0 {
		return CodeInvalidPartitionsCount
	}
	if o.Count > partitionsPerRequestMax {
		return CodeTooManyPartitions
	}
	next := uint64(0)
	if n := len(t.Partitions); n > 0 {
		next = uint64(t.Partitions[n-1].ID) + 1
	}
	if next+uint64(o.Count) > partitionIDLimit {
		return CodePartitionIDSpaceExhausted
	}
	if t.Options.PreallocateSegments && t.Options.SegmentSizeBytes != 0 &&
		uint64(len(t.Partitions))+uint64(o.Count) > preallocatedBytesMax/t.Options.SegmentSizeBytes {
		return CodeInvalidOptionValue
	}
	firstGroup, ok := m.takeConsensusGroups(o.Count)
	if !ok {
		return CodePartitionIDSpaceExhausted
	}
	created := make([]uint32, 0, o.Count)
	for i := uint32(0); i < o.Count; i++ {
		id := uint32(next) + i
		t.Partitions = append(t.Partitions, Partition{ID: id, CreatedAt: timestamp, ConsensusGroup: firstGroup + uint64(i)})
		created = append(created, id)
	}
	t.rebalanceTopicGroups()
	m.emit(Effect{Kind: EffectPartitionsCreated, StreamID: s.ID, TopicID: t.ID, PartitionIDs: created})
	return CodeOK
}

func (m *Machine) deletePartitions(env Envelope, o *DeletePartitions) Code {
	s, t, code := m.managedTopic(env, o.Stream, o.Topic)
	if code != CodeOK {
		return code
	}
	if o.Count > partitionsPerRequestMax {
		return CodeTooManyPartitions
	}
	if o.Count == 0 || int(o.Count) > len(t.Partitions) {
		return CodeInvalidPartitionsCount
	}
	keep := len(t.Partitions) - int(o.Count)
	removed := make([]uint32, 0, o.Count)
	for _, p := range t.Partitions[keep:] {
		removed = append(removed, p.ID)
	}
	t.Partitions = t.Partitions[:keep:keep]
	t.rebalanceTopicGroups()
	m.emit(Effect{Kind: EffectPartitionsDeleted, StreamID: s.ID, TopicID: t.ID, PartitionIDs: removed})
	return CodeOK
}

func (m *Machine) deleteSegments(env Envelope, o *DeleteSegments) Code {
	s, t, code := m.managedTopic(env, o.Stream, o.Topic)
	if code != CodeOK {
		return code
	}
	if !t.HasPartition(o.PartitionID) {
		return CodePartitionNotFound
	}
	m.emit(Effect{Kind: EffectSegmentsDeleted, StreamID: s.ID, TopicID: t.ID,
		PartitionIDs: []uint32{o.PartitionID}, SegmentsCount: o.SegmentsCount})
	return CodeOK
}
