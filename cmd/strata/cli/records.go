package cli

// The JSON records of --output json (one object per line). They are the
// CLI's documented schema (cmd/strata/README.md), not the client's Go
// structs: a u64 sentinel does not survive a JSON double (jq prints
// u64::MAX as 18446744073709552000), a numeric enum means nothing to a
// script, and a nil Go slice marshals as null. So here "unlimited"
// quantities are names ("never", "unlimited", "server_default"), absent
// ids and timestamps are null, enums are names and lists are always [].
// TestJSONRecordsMatchREADME keeps the README's field lists true.

import (
	"strconv"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// Sentinel names of u64 quantities.
const (
	// nameNever is a message expiry of u64::MAX.
	nameNever = "never"
	// nameUnlimited is a max topic size of u64::MAX.
	nameUnlimited = "unlimited"
	// nameServerDefault is 0 in expiry and size fields: the server's
	// default applies.
	nameServerDefault = "server_default"
)

// quantity renders a u64 with sentinels: the number, or max's name for
// u64::MAX, or "server_default" for 0.
func quantity(v uint64, max string) any {
	switch v {
	case ^uint64(0):
		return max
	case 0:
		return nameServerDefault
	}
	return v
}

// timestampOrNull renders micros since the epoch, null for 0 (never).
func timestampOrNull(v uint64) any {
	if v == 0 {
		return nil
	}
	return v
}

type streamRecord struct {
	ID            uint32 `json:"id"`
	Name          string `json:"name"`
	CreatedAt     uint64 `json:"created_at"`
	TopicsCount   uint32 `json:"topics_count"`
	MessagesCount uint64 `json:"messages_count"`
	SizeBytes     uint64 `json:"size_bytes"`
}

type streamDetailsRecord struct {
	streamRecord
	Topics []topicRecord `json:"topics"`
}

func toStreamRecord(s *client.Stream) streamRecord {
	return streamRecord{ID: s.ID, Name: s.Name, CreatedAt: s.CreatedAt, TopicsCount: s.TopicsCount,
		MessagesCount: s.MessagesCount, SizeBytes: s.SizeBytes}
}

func toStreamDetails(s *client.StreamDetails) streamDetailsRecord {
	r := streamDetailsRecord{streamRecord: toStreamRecord(&s.Stream), Topics: make([]topicRecord, 0, len(s.Topics))}
	for i := range s.Topics {
		r.Topics = append(r.Topics, toTopicRecord(&s.Topics[i]))
	}
	return r
}

type topicRecord struct {
	ID              uint32 `json:"id"`
	Name            string `json:"name"`
	CreatedAt       uint64 `json:"created_at"`
	PartitionsCount uint32 `json:"partitions_count"`
	MessagesCount   uint64 `json:"messages_count"`
	SizeBytes       uint64 `json:"size_bytes"`
	// MessageExpiry is micros, "never" or "server_default".
	MessageExpiry any `json:"message_expiry"`
	// MaxTopicSize is bytes, "unlimited" or "server_default".
	MaxTopicSize         any               `json:"max_topic_size"`
	CompressionAlgorithm string            `json:"compression_algorithm"`
	Options              map[string]string `json:"options"`
	DerivedOptions       map[string]string `json:"derived_options"`
}

type topicDetailsRecord struct {
	topicRecord
	Partitions []partitionRecord `json:"partitions"`
}

type partitionRecord struct {
	ID            uint32 `json:"id"`
	CreatedAt     uint64 `json:"created_at"`
	SegmentsCount uint32 `json:"segments_count"`
	CurrentOffset uint64 `json:"current_offset"`
	MessagesCount uint64 `json:"messages_count"`
	SizeBytes     uint64 `json:"size_bytes"`
	// State is "ok" or "fenced".
	State string `json:"state"`
	// Fenced is the fence of a fenced partition, null otherwise.
	Fenced *client.FencedPartition `json:"fenced"`
}

// Partition states of partitionRecord.State.
const (
	stateOK     = "ok"
	stateFenced = "fenced"
)

func toTopicRecord(t *client.Topic) topicRecord {
	return topicRecord{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt, PartitionsCount: t.PartitionsCount,
		MessagesCount: t.MessagesCount, SizeBytes: t.SizeBytes,
		MessageExpiry: quantity(t.MessageExpiry, nameNever), MaxTopicSize: quantity(t.MaxTopicSize, nameUnlimited),
		CompressionAlgorithm: compressionName(t.CompressionAlgorithm),
		Options:              optionsMap(t.Options), DerivedOptions: optionsMap(t.DerivedOptions)}
}

// toTopicDetails joins a topic's partitions with the fences of fenced
// (the topic's fenced partitions).
func toTopicDetails(t *client.TopicDetails, fenced []client.FencedPartition) topicDetailsRecord {
	r := topicDetailsRecord{topicRecord: toTopicRecord(&t.Topic), Partitions: make([]partitionRecord, 0, len(t.Partitions))}
	for _, p := range t.Partitions {
		rec := partitionRecord{ID: p.ID, CreatedAt: p.CreatedAt, SegmentsCount: p.SegmentsCount,
			CurrentOffset: p.CurrentOffset, MessagesCount: p.MessagesCount, SizeBytes: p.SizeBytes, State: stateOK}
		for i := range fenced {
			if fenced[i].PartitionID == p.ID {
				rec.State, rec.Fenced = stateFenced, &fenced[i]
			}
		}
		r.Partitions = append(r.Partitions, rec)
	}
	return r
}

// optionValue renders one option value, with the sentinels of the expiry
// and size options named as in the records.
func optionValue(key string, v client.Value) string {
	s := v.String()
	switch key {
	case client.OptionMessageExpiry, client.OptionMaxTopicSize:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return s // a text value such as "7 days"
		}
		max := nameNever
		if key == client.OptionMaxTopicSize {
			max = nameUnlimited
		}
		switch q := quantity(n, max).(type) {
		case string:
			return q
		}
	}
	return s
}

