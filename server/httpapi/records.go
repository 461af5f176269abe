package httpapi

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// JSON shapes of the records of PROTOCOL.md §4.11, snake_case as Iggy's
// HTTP API renders them. Sizes are bytes, timestamps and expiries micros.

// streamJSON is a Stream; Topics is set for StreamDetails only.
type streamJSON struct {
	ID            uint32            `json:"id"`
	CreatedAt     uint64            `json:"created_at"`
	Name          string            `json:"name"`
	Size          uint64            `json:"size"`
	MessagesCount uint64            `json:"messages_count"`
	TopicsCount   uint32            `json:"topics_count"`
	Options       map[string]string `json:"options"`
	Topics        *[]topicJSON      `json:"topics,omitempty"`
}

// optionValueJSON renders one topic option: its value as text and whether
// the client set it (explicit) or the server resolved it (derived).
type optionValueJSON struct {
	Value    string `json:"value"`
	Explicit bool   `json:"explicit"`
}

// topicJSON is a TopicHeader; Partitions is set for TopicDetails only.
type topicJSON struct {
	ID                   uint32                     `json:"id"`
	CreatedAt            uint64                     `json:"created_at"`
	Name                 string                     `json:"name"`
	Size                 uint64                     `json:"size"`
	MessageExpiry        uint64                     `json:"message_expiry"`
	CompressionAlgorithm string                     `json:"compression_algorithm"`
	MaxTopicSize         uint64                     `json:"max_topic_size"`
	MessagesCount        uint64                     `json:"messages_count"`
	PartitionsCount      uint32                     `json:"partitions_count"`
	Options              map[string]optionValueJSON `json:"options"`
	Partitions           *[]partitionJSON           `json:"partitions,omitempty"`
}

// partitionJSON is a Partition.
type partitionJSON struct {
	ID            uint32 `json:"id"`
	CreatedAt     uint64 `json:"created_at"`
	SegmentsCount uint32 `json:"segments_count"`
	CurrentOffset uint64 `json:"current_offset"`
	Size          uint64 `json:"size"`
	MessagesCount uint64 `json:"messages_count"`
	// Fenced is Strata's: present when the partition is fenced (Iggy's
	// SDKs ignore the key).
	Fenced *partitionFenceJSON `json:"fenced,omitempty"`
}

// partitionFenceJSON says what a fenced partition still serves (the
// offsets below served_below) and where the damage is.
type partitionFenceJSON struct {
	ServedBelow uint64 `json:"served_below"`
	File        string `json:"file"`
	Position    int64  `json:"position"`
	Reason      string `json:"reason"`
}

func streamFrom(s *wire.Stream) streamJSON {
	return streamJSON{ID: s.ID, CreatedAt: s.CreatedAt, Name: s.Name, Size: s.SizeBytes,
		MessagesCount: s.MessagesCount, TopicsCount: s.TopicsCount, Options: plainOptions(s.Options)}
}

func streamDetailsFrom(d *wire.StreamDetails) streamJSON {
	out := streamFrom(&d.Stream)
	topics := make([]topicJSON, 0, len(d.Topics))
	for i := range d.Topics {
		topics = append(topics, topicFrom(&d.Topics[i]))
	}
	out.Topics = &topics
	return out
}

func topicFrom(t *wire.TopicHeader) topicJSON {
	opts := make(map[string]optionValueJSON, len(t.Options)+len(t.Derived))
	for _, o := range t.Derived {
		opts[o.Key] = optionValueJSON{Value: optionText(o.Value), Explicit: false}
	}
	for _, o := range t.Options {
		opts[o.Key] = optionValueJSON{Value: optionText(o.Value), Explicit: true}
	}
	return topicJSON{ID: t.ID, CreatedAt: t.CreatedAt, Name: t.Name, Size: t.SizeBytes,
		MessageExpiry: t.MessageExpiry, CompressionAlgorithm: compressionName(t.CompressionAlgorithm),
		MaxTopicSize: t.MaxTopicSize, MessagesCount: t.MessagesCount, PartitionsCount: t.PartitionsCount,
		Options: opts}
}

