package metadata

import "sort"

// GlobalPermissions are the ten server-wide permission bits of §4.10, in
// wire order.
type GlobalPermissions struct {
	ManageServers bool
	ReadServers   bool
	ManageUsers   bool
	ReadUsers     bool
	ManageStreams bool
	ReadStreams   bool
	ManageTopics  bool
	ReadTopics    bool
	PollMessages  bool
	SendMessages  bool
}

// StreamPermissions are the permissions a user holds on one stream and its
// topics.
type StreamPermissions struct {
	StreamID     uint32
	ManageStream bool
	ReadStream   bool
	ManageTopics bool
	ReadTopics   bool
	PollMessages bool
	SendMessages bool
	// Topics holds per-topic permissions.
	// Invariant: ascending TopicID, no duplicates.
	Topics []TopicPermissions
}

// TopicPermissions are the permissions a user holds on one topic.
type TopicPermissions struct {
	TopicID      uint32
	ManageTopic  bool
	ReadTopic    bool
	PollMessages bool
	SendMessages bool
}

// Permissions mirrors §4.10.
type Permissions struct {
	Global GlobalPermissions
	// Streams holds per-stream permissions.
	// Invariant: ascending StreamID, no duplicates.
	Streams []StreamPermissions
}

// stream returns the entry for streamID, or nil.
func (p *Permissions) stream(streamID uint32) *StreamPermissions {
	i := sort.Search(len(p.Streams), func(i int) bool { return p.Streams[i].StreamID >= streamID })
	if i < len(p.Streams) && p.Streams[i].StreamID == streamID {
		return &p.Streams[i]
	}
	return nil
}

// topic returns the entry for topicID, or nil.
func (s *StreamPermissions) topic(topicID uint32) *TopicPermissions {
	if s == nil {
		return nil
	}
	i := sort.Search(len(s.Topics), func(i int) bool { return s.Topics[i].TopicID >= topicID })
	if i < len(s.Topics) && s.Topics[i].TopicID == topicID {
		return &s.Topics[i]
	}
	return nil
}

// Encode appends the §4.10 encoding of p to dst: global bits, then stream
// entries in ascending id order, bools as 0/1.
func (p *Permissions) Encode(dst []byte) []byte {
	g := &p.Global
	for _, b := range [...]bool{g.ManageServers, g.ReadServers, g.ManageUsers, g.ReadUsers,
		g.ManageStreams, g.ReadStreams, g.ManageTopics, g.ReadTopics, g.PollMessages, g.SendMessages} {
		dst = appendFlag(dst, b)
	}
	dst = appendFlag(dst, len(p.Streams) > 0)
	for i := range p.Streams {
		s := &p.Streams[i]
		dst = appendU32(dst, s.StreamID)
		for _, b := range [...]bool{s.ManageStream, s.ReadStream, s.ManageTopics, s.ReadTopics, s.PollMessages, s.SendMessages} {
			dst = appendFlag(dst, b)
		}
		dst = appendFlag(dst, len(s.Topics) > 0)
		for j := range s.Topics {
			t := &s.Topics[j]
			dst = appendU32(dst, t.TopicID)
			for _, b := range [...]bool{t.ManageTopic, t.ReadTopic, t.PollMessages, t.SendMessages} {
				dst = appendFlag(dst, b)
			}
			dst = appendFlag(dst, j+1 < len(s.Topics))
		}
		dst = appendFlag(dst, i+1 < len(p.Streams))
	}
	return dst
}

// DecodePermissions decodes the §4.10 layout, which must fill b exactly.
// Bools decode as "non-zero = true"; entries may come in any order and a
// repeated id replaces the earlier entry; the result is sorted by id.
func DecodePermissions(b []byte) (*Permissions, error) {
	d := decoder{buf: b}
	p := decodePermissions(&d)
	if err := d.end(); err != nil {
		return nil, err
	}
	return p, nil
}

// decodePermissions reads one permissions structure from d.
func decodePermissions(d *decoder) *Permissions {
	p := &Permissions{}
	g := &p.Global
	for _, f := range [...]*bool{&g.ManageServers, &g.ReadServers, &g.ManageUsers, &g.ReadUsers,
		&g.ManageStreams, &g.ReadStreams, &g.ManageTopics, &g.ReadTopics, &g.PollMessages, &g.SendMessages} {
		*f = d.u8() != 0
	}
	more := d.u8() == 1
	for more && d.err == nil {
		var s StreamPermissions
		s.StreamID = d.u32()
		for _, f := range [...]*bool{&s.ManageStream, &s.ReadStream, &s.ManageTopics, &s.ReadTopics, &s.PollMessages, &s.SendMessages} {
			*f = d.u8() != 0
		}
		moreTopics := d.u8() == 1
		for moreTopics && d.err == nil {
			var t TopicPermissions
			t.TopicID = d.u32()
			for _, f := range [...]*bool{&t.ManageTopic, &t.ReadTopic, &t.PollMessages, &t.SendMessages} {
				*f = d.u8() != 0
			}
			moreTopics = d.u8() == 1
			s.Topics = append(s.Topics, t)
		}
		s.Topics = normalizeTopicPermissions(s.Topics)
		more = d.u8() == 1
		p.Streams = append(p.Streams, s)
	}
	p.Streams = normalizeStreamPermissions(p.Streams)
	return p
}

// normalizeStreamPermissions sorts by id keeping the last entry of each id.
func normalizeStreamPermissions(in []StreamPermissions) []StreamPermissions {
	if len(in) == 0 {
		return nil
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].StreamID < in[j].StreamID })
	out := in[:0]
	for i := range in {
		if len(out) > 0 && out[len(out)-1].StreamID == in[i].StreamID {
			out[len(out)-1] = in[i]
			continue
		}
		out = append(out, in[i])
	}
	return out
}

