package wire

import (
	"encoding/binary"
	"math"
)

// Transport codes reported in ClientInfo (§4.11.9).
const (
	TransportTCP       uint8 = 1 // TCP and TCP+TLS
	TransportQUIC      uint8 = 2
	TransportHTTP      uint8 = 3 // not reported by the binary protocol
	TransportWebSocket uint8 = 4 // WS and WSS
)

// UserIDNone is the ClientInfo user_id of a connection not logged in.
const UserIDNone uint32 = 0xFFFFFFFF

// ClientInfo is the record of §4.11.9 (GetClients lists them, no count).
type ClientInfo struct {
	// ClientID is the server's connection number, not the protocol
	// client id.
	ClientID            uint32
	UserID              uint32
	Transport           uint8
	Address             string // "ip:port"
	ConsumerGroupsCount uint32
}

// AppendTo appends the record.
func (c *ClientInfo) AppendTo(dst []byte) []byte {
	dst = appendU32(appendU32(dst, c.ClientID), c.UserID)
	dst = appendText32(append(dst, c.Transport), c.Address)
	return appendU32(dst, c.ConsumerGroupsCount)
}

func (d *decoder) clientInfo() ClientInfo {
	return ClientInfo{
		ClientID:            d.u32("client id"),
		UserID:              d.u32("client user id"),
		Transport:           d.u8("client transport"),
		Address:             d.text32("client address"),
		ConsumerGroupsCount: d.u32("client groups count"),
	}
}

// AppendClients appends the GetClients payload (no count).
func AppendClients(dst []byte, clients []ClientInfo) []byte {
	for i := range clients {
		dst = clients[i].AppendTo(dst)
	}
	return dst
}

// DecodeClients decodes the GetClients payload.
func DecodeClients(b []byte) ([]ClientInfo, error) {
	return decodeList(b, (*decoder).clientInfo, "clients")
}

// ClientGroup is one consumer-group membership in ClientDetails.
type ClientGroup struct {
	StreamID uint32
	TopicID  uint32
	GroupID  uint32
}

// ClientDetails is a ClientInfo followed by ConsumerGroupsCount
// memberships (GetMe, GetClient payloads). AppendTo writes
// len(ConsumerGroups) as the count.
type ClientDetails struct {
	ClientInfo
	ConsumerGroups []ClientGroup
}

// AppendTo appends the record.
func (c *ClientDetails) AppendTo(dst []byte) []byte {
	info := c.ClientInfo
	info.ConsumerGroupsCount = uint32(len(c.ConsumerGroups))
	dst = info.AppendTo(dst)
	for _, g := range c.ConsumerGroups {
		dst = appendU32(appendU32(appendU32(dst, g.StreamID), g.TopicID), g.GroupID)
	}
	return dst
}

// Decode decodes a body holding exactly one ClientDetails.
func (c *ClientDetails) Decode(b []byte) error {
	d := newDecoder(b)
	c.ClientInfo = d.clientInfo()
	c.ConsumerGroups = nil
	if d.err == nil && uint64(c.ConsumerGroupsCount)*12 > uint64(d.remaining()) {
		d.failf(ErrTruncated, "%d memberships in %d bytes", c.ConsumerGroupsCount, d.remaining())
	}
	for i := uint32(0); i < c.ConsumerGroupsCount && d.err == nil; i++ {
		c.ConsumerGroups = append(c.ConsumerGroups, ClientGroup{
			StreamID: d.u32("group stream"), TopicID: d.u32("group topic"), GroupID: d.u32("group id"),
		})
	}
	return d.end("client details")
}

// CacheMetrics is one per-partition cache entry of Stats (32 bytes).
type CacheMetrics struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	Hits        uint64
	Misses      uint64
	HitRatio    float32
}

// FencedPartition is one entry of the Stats extension (Strata's, after
// total_disk_space): a partition that serves only its verified prefix.
type FencedPartition struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	// ServedBelow is the first offset not served.
	ServedBelow uint64
	// File is the damaged segment file or the partition directory;
	// Position the byte of File where the damage starts.
	File     string
	Position uint64
	Reason   string
}

