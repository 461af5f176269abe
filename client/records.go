package client

import (
	"bytes"

	"github.com/stratabroker/strata/net/wire"
)

// Records returned by the server (PROTOCOL.md §4.11). Timestamps are micros
// since the Unix epoch.

// Stream is a stream record (§4.11.1).
type Stream struct {
	ID            uint32  `json:"id"`
	CreatedAt     uint64  `json:"created_at"`
	TopicsCount   uint32  `json:"topics_count"`
	SizeBytes     uint64  `json:"size_bytes"`
	MessagesCount uint64  `json:"messages_count"`
	Name          string  `json:"name"`
	Options       Options `json:"options,omitempty"`
}

// StreamDetails is a stream with its topics.
type StreamDetails struct {
	Stream
	Topics []Topic `json:"topics"`
}

// Topic is a topic header record (§4.11.2).
type Topic struct {
	ID              uint32 `json:"id"`
	CreatedAt       uint64 `json:"created_at"`
	PartitionsCount uint32 `json:"partitions_count"`
	// MessageExpiry is in micros; 0 = server default, MaxUint64 = never.
	MessageExpiry uint64 `json:"message_expiry"`
	// CompressionAlgorithm is 1 none, 2 gzip.
	CompressionAlgorithm uint8 `json:"compression_algorithm"`
	// MaxTopicSize is in bytes; 0 = server default, MaxUint64 = unlimited.
	MaxTopicSize   uint64  `json:"max_topic_size"`
	SizeBytes      uint64  `json:"size_bytes"`
	MessagesCount  uint64  `json:"messages_count"`
	Name           string  `json:"name"`
	Options        Options `json:"options,omitempty"`
	DerivedOptions Options `json:"derived_options,omitempty"`
}

// TopicDetails is a topic with its partitions.
type TopicDetails struct {
	Topic
	Partitions []Partition `json:"partitions"`
}

// Partition is a partition record (§4.11.3).
type Partition struct {
	ID            uint32 `json:"id"`
	CreatedAt     uint64 `json:"created_at"`
	SegmentsCount uint32 `json:"segments_count"`
	CurrentOffset uint64 `json:"current_offset"`
	SizeBytes     uint64 `json:"size_bytes"`
	MessagesCount uint64 `json:"messages_count"`
}

// User status values (§4.11.4).
const (
	UserActive   uint8 = 1
	UserInactive uint8 = 2
)

// User is a user record (§4.11.4).
type User struct {
	ID        uint32  `json:"id"`
	CreatedAt uint64  `json:"created_at"`
	Status    uint8   `json:"status"`
	Username  string  `json:"username"`
	Options   Options `json:"options,omitempty"`
}

// UserDetails is a user with permissions (§4.11.5); Permissions is nil
// when the user has none.
type UserDetails struct {
	User
	Permissions *Permissions `json:"permissions"`
}

// PersonalAccessToken is a PAT list entry (§4.11.6).
type PersonalAccessToken struct {
	Name string `json:"name"`
	// ExpiryAt is micros since the epoch; 0 = never expires.
	ExpiryAt uint64 `json:"expiry_at"`
}

// ClientInfo is a connected client (§4.11.9).
type ClientInfo struct {
	ClientID uint32 `json:"client_id"`
	// UserID is 0xFFFFFFFF when the connection is not logged in.
	UserID uint32 `json:"user_id"`
	// Transport is 1 TCP, 2 QUIC, 3 HTTP, 4 WebSocket.
	Transport           uint8  `json:"transport"`
	Address             string `json:"address"`
	ConsumerGroupsCount uint32 `json:"consumer_groups_count"`
}

// ClientGroup is one consumer group membership of a client.
type ClientGroup struct {
	StreamID uint32 `json:"stream_id"`
	TopicID  uint32 `json:"topic_id"`
	GroupID  uint32 `json:"group_id"`
}

// ClientDetails is a client with its consumer group memberships.
type ClientDetails struct {
	ClientInfo
	ConsumerGroups []ClientGroup `json:"consumer_groups"`
}

// CacheMetric is one per-partition cache entry of Stats.
type CacheMetric struct {
	StreamID    uint32  `json:"stream_id"`
	TopicID     uint32  `json:"topic_id"`
	PartitionID uint32  `json:"partition_id"`
	Hits        uint64  `json:"hits"`
	Misses      uint64  `json:"misses"`
	HitRatio    float32 `json:"hit_ratio"`
}

// FencedPartition is a partition that serves only its verified prefix
// (the Stats extension of §4.11.10): sends to it are refused with
// wire.ErrCannotAppendMessage and polls at or past ServedBelow with
// wire.ErrCannotReadMessage until it is repaired.
type FencedPartition struct {
	StreamID    uint32 `json:"stream_id"`
	TopicID     uint32 `json:"topic_id"`
	PartitionID uint32 `json:"partition_id"`
	// ServedBelow is the first offset not served.
	ServedBelow uint64 `json:"served_below"`
	// File is the damaged segment file or the partition directory;
	// Position the byte of File where the damage starts.
	File     string `json:"file"`
	Position uint64 `json:"position"`
	Reason   string `json:"reason"`
}