// optionsMap is an options block as key → value text; {} when empty.
func optionsMap(o client.Options) map[string]string {
	m := make(map[string]string, len(o))
	for _, e := range o {
		m[e.Key] = optionValue(e.Key, e.Value)
	}
	return m
}

type userRecord struct {
	ID        uint32 `json:"id"`
	Username  string `json:"username"`
	Status    string `json:"status"`
	CreatedAt uint64 `json:"created_at"`
}

type userDetailsRecord struct {
	userRecord
	// Permissions is null when the user has none.
	Permissions *permissionsRecord `json:"permissions"`
}

// permissionsRecord is client.Permissions with lists always present.
type permissionsRecord struct {
	Global  client.GlobalPermissions `json:"global"`
	Streams []streamPermissionRecord `json:"streams"`
}

type streamPermissionRecord struct {
	StreamID     uint32                    `json:"stream_id"`
	ManageStream bool                      `json:"manage_stream"`
	ReadStream   bool                      `json:"read_stream"`
	ManageTopics bool                      `json:"manage_topics"`
	ReadTopics   bool                      `json:"read_topics"`
	PollMessages bool                      `json:"poll_messages"`
	SendMessages bool                      `json:"send_messages"`
	Topics       []client.TopicPermissions `json:"topics"`
}

func toUserRecord(u *client.User) userRecord {
	return userRecord{ID: u.ID, Username: u.Username, Status: statusName(u.Status), CreatedAt: u.CreatedAt}
}

func toUserDetails(u *client.UserDetails) userDetailsRecord {
	r := userDetailsRecord{userRecord: toUserRecord(&u.User)}
	if p := u.Permissions; p != nil {
		r.Permissions = &permissionsRecord{Global: p.Global, Streams: make([]streamPermissionRecord, 0, len(p.Streams))}
		for _, s := range p.Streams {
			topics := s.Topics
			if topics == nil {
				topics = []client.TopicPermissions{}
			}
			r.Permissions.Streams = append(r.Permissions.Streams, streamPermissionRecord{StreamID: s.StreamID,
				ManageStream: s.ManageStream, ReadStream: s.ReadStream, ManageTopics: s.ManageTopics,
				ReadTopics: s.ReadTopics, PollMessages: s.PollMessages, SendMessages: s.SendMessages, Topics: topics})
		}
	}
	return r
}

type tokenRecord struct {
	Name string `json:"name"`
	// ExpiryAt is micros since the epoch, null when it never expires.
	ExpiryAt any `json:"expiry_at"`
}

type clientRecord struct {
	ClientID uint32 `json:"client_id"`
	// UserID is null when the connection is not logged in.
	UserID              any    `json:"user_id"`
	Transport           string `json:"transport"`
	Address             string `json:"address"`
	ConsumerGroupsCount uint32 `json:"consumer_groups_count"`
}

type clientDetailsRecord struct {
	clientRecord
	ConsumerGroups []client.ClientGroup `json:"consumer_groups"`
}

func toClientRecord(c *client.ClientInfo) clientRecord {
	var user any = c.UserID
	if c.UserID == wire.UserIDNone {
		user = nil
	}
	return clientRecord{ClientID: c.ClientID, UserID: user, Transport: transportName(c.Transport),
		Address: c.Address, ConsumerGroupsCount: c.ConsumerGroupsCount}
}

func toClientDetails(d *client.ClientDetails) clientDetailsRecord {
	groups := d.ConsumerGroups
	if groups == nil {
		groups = []client.ClientGroup{}
	}
	return clientDetailsRecord{clientRecord: toClientRecord(&d.ClientInfo), ConsumerGroups: groups}
}

type groupRecord struct {
	ID              uint32 `json:"id"`
	Name            string `json:"name"`
	PartitionsCount uint32 `json:"partitions_count"`
	MembersCount    uint32 `json:"members_count"`
}

type groupDetailsRecord struct {
	groupRecord
	Members []groupMemberRecord `json:"members"`
}

type groupMemberRecord struct {
	ID         uint32   `json:"id"`
	Partitions []uint32 `json:"partitions"`
}

func toGroupRecord(g *client.ConsumerGroup) groupRecord {
	return groupRecord{ID: g.ID, Name: g.Name, PartitionsCount: g.PartitionsCount, MembersCount: g.MembersCount}
}

func toGroupDetails(g *client.ConsumerGroupDetails) groupDetailsRecord {
	r := groupDetailsRecord{groupRecord: toGroupRecord(&g.ConsumerGroup), Members: make([]groupMemberRecord, 0, len(g.Members))}
	for _, m := range g.Members {
		parts := m.Partitions
		if parts == nil {
			parts = []uint32{}
		}
		r.Members = append(r.Members, groupMemberRecord{ID: m.ID, Partitions: parts})
	}
	return r
}

// statsRecord is client.Stats with cache_metrics and fenced_partitions
// always lists.
type statsRecord struct {
	client.Stats
	CacheMetrics     []client.CacheMetric     `json:"cache_metrics"`
	FencedPartitions []client.FencedPartition `json:"fenced_partitions"`
}

func toStatsRecord(s *client.Stats) statsRecord {
	r := statsRecord{Stats: *s, CacheMetrics: s.CacheMetrics, FencedPartitions: s.FencedPartitions}
	if r.CacheMetrics == nil {
		r.CacheMetrics = []client.CacheMetric{}
	}
	if r.FencedPartitions == nil {
		r.FencedPartitions = []client.FencedPartition{}
	}
	return r
}