// Stats is the GetStats payload (§4.11.10). FencedPartitions is Strata's
// extension: present on the wire only when a partition is fenced, as
// `[count u32]` and per entry `[stream_id u32][topic_id u32]
// [partition_id u32][served_below u64][file: len u32 + UTF-8]
// [position u64][reason: len u32 + UTF-8]` after total_disk_space. Iggy's
// SDKs stop reading at total_disk_space, so they ignore it.
type Stats struct {
	ProcessID           uint32
	CPUUsage            float32
	TotalCPUUsage       float32
	MemoryUsage         uint64
	TotalMemory         uint64
	AvailableMemory     uint64
	RunTime             uint64 // micros
	StartTime           uint64 // micros since the epoch
	ReadBytes           uint64
	WrittenBytes        uint64
	MessagesSizeBytes   uint64
	StreamsCount        uint32
	TopicsCount         uint32
	PartitionsCount     uint32
	SegmentsCount       uint32
	MessagesCount       uint64
	ClientsCount        uint32
	ConsumerGroupsCount uint32
	Hostname            string
	OSName              string
	OSVersion           string
	KernelVersion       string
	ServerVersion       string
	// ServerSemver is major·10⁶ + minor·10³ + patch; 0 = absent.
	ServerSemver     uint32
	CacheMetrics     []CacheMetrics
	ThreadsCount     uint32
	FreeDiskSpace    uint64
	TotalDiskSpace   uint64
	FencedPartitions []FencedPartition
}

func appendF32(dst []byte, v float32) []byte { return appendU32(dst, math.Float32bits(v)) }

// AppendTo appends the record.
func (s *Stats) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, s.ProcessID)
	dst = appendF32(dst, s.CPUUsage)
	dst = appendF32(dst, s.TotalCPUUsage)
	for _, v := range [...]uint64{s.MemoryUsage, s.TotalMemory, s.AvailableMemory, s.RunTime,
		s.StartTime, s.ReadBytes, s.WrittenBytes, s.MessagesSizeBytes} {
		dst = appendU64(dst, v)
	}
	for _, v := range [...]uint32{s.StreamsCount, s.TopicsCount, s.PartitionsCount, s.SegmentsCount} {
		dst = appendU32(dst, v)
	}
	dst = appendU64(dst, s.MessagesCount)
	dst = appendU32(appendU32(dst, s.ClientsCount), s.ConsumerGroupsCount)
	for _, v := range [...]string{s.Hostname, s.OSName, s.OSVersion, s.KernelVersion, s.ServerVersion} {
		dst = appendText32(dst, v)
	}
	dst = appendU32(dst, s.ServerSemver)
	dst = appendU32(dst, uint32(len(s.CacheMetrics)))
	for _, c := range s.CacheMetrics {
		dst = appendU32(appendU32(appendU32(dst, c.StreamID), c.TopicID), c.PartitionID)
		dst = appendF32(appendU64(appendU64(dst, c.Hits), c.Misses), c.HitRatio)
	}
	dst = appendU32(dst, s.ThreadsCount)
	dst = appendU64(appendU64(dst, s.FreeDiskSpace), s.TotalDiskSpace)
	if len(s.FencedPartitions) == 0 {
		return dst // byte for byte Iggy's record
	}
	dst = appendU32(dst, uint32(len(s.FencedPartitions)))
	for _, f := range s.FencedPartitions {
		dst = appendU32(appendU32(appendU32(dst, f.StreamID), f.TopicID), f.PartitionID)
		dst = appendText32(appendU64(dst, f.ServedBelow), f.File)
		dst = appendText32(appendU64(dst, f.Position), f.Reason)
	}
	return dst
}

// fencedPartitionBytesMin is the size of a FencedPartition entry with
// empty texts.
const fencedPartitionBytesMin = 4 + 4 + 4 + 8 + 4 + 8 + 4

