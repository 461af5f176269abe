package metadata

import "github.com/stratabroker/strata/net/wire"

// ConsumerGroupRecord returns the ConsumerGroup record of g (§4.11.7).
func ConsumerGroupRecord(t *Topic, g *ConsumerGroup) wire.ConsumerGroup {
	return wire.ConsumerGroup{ID: g.ID, PartitionsCount: uint32(len(t.Partitions)),
		MembersCount: uint32(len(g.members)), Name: g.Name}
}

// ConsumerGroupDetailsRecord returns the ConsumerGroupDetails record of g:
// members in slot order, each with its partitions including those pending
// hand-off (§4.11.8).
func ConsumerGroupDetailsRecord(t *Topic, g *ConsumerGroup) wire.ConsumerGroupDetails {
	out := wire.ConsumerGroupDetails{ConsumerGroup: ConsumerGroupRecord(t, g),
		Members: make([]wire.ConsumerGroupMember, len(g.members))}
	for i, m := range g.members {
		out.Members[i] = wire.ConsumerGroupMember{ID: m.Slot, Partitions: append([]uint32(nil), m.Partitions...)}
	}
	return out
}

// AppendConsumerGroupDetails appends the ConsumerGroupDetails record of g.
// Group names are 1..255 bytes (Apply only stores wire names), so the
// record always encodes.
func AppendConsumerGroupDetails(dst []byte, t *Topic, g *ConsumerGroup) []byte {
	details := ConsumerGroupDetailsRecord(t, g)
	return appendRecord(dst, &details)
}

// AppendConsumerGroups appends the GetConsumerGroups payload: every group
// of t in ascending id order, no count.
func AppendConsumerGroups(dst []byte, t *Topic) []byte {
	for _, g := range t.groups {
		record := ConsumerGroupRecord(t, g)
		dst = appendRecord(dst, &record)
	}
	return dst
}
