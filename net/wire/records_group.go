package wire

import "fmt"

// ConsumerGroup is the record of §4.11.7 (GetConsumerGroups lists them).
type ConsumerGroup struct {
	ID uint32
	// PartitionsCount is the topic's partition count.
	PartitionsCount uint32
	MembersCount    uint32
	Name            string
}

// AppendTo appends the record.
func (g *ConsumerGroup) AppendTo(dst []byte) ([]byte, error) {
	dst = appendU32(dst, g.ID)
	dst = appendU32(dst, g.PartitionsCount)
	dst = appendU32(dst, g.MembersCount)
	return AppendName(dst, g.Name)
}

func (d *decoder) consumerGroup() ConsumerGroup {
	return ConsumerGroup{
		ID:              d.u32("group id"),
		PartitionsCount: d.u32("group partitions_count"),
		MembersCount:    d.u32("group members_count"),
		Name:            d.name("group name"),
	}
}

// AppendConsumerGroups appends the GetConsumerGroups payload (no count).
func AppendConsumerGroups(dst []byte, groups []ConsumerGroup) ([]byte, error) {
	var err error
	for i := 0; err == nil && i < len(groups); i++ {
		dst, err = groups[i].AppendTo(dst)
	}
	return dst, err
}

// DecodeConsumerGroups decodes the GetConsumerGroups payload.
func DecodeConsumerGroups(b []byte) ([]ConsumerGroup, error) {
	return decodeList(b, (*decoder).consumerGroup, "consumer groups")
}

// ConsumerGroupMember is the record of §4.11.8.
type ConsumerGroupMember struct {
	// ID is the member's slot in the group (0-based).
	ID         uint32
	Partitions []uint32
}

// AppendTo appends [member_id][count][partition ids].
func (m *ConsumerGroupMember) AppendTo(dst []byte) []byte {
	dst = appendU32(appendU32(dst, m.ID), uint32(len(m.Partitions)))
	for _, p := range m.Partitions {
		dst = appendU32(dst, p)
	}
	return dst
}

func (d *decoder) consumerGroupMember() ConsumerGroupMember {
	m := ConsumerGroupMember{ID: d.u32("member id")}
	m.Partitions = d.u32List("member partitions")
	return m
}

// u32List reads [count u32][u32 × count], bounding count by the input.
func (d *decoder) u32List(what string) []uint32 {
	n := d.u32(what)
	if d.err == nil && uint64(n)*4 > uint64(d.remaining()) {
		d.failf(ErrTruncated, "%s: %d ids, %d bytes left", what, n, d.remaining())
		return nil
	}
	if d.err != nil || n == 0 {
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = d.u32(what)
	}
	return out
}

// ConsumerGroupDetails is a ConsumerGroup followed by exactly MembersCount
// members (GetConsumerGroup and CreateConsumerGroup payloads).
type ConsumerGroupDetails struct {
	ConsumerGroup
	Members []ConsumerGroupMember
}

// AppendTo appends the record; MembersCount must equal len(Members).
func (g *ConsumerGroupDetails) AppendTo(dst []byte) ([]byte, error) {
	if int(g.MembersCount) != len(g.Members) {
		return dst, fmt.Errorf("%w: members_count %d with %d members", ErrBadValue, g.MembersCount, len(g.Members))
	}
	dst, err := g.ConsumerGroup.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	for i := range g.Members {
		dst = g.Members[i].AppendTo(dst)
	}
	return dst, nil
}

// Decode decodes a body holding exactly one ConsumerGroupDetails.
func (g *ConsumerGroupDetails) Decode(b []byte) error {
	d := newDecoder(b)
	g.ConsumerGroup = d.consumerGroup()
	g.Members = nil
	for i := uint32(0); i < g.MembersCount && d.err == nil; i++ {
		g.Members = append(g.Members, d.consumerGroupMember())
	}
	return d.end("consumer group details")
}

// SyncConsumerGroupReply is the SyncConsumerGroup payload (§5.8, §7): the
// group generation and the partitions the caller may poll now. An empty
// body means "not a member".
type SyncConsumerGroupReply struct {
	Generation uint64
	Partitions []uint32
}

// AppendTo appends [generation u64][count u32][ids].
func (s *SyncConsumerGroupReply) AppendTo(dst []byte) []byte {
	dst = appendU32(appendU64(dst, s.Generation), uint32(len(s.Partitions)))
	for _, p := range s.Partitions {
		dst = appendU32(dst, p)
	}
	return dst
}

// Decode decodes a non-empty payload.
func (s *SyncConsumerGroupReply) Decode(b []byte) error {
	d := newDecoder(b)
	s.Generation = d.u64("generation")
	s.Partitions = d.u32List("partitions")
	return d.end("sync reply")
}

// ConsumerOffsetSize is the encoded size of a ConsumerOffset.
const ConsumerOffsetSize = 20

// ConsumerOffset is the GetConsumerOffset payload (§4.11.13).
type ConsumerOffset struct {
	PartitionID   uint32
	CurrentOffset uint64
	StoredOffset  uint64
}

// AppendTo appends the 20-byte record.
func (c *ConsumerOffset) AppendTo(dst []byte) []byte {
	return appendU64(appendU64(appendU32(dst, c.PartitionID), c.CurrentOffset), c.StoredOffset)
}

// Decode decodes a body holding exactly one ConsumerOffset.
func (c *ConsumerOffset) Decode(b []byte) error {
	d := newDecoder(b)
	c.PartitionID = d.u32("partition id")
	c.CurrentOffset = d.u64("current offset")
	c.StoredOffset = d.u64("stored offset")
	return d.end("consumer offset")
}
