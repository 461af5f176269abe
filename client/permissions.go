package client

import (
	"encoding/binary"
	"fmt"
)

// Permissions is a user's permission set (PROTOCOL.md §4.10).
type Permissions struct {
	Global  GlobalPermissions   `json:"global"`
	Streams []StreamPermissions `json:"streams,omitempty"`
}

// GlobalPermissions are the ten global flags, in wire order.
type GlobalPermissions struct {
	ManageServers bool `json:"manage_servers"`
	ReadServers   bool `json:"read_servers"`
	ManageUsers   bool `json:"manage_users"`
	ReadUsers     bool `json:"read_users"`
	ManageStreams bool `json:"manage_streams"`
	ReadStreams   bool `json:"read_streams"`
	ManageTopics  bool `json:"manage_topics"`
	ReadTopics    bool `json:"read_topics"`
	PollMessages  bool `json:"poll_messages"`
	SendMessages  bool `json:"send_messages"`
}

// StreamPermissions are the flags for one stream and its topics.
type StreamPermissions struct {
	StreamID     uint32             `json:"stream_id"`
	ManageStream bool               `json:"manage_stream"`
	ReadStream   bool               `json:"read_stream"`
	ManageTopics bool               `json:"manage_topics"`
	ReadTopics   bool               `json:"read_topics"`
	PollMessages bool               `json:"poll_messages"`
	SendMessages bool               `json:"send_messages"`
	Topics       []TopicPermissions `json:"topics,omitempty"`
}

// TopicPermissions are the flags for one topic.
type TopicPermissions struct {
	TopicID      uint32 `json:"topic_id"`
	ManageTopic  bool   `json:"manage_topic"`
	ReadTopic    bool   `json:"read_topic"`
	PollMessages bool   `json:"poll_messages"`
	SendMessages bool   `json:"send_messages"`
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// appendPermissions appends the §4.10 encoding of p.
func appendPermissions(dst []byte, p *Permissions) []byte {
	g := p.Global
	dst = append(dst, b2u(g.ManageServers), b2u(g.ReadServers), b2u(g.ManageUsers), b2u(g.ReadUsers),
		b2u(g.ManageStreams), b2u(g.ReadStreams), b2u(g.ManageTopics), b2u(g.ReadTopics),
		b2u(g.PollMessages), b2u(g.SendMessages))
	dst = append(dst, b2u(len(p.Streams) > 0))
	for i, s := range p.Streams {
		dst = binary.LittleEndian.AppendUint32(dst, s.StreamID)
		dst = append(dst, b2u(s.ManageStream), b2u(s.ReadStream), b2u(s.ManageTopics),
			b2u(s.ReadTopics), b2u(s.PollMessages), b2u(s.SendMessages))
		dst = append(dst, b2u(len(s.Topics) > 0))
		for j, t := range s.Topics {
			dst = binary.LittleEndian.AppendUint32(dst, t.TopicID)
			dst = append(dst, b2u(t.ManageTopic), b2u(t.ReadTopic), b2u(t.PollMessages), b2u(t.SendMessages))
			dst = append(dst, b2u(j+1 < len(s.Topics)))
		}
		dst = append(dst, b2u(i+1 < len(p.Streams)))
	}
	return dst
}

// appendOptionalPermissions appends [flag u8][perm_len u32][permissions]
// or a single 0 flag when p is nil.
func appendOptionalPermissions(dst []byte, p *Permissions) []byte {
	if p == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = appendPermissions(dst, p)
	binary.LittleEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst
}

// permissionsEntriesMax bounds the entries decoded from one block.
const permissionsEntriesMax = 1 << 16

// decodePermissions decodes exactly one §4.10 block.
func decodePermissions(b []byte) (*Permissions, error) {
	r := reader{b: b}
	flags := r.take(10, "global permissions")
	p := &Permissions{}
	if flags != nil {
		p.Global = GlobalPermissions{flags[0] != 0, flags[1] != 0, flags[2] != 0, flags[3] != 0,
			flags[4] != 0, flags[5] != 0, flags[6] != 0, flags[7] != 0, flags[8] != 0, flags[9] != 0}
	}
	more := r.u8("has_streams") != 0
	for entries := 0; more && r.err == nil; entries++ {
		if entries > permissionsEntriesMax {
			return nil, fmt.Errorf("%w: permissions with more than %d entries", ErrProtocol, permissionsEntriesMax)
		}
		s := StreamPermissions{StreamID: r.u32("stream id")}
		f := r.take(6, "stream permissions")
		if f != nil {
			s.ManageStream, s.ReadStream, s.ManageTopics = f[0] != 0, f[1] != 0, f[2] != 0
			s.ReadTopics, s.PollMessages, s.SendMessages = f[3] != 0, f[4] != 0, f[5] != 0
		}
		moreTopics := r.u8("has_topics") != 0
		for ; moreTopics && r.err == nil; entries++ {
			if entries > permissionsEntriesMax {
				return nil, fmt.Errorf("%w: permissions with more than %d entries", ErrProtocol, permissionsEntriesMax)
			}
			t := TopicPermissions{TopicID: r.u32("topic id")}
			tf := r.take(4, "topic permissions")
			if tf != nil {
				t.ManageTopic, t.ReadTopic, t.PollMessages, t.SendMessages = tf[0] != 0, tf[1] != 0, tf[2] != 0, tf[3] != 0
			}
			s.Topics = append(s.Topics, t)
			moreTopics = r.u8("has_next_topic") != 0
		}
		p.Streams = append(p.Streams, s)
		more = r.u8("has_next_stream") != 0
	}
	return p, finish(&r)
}
