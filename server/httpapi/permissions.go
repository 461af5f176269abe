package httpapi

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/stratabroker/strata/net/wire"
)

// permissionsJSON is Permissions (§4.10) as Iggy's HTTP API renders it:
// global flags, and per-stream entries keyed by stream id (each with its
// per-topic entries keyed by topic id).
type permissionsJSON struct {
	Global  globalPermissionsJSON            `json:"global"`
	Streams map[string]streamPermissionsJSON `json:"streams,omitempty"`
}

// globalPermissionsJSON has wire.GlobalPermissions' fields in the same
// order, so each converts to the other.
type globalPermissionsJSON struct {
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

type streamPermissionsJSON struct {
	ManageStream bool                            `json:"manage_stream"`
	ReadStream   bool                            `json:"read_stream"`
	ManageTopics bool                            `json:"manage_topics"`
	ReadTopics   bool                            `json:"read_topics"`
	PollMessages bool                            `json:"poll_messages"`
	SendMessages bool                            `json:"send_messages"`
	Topics       map[string]topicPermissionsJSON `json:"topics,omitempty"`
}

type topicPermissionsJSON struct {
	ManageTopic  bool `json:"manage_topic"`
	ReadTopic    bool `json:"read_topic"`
	PollMessages bool `json:"poll_messages"`
	SendMessages bool `json:"send_messages"`
}

func permissionsFrom(p *wire.Permissions) permissionsJSON {
	out := permissionsJSON{Global: globalPermissionsJSON(p.Global)}
	if len(p.Streams) > 0 {
		out.Streams = make(map[string]streamPermissionsJSON, len(p.Streams))
	}
	for _, s := range p.Streams {
		sj := streamPermissionsJSON{ManageStream: s.ManageStream, ReadStream: s.ReadStream,
			ManageTopics: s.ManageTopics, ReadTopics: s.ReadTopics, PollMessages: s.PollMessages,
			SendMessages: s.SendMessages}
		if len(s.Topics) > 0 {
			sj.Topics = make(map[string]topicPermissionsJSON, len(s.Topics))
		}
		for _, t := range s.Topics {
			sj.Topics[strconv.FormatUint(uint64(t.TopicID), 10)] = topicPermissionsJSON{
				ManageTopic: t.ManageTopic, ReadTopic: t.ReadTopic, PollMessages: t.PollMessages,
				SendMessages: t.SendMessages}
		}
		out.Streams[strconv.FormatUint(uint64(s.StreamID), 10)] = sj
	}
	return out
}

// toWire converts request permissions; stream and topic keys must be
// numeric ids. Entries come out in ascending id order.
func (p *permissionsJSON) toWire() (*wire.Permissions, error) {
	out := &wire.Permissions{Global: wire.GlobalPermissions(p.Global)}
	for key, s := range p.Streams {
		streamID, err := strconv.ParseUint(key, 10, 32)
		if err != nil {
			return nil, badRequest("permissions", "stream key %q is not a numeric stream id", key)
		}
		sp := wire.StreamPermissions{StreamID: uint32(streamID), ManageStream: s.ManageStream,
			ReadStream: s.ReadStream, ManageTopics: s.ManageTopics, ReadTopics: s.ReadTopics,
			PollMessages: s.PollMessages, SendMessages: s.SendMessages}
		for tkey, t := range s.Topics {
			topicID, err := strconv.ParseUint(tkey, 10, 32)
			if err != nil {
				return nil, badRequest("permissions", "topic key %q is not a numeric topic id", tkey)
			}
			sp.Topics = append(sp.Topics, wire.TopicPermissions{TopicID: uint32(topicID),
				ManageTopic: t.ManageTopic, ReadTopic: t.ReadTopic, PollMessages: t.PollMessages,
				SendMessages: t.SendMessages})
		}
		slices.SortFunc(sp.Topics, func(a, b wire.TopicPermissions) int { return cmp.Compare(a.TopicID, b.TopicID) })
		out.Streams = append(out.Streams, sp)
	}
	slices.SortFunc(out.Streams, func(a, b wire.StreamPermissions) int { return cmp.Compare(a.StreamID, b.StreamID) })
	return out, nil
}