// Decode decodes a body holding exactly one Stats record.
func (s *Stats) Decode(b []byte) error {
	d := newDecoder(b)
	f32 := func(what string) float32 { return math.Float32frombits(d.u32(what)) }
	*s = Stats{}
	s.ProcessID = d.u32("process id")
	s.CPUUsage = f32("cpu usage")
	s.TotalCPUUsage = f32("total cpu usage")
	for _, p := range [...]*uint64{&s.MemoryUsage, &s.TotalMemory, &s.AvailableMemory, &s.RunTime,
		&s.StartTime, &s.ReadBytes, &s.WrittenBytes, &s.MessagesSizeBytes} {
		*p = d.u64("stats")
	}
	for _, p := range [...]*uint32{&s.StreamsCount, &s.TopicsCount, &s.PartitionsCount, &s.SegmentsCount} {
		*p = d.u32("stats")
	}
	s.MessagesCount = d.u64("messages count")
	s.ClientsCount = d.u32("clients count")
	s.ConsumerGroupsCount = d.u32("groups count")
	for _, p := range [...]*string{&s.Hostname, &s.OSName, &s.OSVersion, &s.KernelVersion, &s.ServerVersion} {
		*p = d.text32("stats text")
	}
	s.ServerSemver = d.u32("server semver")
	n := d.u32("cache metrics count")
	if d.err == nil && uint64(n)*32 > uint64(d.remaining()) {
		d.failf(ErrTruncated, "%d cache entries in %d bytes", n, d.remaining())
	}
	for i := uint32(0); i < n && d.err == nil; i++ {
		s.CacheMetrics = append(s.CacheMetrics, CacheMetrics{
			StreamID: d.u32("cache"), TopicID: d.u32("cache"), PartitionID: d.u32("cache"),
			Hits: d.u64("cache"), Misses: d.u64("cache"), HitRatio: f32("cache"),
		})
	}
	s.ThreadsCount = d.u32("threads count")
	s.FreeDiskSpace = d.u64("free disk")
	s.TotalDiskSpace = d.u64("total disk")
	if d.err != nil || d.remaining() == 0 {
		return d.end("stats")
	}
	fenced := d.u32("fenced partitions count")
	if d.err == nil && uint64(fenced)*fencedPartitionBytesMin > uint64(d.remaining()) {
		d.failf(ErrTruncated, "%d fenced partitions in %d bytes", fenced, d.remaining())
	}
	for i := uint32(0); i < fenced && d.err == nil; i++ {
		f := FencedPartition{StreamID: d.u32("fenced stream"), TopicID: d.u32("fenced topic"),
			PartitionID: d.u32("fenced partition"), ServedBelow: d.u64("fenced served below")}
		f.File = d.text32("fenced file")
		f.Position = d.u64("fenced position")
		f.Reason = d.text32("fenced reason")
		s.FencedPartitions = append(s.FencedPartitions, f)
	}
	return d.end("stats")
}

// Cluster node roles and statuses (§4.11.11).
const (
	NodeRoleLeader   uint8 = 0
	NodeRoleFollower uint8 = 1

	NodeStatusHealthy     uint8 = 0
	NodeStatusStarting    uint8 = 1
	NodeStatusStopping    uint8 = 2
	NodeStatusUnreachable uint8 = 3
	NodeStatusMaintenance uint8 = 4
	NodeStatusUnknown     uint8 = 5
)

// Single-node cluster names (§4.11.11).
const (
	SingleNodeClusterName = "single-node"
	SingleNodeName        = "iggy-node"
)

// ClusterNode is one node of ClusterMetadata.
type ClusterNode struct {
	Name          string
	IP            string
	TCPPort       uint16
	QUICPort      uint16
	HTTPPort      uint16
	WebSocketPort uint16
	Role          uint8
	Status        uint8
}

// ClusterMetadata is the GetClusterMetadata payload (§4.11.11).
type ClusterMetadata struct {
	Name  string
	Nodes []ClusterNode
}

// AppendTo appends the record.
func (c *ClusterMetadata) AppendTo(dst []byte) []byte {
	dst = appendU32(appendText32(dst, c.Name), uint32(len(c.Nodes)))
	for _, n := range c.Nodes {
		dst = appendText32(appendText32(dst, n.Name), n.IP)
		for _, p := range [...]uint16{n.TCPPort, n.QUICPort, n.HTTPPort, n.WebSocketPort} {
			dst = appendU16(dst, p)
		}
		dst = append(dst, n.Role, n.Status)
	}
	return dst
}

// Decode decodes a body holding exactly one ClusterMetadata.
func (c *ClusterMetadata) Decode(b []byte) error {
	d := newDecoder(b)
	c.Name = d.text32("cluster name")
	n := d.u32("nodes count")
	c.Nodes = nil
	for i := uint32(0); i < n && d.err == nil; i++ {
		c.Nodes = append(c.Nodes, ClusterNode{
			Name: d.text32("node name"), IP: d.text32("node ip"),
			TCPPort: d.u16("port"), QUICPort: d.u16("port"), HTTPPort: d.u16("port"), WebSocketPort: d.u16("port"),
			Role: d.u8("role"), Status: d.u8("status"),
		})
	}
	return d.end("cluster metadata")
}

