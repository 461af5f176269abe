package metadata

import (
	"sort"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/net/wire/statecodec"
)

// GlobalPermissions, StreamPermissions and TopicPermissions are net/wire's
// §4.10 structs.
type (
	GlobalPermissions = wire.GlobalPermissions
	StreamPermissions = wire.StreamPermissions
	TopicPermissions  = wire.TopicPermissions
)

// Permissions is a user's permission set: net/wire's layout, with the
// ordering the lookups below rely on.
// Invariant: Streams in ascending StreamID order, no duplicates; each
// stream's Topics likewise by TopicID.
type Permissions wire.Permissions

// stream returns the entry for streamID, or nil.
func (p *Permissions) stream(streamID uint32) *StreamPermissions {
	i := sort.Search(len(p.Streams), func(i int) bool { return p.Streams[i].StreamID >= streamID })
	if i < len(p.Streams) && p.Streams[i].StreamID == streamID {
		return &p.Streams[i]
	}
	return nil
}

// topicPermissions returns s's entry for topicID, or nil (also when s is
// nil).
func topicPermissions(s *StreamPermissions, topicID uint32) *TopicPermissions {
	if s == nil {
		return nil
	}
	i := sort.Search(len(s.Topics), func(i int) bool { return s.Topics[i].TopicID >= topicID })
	if i < len(s.Topics) && s.Topics[i].TopicID == topicID {
		return &s.Topics[i]
	}
	return nil
}

// Encode appends the §4.10 encoding of p to dst (net/wire's encoder):
// global bits, then stream entries in ascending id order, bools as 0/1.
func (p *Permissions) Encode(dst []byte) []byte {
	return (*wire.Permissions)(p).AppendTo(dst)
}

// DecodePermissions decodes the §4.10 layout, which must fill b exactly.
// Bools decode as "non-zero = true"; entries may come in any order and a
// repeated id replaces the earlier entry; the result is sorted by id.
func DecodePermissions(b []byte) (*Permissions, error) {
	d := statecodec.NewDecoder(b, ErrMalformed)
	p := decodePermissions(&d)
	if err := d.End(); err != nil {
		return nil, err
	}
	return p, nil
}

// decodePermissions reads one permissions structure from d.
func decodePermissions(d *statecodec.Decoder) *Permissions {
	p := &Permissions{}
	g := &p.Global
	for _, f := range [...]*bool{&g.ManageServers, &g.ReadServers, &g.ManageUsers, &g.ReadUsers,
		&g.ManageStreams, &g.ReadStreams, &g.ManageTopics, &g.ReadTopics, &g.PollMessages, &g.SendMessages} {
		*f = d.U8() != 0
	}
	more := d.U8() == 1
	for more && d.Err() == nil {
		var s StreamPermissions
		s.StreamID = d.U32()
		for _, f := range [...]*bool{&s.ManageStream, &s.ReadStream, &s.ManageTopics, &s.ReadTopics, &s.PollMessages, &s.SendMessages} {
			*f = d.U8() != 0
		}
		moreTopics := d.U8() == 1
		for moreTopics && d.Err() == nil {
			var t TopicPermissions
			t.TopicID = d.U32()
			for _, f := range [...]*bool{&t.ManageTopic, &t.ReadTopic, &t.PollMessages, &t.SendMessages} {
				*f = d.U8() != 0
			}
			moreTopics = d.U8() == 1
			s.Topics = append(s.Topics, t)
		}
		s.Topics = normalizeTopicPermissions(s.Topics)
		more = d.U8() == 1
		p.Streams = append(p.Streams, s)
	}
	p.Streams = normalizeStreamPermissions(p.Streams)
	return p
}

// normalizeStreamPermissions sorts by id keeping the last entry of each id.
func normalizeStreamPermissions(in []StreamPermissions) []StreamPermissions {
	return lastByID(in, func(s *StreamPermissions) uint32 { return s.StreamID })
}

// normalizeTopicPermissions sorts by id keeping the last entry of each id.
func normalizeTopicPermissions(in []TopicPermissions) []TopicPermissions {
	return lastByID(in, func(t *TopicPermissions) uint32 { return t.TopicID })
}

// lastByID sorts in by id, in place and stably, and keeps the last entry
// of each id; an empty list becomes nil.
func lastByID[T any](in []T, id func(*T) uint32) []T {
	if len(in) == 0 {
		return nil
	}
	sort.SliceStable(in, func(i, j int) bool { return id(&in[i]) < id(&in[j]) })
	out := in[:0]
	for i := range in {
		if len(out) > 0 && id(&out[len(out)-1]) == id(&in[i]) {
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
	t := topicPermissions(p.stream(streamID), topicID)
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
	t := topicPermissions(p.stream(streamID), topicID)
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
	t := topicPermissions(s, topicID)
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
	t := topicPermissions(s, topicID)
	return t != nil && (t.SendMessages || t.ManageTopic)
}