// topicDetailsFrom converts a TopicDetails record; fence returns the
// fence of a partition of the topic, if it is fenced.
func topicDetailsFrom(d *wire.TopicDetails, fence func(partitionID uint32) (server.PartitionFence, bool)) topicJSON {
	out := topicFrom(&d.TopicHeader)
	parts := make([]partitionJSON, 0, len(d.Partitions))
	for _, p := range d.Partitions {
		pj := partitionJSON{ID: p.ID, CreatedAt: p.CreatedAt, SegmentsCount: p.SegmentsCount,
			CurrentOffset: p.CurrentOffset, Size: p.SizeBytes, MessagesCount: p.MessagesCount}
		if f, ok := fence(p.ID); ok {
			pj.Fenced = &partitionFenceJSON{ServedBelow: f.ServedBelow, File: f.File, Position: f.Position, Reason: f.Reason}
		}
		parts = append(parts, pj)
	}
	out.Partitions = &parts
	return out
}

// compressionName names a compression code ("none", "gzip").
func compressionName(c uint8) string {
	switch c {
	case wire.CompressionGzip:
		return "gzip"
	case wire.CompressionNone:
		return "none"
	}
	return strconv.Itoa(int(c))
}

// plainOptions renders an options block as key → text.
func plainOptions(opts wire.Options) map[string]string {
	out := make(map[string]string, len(opts))
	for _, o := range opts {
		out[o.Key] = optionText(o.Value)
	}
	return out
}

// tlvKindNames are the JSON names of the TLV kinds (§4.7), index = kind.
var tlvKindNames = [...]string{"", "raw", "string", "bool", "int8", "int16", "int32", "int64", "int128",
	"uint8", "uint16", "uint32", "uint64", "uint128", "float32", "float64"}

// tlvKindName names a TLV kind.
func tlvKindName(k wire.TLVKind) string {
	if int(k) < len(tlvKindNames) && k.Valid() {
		return tlvKindNames[k]
	}
	return strconv.Itoa(int(k))
}

// tlvKindByName is the inverse of tlvKindName.
func tlvKindByName(name string) (wire.TLVKind, bool) {
	for i, n := range tlvKindNames {
		if n != "" && n == name {
			return wire.TLVKind(i), true
		}
	}
	return 0, false
}

// optionText renders a TLV value as text: strings as they are, numbers in
// decimal, bools as true/false, raw bytes and 128-bit values in base64.
func optionText(v wire.TLVItem) string {
	d := v.Data
	if size := v.Kind.FixedSize(); size > 0 && len(d) != size {
		return base64.StdEncoding.EncodeToString(d)
	}
	switch v.Kind {
	case wire.TLVString:
		return string(d)
	case wire.TLVBool:
		return strconv.FormatBool(d[0] != 0)
	case wire.TLVInt8:
		return strconv.FormatInt(int64(int8(d[0])), 10)
	case wire.TLVInt16:
		return strconv.FormatInt(int64(int16(binary.LittleEndian.Uint16(d))), 10)
	case wire.TLVInt32:
		return strconv.FormatInt(int64(int32(binary.LittleEndian.Uint32(d))), 10)
	case wire.TLVInt64:
		return strconv.FormatInt(int64(binary.LittleEndian.Uint64(d)), 10)
	case wire.TLVUint8:
		return strconv.FormatUint(uint64(d[0]), 10)
	case wire.TLVUint16:
		return strconv.FormatUint(uint64(binary.LittleEndian.Uint16(d)), 10)
	case wire.TLVUint32:
		return strconv.FormatUint(uint64(binary.LittleEndian.Uint32(d)), 10)
	case wire.TLVUint64:
		return strconv.FormatUint(binary.LittleEndian.Uint64(d), 10)
	case wire.TLVFloat32:
		return strconv.FormatFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(d))), 'g', -1, 32)
	case wire.TLVFloat64:
		return strconv.FormatFloat(math.Float64frombits(binary.LittleEndian.Uint64(d)), 'g', -1, 64)
	}
	return base64.StdEncoding.EncodeToString(d)
}

// userJSON is a User.
type userJSON struct {
	ID        uint32            `json:"id"`
	CreatedAt uint64            `json:"created_at"`
	Status    string            `json:"status"`
	Username  string            `json:"username"`
	Options   map[string]string `json:"options"`
}

func userStatusName(s wire.UserStatus) string {
	if s == wire.UserInactive {
		return "inactive"
	}
	return "active"
}