// OptionDescriptor is one DescribeOptions entry (§4.11.12).
type OptionDescriptor struct {
	Key         string
	Kind        TLVKind
	Default     []byte
	Description string
}

// OptionScope is the DescribeOptions request scope byte.
type OptionScope uint8

// DescribeOptions scopes.
const (
	OptionScopeTopic  OptionScope = 1
	OptionScopeStream OptionScope = 2
	OptionScopeUser   OptionScope = 3
)

// DescribeOptionsReply is the DescribeOptions payload: [count u32] +
// descriptors.
type DescribeOptionsReply struct {
	Descriptors []OptionDescriptor
}

// AppendTo appends the payload.
func (r *DescribeOptionsReply) AppendTo(dst []byte) ([]byte, error) {
	dst = appendU32(dst, uint32(len(r.Descriptors)))
	var err error
	for _, o := range r.Descriptors {
		if dst, err = AppendName(dst, o.Key); err != nil {
			return dst, err
		}
		dst = append(dst, byte(o.Kind))
		dst = append(appendU32(dst, uint32(len(o.Default))), o.Default...)
		dst = appendText32(dst, o.Description)
	}
	return dst, nil
}

// Decode decodes the payload.
func (r *DescribeOptionsReply) Decode(b []byte) error {
	d := newDecoder(b)
	n := d.u32("descriptor count")
	r.Descriptors = nil
	for i := uint32(0); i < n && d.err == nil; i++ {
		r.Descriptors = append(r.Descriptors, OptionDescriptor{
			Key: d.name("option key"), Kind: TLVKind(d.u8("option kind")),
			Default: d.bytes32("option default"), Description: d.text32("option description"),
		})
	}
	return d.end("describe options")
}

// u64Bytes returns v little-endian as a fresh slice.
func u64Bytes(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// TopicOptionDescriptors returns the topic-scope DescribeOptions answer of
// the reference server: its eight entries in its order (§5.1).
func TopicOptionDescriptors() []OptionDescriptor {
	all := TopicOptionDescriptorsWithExtensions()
	return all[:referenceTopicOptionCount]
}

// referenceTopicOptionCount is the number of topic keys the reference
// server describes.
const referenceTopicOptionCount = 8

// TopicOptionDescriptorsWithExtensions is TopicOptionDescriptors followed by
// Strata's two extension keys, durability and consumer_offset_durability.
// A server that advertises them departs from the reference's 8-entry
// answer; whether to is the server's choice.
func TopicOptionDescriptorsWithExtensions() []OptionDescriptor {
	return []OptionDescriptor{
		{TopicOptionCompressionAlgorithm, TLVString, []byte("none"), "compression algorithm: none or gzip"},
		{TopicOptionMessageExpiry, TLVUint64, u64Bytes(math.MaxUint64), "message expiry in micros or a humantime string (\"7 days\"); 0 = server default"},
		{TopicOptionMaxTopicSize, TLVUint64, u64Bytes(math.MaxUint64), "maximum topic size in bytes or a byte-size string (\"1 GiB\"); must be at least the segment size"},
		{TopicOptionSegmentSize, TLVUint64, u64Bytes(DefaultSegmentSize), "segment size: a multiple of 512 bytes, 1 MiB..1 GiB"},
		{TopicOptionEnforceFsync, TLVBool, []byte{0}, "fsync every write"},
		{TopicOptionMessagesRequiredToSave, TLVUint32, binary.LittleEndian.AppendUint32(nil, DefaultMessagesRequiredToSave), "messages buffered before a flush: 1..16777216"},
		{TopicOptionSizeOfMessagesRequiredToSave, TLVUint64, u64Bytes(DefaultSizeOfMessagesRequiredToSave), "bytes buffered before a flush: at most 1 GiB"},
		{TopicOptionPreallocateSegments, TLVBool, []byte{0}, "preallocate segment files; segment_size x partitions must stay within 64 GiB"},
		{TopicOptionDurability, TLVString, []byte(DurabilityReplicated.String()), "Strata: replicated (in-memory quorum) or persisted (fsynced prepare WAL)"},
		{TopicOptionConsumerOffsetDurability, TLVString, []byte(DurabilityReplicated.String()), "Strata: durability of consumer offsets, replicated or persisted"},
	}
}