// Stats is the server statistics record (§4.11.10).
type Stats struct {
	ProcessID           uint32        `json:"process_id"`
	CPUUsage            float32       `json:"cpu_usage"`
	TotalCPUUsage       float32       `json:"total_cpu_usage"`
	MemoryUsage         uint64        `json:"memory_usage"`
	TotalMemory         uint64        `json:"total_memory"`
	AvailableMemory     uint64        `json:"available_memory"`
	RunTime             uint64        `json:"run_time"`
	StartTime           uint64        `json:"start_time"`
	ReadBytes           uint64        `json:"read_bytes"`
	WrittenBytes        uint64        `json:"written_bytes"`
	MessagesSizeBytes   uint64        `json:"messages_size_bytes"`
	StreamsCount        uint32        `json:"streams_count"`
	TopicsCount         uint32        `json:"topics_count"`
	PartitionsCount     uint32        `json:"partitions_count"`
	SegmentsCount       uint32        `json:"segments_count"`
	MessagesCount       uint64        `json:"messages_count"`
	ClientsCount        uint32        `json:"clients_count"`
	ConsumerGroupsCount uint32        `json:"consumer_groups_count"`
	Hostname            string        `json:"hostname"`
	OSName              string        `json:"os_name"`
	OSVersion           string        `json:"os_version"`
	KernelVersion       string        `json:"kernel_version"`
	ServerVersion       string        `json:"server_version"`
	ServerSemver        uint32        `json:"server_semver"`
	CacheMetrics        []CacheMetric `json:"cache_metrics,omitempty"`
	ThreadsCount        uint32        `json:"threads_count"`
	FreeDiskSpace       uint64        `json:"free_disk_space"`
	TotalDiskSpace      uint64        `json:"total_disk_space"`
	// FencedPartitions lists the fenced partitions (Strata's extension).
	FencedPartitions []FencedPartition `json:"fenced_partitions,omitempty"`
}

// ClusterNode is one node of ClusterMetadata (§4.11.11).
type ClusterNode struct {
	Name          string `json:"name"`
	IP            string `json:"ip"`
	TCPPort       uint16 `json:"tcp_port"`
	QUICPort      uint16 `json:"quic_port"`
	HTTPPort      uint16 `json:"http_port"`
	WebSocketPort uint16 `json:"websocket_port"`
	// Role is 0 leader, 1 follower.
	Role uint8 `json:"role"`
	// Status is 0 healthy, 1 starting, 2 stopping, 3 unreachable,
	// 4 maintenance, 5 unknown.
	Status uint8 `json:"status"`
}

// ClusterMetadata is the cluster description (§4.11.11).
type ClusterMetadata struct {
	Name  string        `json:"name"`
	Nodes []ClusterNode `json:"nodes"`
}

// ConsumerOffset is a stored consumer offset (§4.11.13).
type ConsumerOffset struct {
	PartitionID   uint32 `json:"partition_id"`
	CurrentOffset uint64 `json:"current_offset"`
	StoredOffset  uint64 `json:"stored_offset"`
}

// SendConfirmation is one entry of a SendMessages reply (§4.11.14).
type SendConfirmation struct {
	StreamID    uint32 `json:"stream_id"`
	TopicID     uint32 `json:"topic_id"`
	PartitionID uint32 `json:"partition_id"`
	BaseOffset  uint64 `json:"base_offset"`
}

// ConsumerGroup is a consumer group record (§4.11.7).
type ConsumerGroup struct {
	ID              uint32 `json:"id"`
	PartitionsCount uint32 `json:"partitions_count"`
	MembersCount    uint32 `json:"members_count"`
	Name            string `json:"name"`
}

// ConsumerGroupMember is a member record (§4.11.8).
type ConsumerGroupMember struct {
	ID         uint32   `json:"id"`
	Partitions []uint32 `json:"partitions"`
}

// ConsumerGroupDetails is a group with its members.
type ConsumerGroupDetails struct {
	ConsumerGroup
	Members []ConsumerGroupMember `json:"members"`
}

// Record decoders. net/wire decodes the records, with the codec the server
// encodes them with; the functions below convert its types to the client's.
// Option values are copied: the reply buffer they alias is reused.

// fromWire converts each element of ws; it returns nil for an empty list,
// as the client's JSON renders no records as null.
func fromWire[W, C any](ws []W, convert func(*W) C) []C {
	if len(ws) == 0 {
		return nil
	}
	out := make([]C, len(ws))
	for i := range ws {
		out[i] = convert(&ws[i])
	}
	return out
}

func optionsFromWire(o wire.Options) Options {
	if len(o) == 0 {
		return nil
	}
	out := make(Options, len(o))
	for i, e := range o {
		out[i] = OptionEntry{Key: e.Key, Value: Value{Kind: Kind(e.Value.Kind), Data: bytes.Clone(e.Value.Data)}}
	}
	return out
}

func streamFromWire(s *wire.Stream) Stream {
	return Stream{ID: s.ID, CreatedAt: s.CreatedAt, TopicsCount: s.TopicsCount, SizeBytes: s.SizeBytes,
		MessagesCount: s.MessagesCount, Name: s.Name, Options: optionsFromWire(s.Options)}
}

