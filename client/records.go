package client

import (
	"fmt"

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

// Record decoders. Each reads one record from r; errors stick in r.

func readOptionsBlock(r *reader, what string) Options {
	block := r.block32(what)
	if r.err != nil || len(block) == 0 {
		return nil
	}
	o, err := parseOptions(block)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("%s: %w", what, err)
	}
	return o
}

func readStream(r *reader) Stream {
	var s Stream
	s.ID = r.u32("stream id")
	s.CreatedAt = r.u64("created_at")
	s.TopicsCount = r.u32("topics_count")
	s.SizeBytes = r.u64("size_bytes")
	s.MessagesCount = r.u64("messages_count")
	s.Name = r.name("stream name")
	s.Options = readOptionsBlock(r, "stream options")
	return s
}

func readTopic(r *reader) Topic {
	var t Topic
	t.ID = r.u32("topic id")
	t.CreatedAt = r.u64("created_at")
	t.PartitionsCount = r.u32("partitions_count")
	t.MessageExpiry = r.u64("message_expiry")
	t.CompressionAlgorithm = r.u8("compression_algorithm")
	t.MaxTopicSize = r.u64("max_topic_size")
	t.SizeBytes = r.u64("size_bytes")
	t.MessagesCount = r.u64("messages_count")
	t.Name = r.name("topic name")
	t.Options = readOptionsBlock(r, "topic options")
	t.DerivedOptions = readOptionsBlock(r, "topic derived options")
	return t
}

func readPartition(r *reader) Partition {
	var p Partition
	p.ID = r.u32("partition id")
	p.CreatedAt = r.u64("created_at")
	p.SegmentsCount = r.u32("segments_count")
	p.CurrentOffset = r.u64("current_offset")
	p.SizeBytes = r.u64("size_bytes")
	p.MessagesCount = r.u64("messages_count")
	return p
}

// recordCountMax bounds counts read from the wire before allocating.
func boundedCount(r *reader, n uint32, minRecord int) int {
	if r.err != nil {
		return 0
	}
	if uint64(n)*uint64(minRecord) > uint64(len(r.b)-r.pos) {
		r.fail("record count")
		return 0
	}
	return int(n)
}

func decodeStreamDetails(p []byte) (*StreamDetails, error) {
	r := reader{b: p}
	d := &StreamDetails{Stream: readStream(&r)}
	n := boundedCount(&r, d.TopicsCount, topicRecordMin)
	for i := 0; i < n && r.err == nil; i++ {
		d.Topics = append(d.Topics, readTopic(&r))
	}
	return d, finish(&r)
}

func decodeTopicDetails(p []byte) (*TopicDetails, error) {
	r := reader{b: p}
	d := &TopicDetails{Topic: readTopic(&r)}
	n := boundedCount(&r, d.PartitionsCount, partitionRecordSize)
	for i := 0; i < n && r.err == nil; i++ {
		d.Partitions = append(d.Partitions, readPartition(&r))
	}
	return d, finish(&r)
}

// Minimum record sizes used to bound counts.
const (
	topicRecordMin      = 59
	partitionRecordSize = 40
)

func readUser(r *reader) User {
	var u User
	u.ID = r.u32("user id")
	u.CreatedAt = r.u64("created_at")
	u.Status = r.u8("status")
	u.Username = r.name("username")
	u.Options = readOptionsBlock(r, "user options")
	return u
}

func decodeUserDetails(p []byte) (*UserDetails, error) {
	r := reader{b: p}
	d := &UserDetails{User: readUser(&r)}
	flag := r.u8("permissions flag")
	if r.err == nil && flag == 1 {
		n := r.u32("permissions length")
		block := r.take(int(min(n, uint32(len(p)))), "permissions")
		if r.err == nil {
			perms, err := decodePermissions(block)
			if err != nil {
				return nil, err
			}
			d.Permissions = perms
		}
	} else if r.err == nil {
		// No permissions: four zero bytes in total; the flag was the first.
		r.take(3, "empty permissions")
	}
	return d, finish(&r)
}

func readClientInfo(r *reader) ClientInfo {
	var c ClientInfo
	c.ClientID = r.u32("client_id")
	c.UserID = r.u32("user_id")
	c.Transport = r.u8("transport")
	c.Address = r.text32("address")
	c.ConsumerGroupsCount = r.u32("consumer_groups_count")
	return c
}

