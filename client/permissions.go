package client

import "github.com/stratabroker/strata/net/wire"

// Permissions is a user's permission set (PROTOCOL.md §4.10); net/wire
// encodes and decodes it (permissionsToWire, permissionsFromWire).
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

// permissionsToWire converts p for net/wire's encoder; nil stays nil.
func permissionsToWire(p *Permissions) *wire.Permissions {
	if p == nil {
		return nil
	}
	w := &wire.Permissions{Global: wire.GlobalPermissions(p.Global)}
	for _, s := range p.Streams {
		ws := wire.StreamPermissions{StreamID: s.StreamID, ManageStream: s.ManageStream, ReadStream: s.ReadStream,
			ManageTopics: s.ManageTopics, ReadTopics: s.ReadTopics, PollMessages: s.PollMessages, SendMessages: s.SendMessages}
		for _, t := range s.Topics {
			ws.Topics = append(ws.Topics, wire.TopicPermissions(t))
		}
		w.Streams = append(w.Streams, ws)
	}
	return w
}

// permissionsFromWire converts a decoded permission set; nil stays nil.
func permissionsFromWire(w *wire.Permissions) *Permissions {
	if w == nil {
		return nil
	}
	p := &Permissions{Global: GlobalPermissions(w.Global)}
	for _, ws := range w.Streams {
		s := StreamPermissions{StreamID: ws.StreamID, ManageStream: ws.ManageStream, ReadStream: ws.ReadStream,
			ManageTopics: ws.ManageTopics, ReadTopics: ws.ReadTopics, PollMessages: ws.PollMessages, SendMessages: ws.SendMessages}
		for _, t := range ws.Topics {
			s.Topics = append(s.Topics, TopicPermissions(t))
		}
		p.Streams = append(p.Streams, s)
	}
	return p
}