func topicFromWire(t *wire.TopicHeader) Topic {
	return Topic{ID: t.ID, CreatedAt: t.CreatedAt, PartitionsCount: t.PartitionsCount,
		MessageExpiry: t.MessageExpiry, CompressionAlgorithm: t.CompressionAlgorithm,
		MaxTopicSize: t.MaxTopicSize, SizeBytes: t.SizeBytes, MessagesCount: t.MessagesCount,
		Name: t.Name, Options: optionsFromWire(t.Options), DerivedOptions: optionsFromWire(t.Derived)}
}

func userFromWire(u *wire.User) User {
	return User{ID: u.ID, CreatedAt: u.CreatedAt, Status: uint8(u.Status), Username: u.Username,
		Options: optionsFromWire(u.Options)}
}

func consumerGroupFromWire(g *wire.ConsumerGroup) ConsumerGroup { return ConsumerGroup(*g) }

func clientInfoFromWire(c *wire.ClientInfo) ClientInfo { return ClientInfo(*c) }

func decodeStreamDetails(p []byte) (*StreamDetails, error) {
	var w wire.StreamDetails
	if err := w.Decode(p); err != nil {
		return nil, err
	}
	return &StreamDetails{Stream: streamFromWire(&w.Stream), Topics: fromWire(w.Topics, topicFromWire)}, nil
}

func decodeTopicDetails(p []byte) (*TopicDetails, error) {
	var w wire.TopicDetails
	if err := w.Decode(p); err != nil {
		return nil, err
	}
	return &TopicDetails{Topic: topicFromWire(&w.TopicHeader),
		Partitions: fromWire(w.Partitions, func(p *wire.Partition) Partition { return Partition(*p) })}, nil
}

func decodeUserDetails(p []byte) (*UserDetails, error) {
	var w wire.UserDetails
	if err := w.Decode(p); err != nil {
		return nil, err
	}
	return &UserDetails{User: userFromWire(&w.User), Permissions: permissionsFromWire(w.Permissions)}, nil
}

func decodeClientDetails(p []byte) (*ClientDetails, error) {
	var w wire.ClientDetails
	if err := w.Decode(p); err != nil {
		return nil, err
	}
	return &ClientDetails{ClientInfo: clientInfoFromWire(&w.ClientInfo),
		ConsumerGroups: fromWire(w.ConsumerGroups, func(g *wire.ClientGroup) ClientGroup { return ClientGroup(*g) })}, nil
}

func decodeStats(p []byte) (*Stats, error) {
	var w wire.Stats
	if err := w.Decode(p); err != nil {
		return nil, err
	}
	return &Stats{ProcessID: w.ProcessID, CPUUsage: w.CPUUsage, TotalCPUUsage: w.TotalCPUUsage,
		MemoryUsage: w.MemoryUsage, TotalMemory: w.TotalMemory, AvailableMemory: w.AvailableMemory,
		RunTime: w.RunTime, StartTime: w.StartTime, ReadBytes: w.ReadBytes, WrittenBytes: w.WrittenBytes,
		MessagesSizeBytes: w.MessagesSizeBytes, StreamsCount: w.StreamsCount, TopicsCount: w.TopicsCount,
		PartitionsCount: w.PartitionsCount, SegmentsCount: w.SegmentsCount, MessagesCount: w.MessagesCount,
		ClientsCount: w.ClientsCount, ConsumerGroupsCount: w.ConsumerGroupsCount, Hostname: w.Hostname,
		OSName: w.OSName, OSVersion: w.OSVersion, KernelVersion: w.KernelVersion,
		ServerVersion: w.ServerVersion, ServerSemver: w.ServerSemver,
		CacheMetrics: fromWire(w.CacheMetrics, func(m *wire.CacheMetrics) CacheMetric { return CacheMetric(*m) }),
		ThreadsCount: w.ThreadsCount, FreeDiskSpace: w.FreeDiskSpace, TotalDiskSpace: w.TotalDiskSpace,
		FencedPartitions: fromWire(w.FencedPartitions, func(f *wire.FencedPartition) FencedPartition { return FencedPartition(*f) })}, nil
}

func decodeClusterMetadata(p []byte) (*ClusterMetadata, error) {
	var w wire.ClusterMetadata
	if err := w.Decode(p); err != nil {
		return nil, err
	}
	return &ClusterMetadata{Name: w.Name,
		Nodes: fromWire(w.Nodes, func(n *wire.ClusterNode) ClusterNode { return ClusterNode(*n) })}, nil
}

func decodeConsumerGroupDetails(p []byte) (*ConsumerGroupDetails, error) {
	var w wire.ConsumerGroupDetails
	if err := w.Decode(p); err != nil {
		return nil, err
	}
	return &ConsumerGroupDetails{ConsumerGroup: consumerGroupFromWire(&w.ConsumerGroup),
		Members: fromWire(w.Members, func(m *wire.ConsumerGroupMember) ConsumerGroupMember { return ConsumerGroupMember(*m) })}, nil
}