// normalizeTopicPermissions sorts by id keeping the last entry of each id.
func normalizeTopicPermissions(in []TopicPermissions) []TopicPermissions {
	if len(in) == 0 {
		return nil
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].TopicID < in[j].TopicID })
	out := in[:0]
	for i := range in {
		if len(out) > 0 && out[len(out)-1].TopicID == in[i].TopicID {
			out[len(out)-1] = in[i]
			continue
		}
		out = append(out, in[i])
	}
	return out
}

// clonePermissions deep-copies p (nil stays nil).
func clonePermissions(p *Permissions) *Permissions {
	if p == nil {
		return nil
	}
	out := &Permissions{Global: p.Global}
	if len(p.Streams) > 0 {
		out.Streams = make([]StreamPermissions, len(p.Streams))
		for i := range p.Streams {
			out.Streams[i] = p.Streams[i]
			if len(p.Streams[i].Topics) > 0 {
				out.Streams[i].Topics = append([]TopicPermissions(nil), p.Streams[i].Topics...)
			}
		}
	}
	return out
}

// The rules of §5.9. Each takes the user's permissions (nil = none); root
// is handled by the callers.

// CanManageUsers reports whether p allows creating, updating and deleting
// users and changing their permissions.
func (p *Permissions) CanManageUsers() bool { return p != nil && p.Global.ManageUsers }

// CanReadUsers reports whether p allows GetUser and GetUsers.
func (p *Permissions) CanReadUsers() bool {
	return p != nil && (p.Global.ReadUsers || p.Global.ManageUsers)
}

// CanReadServers reports whether p allows GetStats, GetClients, GetClient
// and GetSnapshot.
func (p *Permissions) CanReadServers() bool {
	return p != nil && (p.Global.ReadServers || p.Global.ManageServers)
}

// CanCreateStream reports whether p allows CreateStream.
func (p *Permissions) CanCreateStream() bool { return p != nil && p.Global.ManageStreams }

// CanReadStreams reports whether p allows GetStreams.
func (p *Permissions) CanReadStreams() bool {
	return p != nil && (p.Global.ReadStreams || p.Global.ManageStreams)
}

// CanManageStream reports whether p allows updating, deleting and purging
// the stream.
func (p *Permissions) CanManageStream(streamID uint32) bool {
	if p == nil {
		return false
	}
	if p.Global.ManageStreams {
		return true
	}
	s := p.stream(streamID)
	return s != nil && s.ManageStream
}

// CanReadStream reports whether p allows GetStream.
func (p *Permissions) CanReadStream(streamID uint32) bool {
	if p == nil {
		return false
	}
	if p.Global.ReadStreams || p.Global.ManageStreams {
		return true
	}
	s := p.stream(streamID)
	return s != nil && (s.ReadStream || s.ManageStream)
}

// CanReadTopics reports whether p allows GetTopics of the stream (and the
// consumer-group reads).
func (p *Permissions) CanReadTopics(streamID uint32) bool {
	if p == nil {
		return false
	}
	g := &p.Global
	if g.ReadStreams || g.ManageStreams || g.ReadTopics || g.ManageTopics {
		return true
	}
	s := p.stream(streamID)
	return s != nil && (s.ReadStream || s.ManageStream || s.ReadTopics || s.ManageTopics)
}

// CanReadTopic reports whether p allows GetTopic.
func (p *Permissions) CanReadTopic(streamID, topicID uint32) bool {
	if p.CanReadTopics(streamID) {
		return true
	}
	if p == nil {
		return false
	}
	t := p.stream(streamID).topic(topicID)
	return t != nil && (t.ReadTopic || t.ManageTopic)
}

// CanCreateTopic reports whether p allows CreateTopic in the stream.
func (p *Permissions) CanCreateTopic(streamID uint32) bool {
	if p == nil {
		return false
	}
	if p.Global.ManageStreams || p.Global.ManageTopics {
		return true
	}
	s := p.stream(streamID)
	return s != nil && (s.ManageStream || s.ManageTopics)
}

// CanManageTopic reports whether p allows updating, deleting and purging
// the topic and changing its partitions and segments.
func (p *Permissions) CanManageTopic(streamID, topicID uint32) bool {
	if p.CanCreateTopic(streamID) {
		return true
	}
	if p == nil {
		return false
	}
	t := p.stream(streamID).topic(topicID)
	return t != nil && t.ManageTopic
}

// CanPoll reports whether p allows PollMessages and the consumer-offset
// operations on the topic.
func (p *Permissions) CanPoll(streamID, topicID uint32) bool {
	if p == nil {
		return false
	}
	g := &p.Global
	if g.PollMessages || g.ReadStreams || g.ManageStreams || g.ReadTopics || g.ManageTopics {
		return true
	}
	s := p.stream(streamID)
	if s == nil {
		return false
	}
	if s.PollMessages || s.ReadStream || s.ManageStream || s.ReadTopics || s.ManageTopics {
		return true
	}
	t := s.topic(topicID)
	return t != nil && (t.PollMessages || t.ReadTopic || t.ManageTopic)
}

// CanSend reports whether p allows SendMessages to the topic.
func (p *Permissions) CanSend(streamID, topicID uint32) bool {
	if p == nil {
		return false
	}
	g := &p.Global
	if g.SendMessages || g.ManageStreams || g.ManageTopics {
		return true
	}
	s := p.stream(streamID)
	if s == nil {
		return false
	}
	if s.SendMessages || s.ManageStream || s.ManageTopics {
		return true
	}
	t := s.topic(topicID)
	return t != nil && (t.SendMessages || t.ManageTopic)
}
