package metadata

import (
	"slices"
	"sort"
)

// ClientID is a protocol client id (the u128 of the request header), the
// identity of a consumer-group member (PROTOCOL.md §7).
type ClientID struct {
	Lo, Hi uint64
}

// less orders client ids (Hi, then Lo).
func (c ClientID) less(o ClientID) bool {
	return c.Hi < o.Hi || (c.Hi == o.Hi && c.Lo < o.Lo)
}

// ConsumerGroup is one consumer group of a topic (read-only outside the
// package; valid until the next Apply or Restore).
type ConsumerGroup struct {
	ID   uint32
	Name string
	// Generation is +1 on every rebalance (§7).
	Generation uint64
	// members in ascending slot order.
	// Invariant: slots and clients unique; every partition id of the topic
	// is owned by at most one member.
	members []*Member
	// handOffs are the pending hand-offs in ascending partition order.
	// Invariant: each names a partition owned by From, and To != From is a
	// member.
	handOffs []HandOff
}

// Member is one member of a group.
type Member struct {
	// Slot is the member id on the wire: 0-based, lowest free reused.
	Slot   uint32
	Client ClientID
	// Partitions in assignment order, including those pending hand-off
	// away from this member.
	Partitions []uint32
}

// HandOff is a partition that moves from one member to another once the
// group's committed offset catches up with what the source was served
// (§7, cooperative rebalance).
type HandOff struct {
	PartitionID uint32
	// From and To are member slots.
	From, To uint32
	// SinceMicros is the timestamp of the operation that started it.
	SinceMicros uint64
}

// Groups returns t's consumer groups in ascending id order.
func (t *Topic) Groups() []*ConsumerGroup { return t.groups }

// Group returns the group id names (numeric id or name), or nil.
func (t *Topic) Group(id Identifier) *ConsumerGroup {
	if id.Numeric {
		i := sort.Search(len(t.groups), func(i int) bool { return t.groups[i].ID >= id.ID })
		if i < len(t.groups) && t.groups[i].ID == id.ID {
			return t.groups[i]
		}
		return nil
	}
	for _, g := range t.groups {
		if g.Name == id.Name {
			return g
		}
	}
	return nil
}

// Members returns g's members in slot order.
func (g *ConsumerGroup) Members() []*Member { return g.members }

// HandOffs returns g's pending hand-offs in ascending partition order.
func (g *ConsumerGroup) HandOffs() []HandOff { return g.handOffs }

// Member returns the member that client is, or nil.
func (g *ConsumerGroup) Member(client ClientID) *Member {
	for _, m := range g.members {
		if m.Client == client {
			return m
		}
	}
	return nil
}

// handOff returns the index of the pending hand-off of partition, or -1.
func (g *ConsumerGroup) handOff(partition uint32) int {
	for i := range g.handOffs {
		if g.handOffs[i].PartitionID == partition {
			return i
		}
	}
	return -1
}

// isHandOffTarget reports whether slot awaits a hand-off.
func (g *ConsumerGroup) isHandOffTarget(slot uint32) bool {
	for _, h := range g.handOffs {
		if h.To == slot {
			return true
		}
	}
	return false
}

// Sync returns what SyncConsumerGroup answers client (§7): the generation
// and the partitions it may poll now (owned minus pending hand-off, in
// assignment order). ok is false when client is not a member.
func (g *ConsumerGroup) Sync(client ClientID) (generation uint64, partitions []uint32, ok bool) {
	m := g.Member(client)
	if m == nil {
		return 0, nil, false
	}
	partitions = make([]uint32, 0, len(m.Partitions))
	for _, p := range m.Partitions {
		if g.handOff(p) < 0 {
			partitions = append(partitions, p)
		}
	}
	return g.Generation, partitions, true
}

// Owns reports whether client owns partition, pending hand-off included
// (the group offset write fence, §7).
func (g *ConsumerGroup) Owns(client ClientID, partition uint32) bool {
	m := g.Member(client)
	return m != nil && slices.Contains(m.Partitions, partition)
}

// MayPoll reports whether client may poll partition now: owned and not
// pending hand-off (the group poll fence, §7).
func (g *ConsumerGroup) MayPoll(client ClientID, partition uint32) bool {
	return g.Owns(client, partition) && g.handOff(partition) < 0
}

// IsGroupMember reports whether client is a member of any group.
func (m *Machine) IsGroupMember(client ClientID) bool {
	for _, s := range m.streams {
		for _, t := range s.topics {
			for _, g := range t.groups {
				if g.Member(client) != nil {
					return true
				}
			}
		}
	}
	return false
}

// GroupMemberClients returns every client id that is a member of at least
// one group, ascending and without duplicates.
func (m *Machine) GroupMemberClients() []ClientID {
	seen := map[ClientID]bool{}
	var out []ClientID
	for _, s := range m.streams {
		for _, t := range s.topics {
			for _, g := range t.groups {
				for _, mem := range g.members {
					if !seen[mem.Client] {
						seen[mem.Client] = true
						out = append(out, mem.Client)
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

// PendingHandOff locates one pending hand-off for the server, which
// completes it when the group's committed offset catches up or the
// rebalancing timeout passes.
type PendingHandOff struct {
	StreamID, TopicID, GroupID uint32
	HandOff
}

// PendingHandOffs lists every pending hand-off in (stream, topic, group,
// partition) order.
func (m *Machine) PendingHandOffs() []PendingHandOff {
	var out []PendingHandOff
	for _, s := range m.Streams() {
		for _, t := range s.Topics() {
			for _, g := range t.groups {
				for _, h := range g.handOffs {
					out = append(out, PendingHandOff{StreamID: s.ID, TopicID: t.ID, GroupID: g.ID, HandOff: h})
				}
			}
		}
	}
	return out
}

func removeU32(list []uint32, v uint32) []uint32 {
	for i, x := range list {
		if x == v {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// GroupRef names one group of one topic.
type GroupRef struct {
	StreamID, TopicID, GroupID uint32
}

// GroupsOfClient lists the groups client is a member of, in (stream,
// topic, group) order (ClientDetails, §4.11.9).
func (m *Machine) GroupsOfClient(client ClientID) []GroupRef {
	var out []GroupRef
	for _, s := range m.Streams() {
		for _, t := range s.Topics() {
			for _, g := range t.groups {
				if g.Member(client) != nil {
					out = append(out, GroupRef{StreamID: s.ID, TopicID: t.ID, GroupID: g.ID})
				}
			}
		}
	}
	return out
}

// ConsumerGroupsCount returns the number of consumer groups (Stats).
func (m *Machine) ConsumerGroupsCount() int {
	n := 0
	for _, s := range m.streams {
		for _, t := range s.topics {
			n += len(t.groups)
		}
	}
	return n
}