func decodeClientDetails(p []byte) (*ClientDetails, error) {
	r := reader{b: p}
	d := &ClientDetails{ClientInfo: readClientInfo(&r)}
	n := boundedCount(&r, d.ConsumerGroupsCount, 12)
	for i := 0; i < n && r.err == nil; i++ {
		d.ConsumerGroups = append(d.ConsumerGroups, ClientGroup{
			StreamID: r.u32("stream_id"), TopicID: r.u32("topic_id"), GroupID: r.u32("group_id")})
	}
	return d, finish(&r)
}

func decodeStats(p []byte) (*Stats, error) {
	r := reader{b: p}
	s := &Stats{}
	s.ProcessID = r.u32("process_id")
	s.CPUUsage = r.f32("cpu_usage")
	s.TotalCPUUsage = r.f32("total_cpu_usage")
	s.MemoryUsage = r.u64("memory_usage")
	s.TotalMemory = r.u64("total_memory")
	s.AvailableMemory = r.u64("available_memory")
	s.RunTime = r.u64("run_time")
	s.StartTime = r.u64("start_time")
	s.ReadBytes = r.u64("read_bytes")
	s.WrittenBytes = r.u64("written_bytes")
	s.MessagesSizeBytes = r.u64("messages_size_bytes")
	s.StreamsCount = r.u32("streams_count")
	s.TopicsCount = r.u32("topics_count")
	s.PartitionsCount = r.u32("partitions_count")
	s.SegmentsCount = r.u32("segments_count")
	s.MessagesCount = r.u64("messages_count")
	s.ClientsCount = r.u32("clients_count")
	s.ConsumerGroupsCount = r.u32("consumer_groups_count")
	s.Hostname = r.text32("hostname")
	s.OSName = r.text32("os_name")
	s.OSVersion = r.text32("os_version")
	s.KernelVersion = r.text32("kernel_version")
	s.ServerVersion = r.text32("server_version")
	s.ServerSemver = r.u32("server_semver")
	n := boundedCount(&r, r.u32("cache_metrics_count"), 32)
	for i := 0; i < n && r.err == nil; i++ {
		s.CacheMetrics = append(s.CacheMetrics, CacheMetric{StreamID: r.u32("stream_id"),
			TopicID: r.u32("topic_id"), PartitionID: r.u32("partition_id"), Hits: r.u64("hits"),
			Misses: r.u64("misses"), HitRatio: r.f32("hit_ratio")})
	}
	s.ThreadsCount = r.u32("threads_count")
	s.FreeDiskSpace = r.u64("free_disk_space")
	s.TotalDiskSpace = r.u64("total_disk_space")
	return s, finish(&r)
}

func decodeClusterMetadata(p []byte) (*ClusterMetadata, error) {
	r := reader{b: p}
	m := &ClusterMetadata{Name: r.text32("cluster name")}
	n := boundedCount(&r, r.u32("nodes_count"), 18)
	for i := 0; i < n && r.err == nil; i++ {
		m.Nodes = append(m.Nodes, ClusterNode{Name: r.text32("node name"), IP: r.text32("node ip"),
			TCPPort: r.u16("tcp_port"), QUICPort: r.u16("quic_port"), HTTPPort: r.u16("http_port"),
			WebSocketPort: r.u16("websocket_port"), Role: r.u8("role"), Status: r.u8("status")})
	}
	return m, finish(&r)
}

func readConsumerGroup(r *reader) ConsumerGroup {
	var g ConsumerGroup
	g.ID = r.u32("group id")
	g.PartitionsCount = r.u32("partitions_count")
	g.MembersCount = r.u32("members_count")
	g.Name = r.name("group name")
	return g
}

func decodeConsumerGroupDetails(p []byte) (*ConsumerGroupDetails, error) {
	r := reader{b: p}
	d := &ConsumerGroupDetails{ConsumerGroup: readConsumerGroup(&r)}
	n := boundedCount(&r, d.MembersCount, 8)
	for i := 0; i < n && r.err == nil; i++ {
		m := ConsumerGroupMember{ID: r.u32("member id")}
		k := boundedCount(&r, r.u32("member partitions_count"), 4)
		for j := 0; j < k && r.err == nil; j++ {
			m.Partitions = append(m.Partitions, r.u32("partition id"))
		}
		d.Members = append(d.Members, m)
	}
	return d, finish(&r)
}

// finish reports the reader's error, or ErrTrailingBytes when input is left.
func finish(r *reader) error {
	if r.err != nil {
		return r.err
	}
	if r.pos != len(r.b) {
		return fmt.Errorf("%d bytes after the record: %w", len(r.b)-r.pos, wire.ErrTrailingBytes)
	}
	return nil
}