func userFrom(u *wire.User) userJSON {
	return userJSON{ID: u.ID, CreatedAt: u.CreatedAt, Status: userStatusName(u.Status), Username: u.Username,
		Options: plainOptions(u.Options)}
}

// userDetailsJSON is UserDetails: a User's fields, then permissions,
// always present (null when the user has none).
type userDetailsJSON struct {
	userJSON
	Permissions *permissionsJSON `json:"permissions"`
}

func userDetailsFrom(u *wire.UserDetails) userDetailsJSON {
	out := userDetailsJSON{userJSON: userFrom(&u.User)}
	if u.Permissions != nil {
		p := permissionsFrom(u.Permissions)
		out.Permissions = &p
	}
	return out
}

// patJSON is a personal access token list entry; ExpiryAt is null for a
// token that never expires.
type patJSON struct {
	Name     string  `json:"name"`
	ExpiryAt *uint64 `json:"expiry_at"`
}

// groupJSON is a ConsumerGroup; Members is set for details only.
type groupJSON struct {
	ID              uint32        `json:"id"`
	Name            string        `json:"name"`
	PartitionsCount uint32        `json:"partitions_count"`
	MembersCount    uint32        `json:"members_count"`
	Members         *[]memberJSON `json:"members,omitempty"`
}

// memberJSON is a ConsumerGroupMember.
type memberJSON struct {
	ID              uint32   `json:"id"`
	PartitionsCount uint32   `json:"partitions_count"`
	Partitions      []uint32 `json:"partitions"`
}

func groupFrom(g *wire.ConsumerGroup) groupJSON {
	return groupJSON{ID: g.ID, Name: g.Name, PartitionsCount: g.PartitionsCount, MembersCount: g.MembersCount}
}

func groupDetailsFrom(g *wire.ConsumerGroupDetails) groupJSON {
	out := groupFrom(&g.ConsumerGroup)
	members := make([]memberJSON, 0, len(g.Members))
	for _, m := range g.Members {
		parts := m.Partitions
		if parts == nil {
			parts = []uint32{}
		}
		members = append(members, memberJSON{ID: m.ID, PartitionsCount: uint32(len(parts)), Partitions: parts})
	}
	out.Members = &members
	return out
}

// offsetJSON is a ConsumerOffset.
type offsetJSON struct {
	PartitionID   uint32 `json:"partition_id"`
	CurrentOffset uint64 `json:"current_offset"`
	StoredOffset  uint64 `json:"stored_offset"`
}

// clientJSON is a ClientInfo; ConsumerGroups is set for details only.
// UserID is null for a connection that has not logged in.
type clientJSON struct {
	ClientID            uint32             `json:"client_id"`
	UserID              *uint32            `json:"user_id"`
	Address             string             `json:"address"`
	Transport           string             `json:"transport"`
	ConsumerGroupsCount uint32             `json:"consumer_groups_count"`
	ConsumerGroups      *[]clientGroupJSON `json:"consumer_groups,omitempty"`
}

// clientGroupJSON is one membership of a client.
type clientGroupJSON struct {
	StreamID uint32 `json:"stream_id"`
	TopicID  uint32 `json:"topic_id"`
	GroupID  uint32 `json:"group_id"`
}

// transportName names a ClientInfo transport code.
func transportName(t uint8) string {
	switch t {
	case wire.TransportTCP:
		return "tcp"
	case wire.TransportQUIC:
		return "quic"
	case wire.TransportHTTP:
		return "http"
	case wire.TransportWebSocket:
		return "websocket"
	}
	return strconv.Itoa(int(t))
}

func clientFrom(c *wire.ClientInfo) clientJSON {
	out := clientJSON{ClientID: c.ClientID, Address: c.Address, Transport: transportName(c.Transport),
		ConsumerGroupsCount: c.ConsumerGroupsCount}
	if c.UserID != wire.UserIDNone {
		id := c.UserID
		out.UserID = &id
	}
	return out
}

func clientDetailsFrom(c *wire.ClientDetails) clientJSON {
	out := clientFrom(&c.ClientInfo)
	groups := make([]clientGroupJSON, 0, len(c.ConsumerGroups))
	for _, g := range c.ConsumerGroups {
		groups = append(groups, clientGroupJSON{StreamID: g.StreamID, TopicID: g.TopicID, GroupID: g.GroupID})
	}
	out.ConsumerGroups = &groups
	return out
}
