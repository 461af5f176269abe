package metadata

import "github.com/stratabroker/strata/net/wire/statecodec"

// StateBytesMax bounds the machine's encoded state, its checkpoint
// (Checkpoint). The metadata group checkpoints the whole state into an
// area of 64 MiB shared with its client table (at most 32 MiB,
// [metadata] clients_table_bytes_max); a checkpoint that does not fit
// fails the replica, and a restart replays the same ops into the same
// failure. So an operation that could grow the state past the bound is
// refused as a committed rejection (limitCode), and the room left above
// it (8 MiB) covers what the operations never refused (deletes, purges,
// leaves, hand-offs: they free state or move it) can add.
const StateBytesMax = 24 << 20

// SetStateBytesMax replaces StateBytesMax for this machine (tests). Every
// replica of a group must use the same bound: refusals are replicated
// outcomes.
func (m *Machine) SetStateBytesMax(n int) { m.sizeMax = n }

// stateBytes returns the length Checkpoint would have, computed without
// encoding (cached until the next applied op).
func (m *Machine) stateBytes() int {
	if m.size >= 0 {
		return m.size
	}
	n := statecodec.CheckpointHeaderSize + 8 + 8 + 4 + 4 + statecodec.CheckpointTrailerSize
	for _, s := range m.streams {
		n += 4 + 1 + len(s.Name) + 8 + 4
		for _, t := range s.topics {
			n += topicBytes(t)
		}
	}
	for _, u := range m.users {
		n += userBytes(u)
	}
	m.size = n
	return n
}

// topicOptionsBytes is the encoded size of TopicOptions (appendTo).
var topicOptionsBytes = len((&TopicOptions{}).appendTo(nil))

func topicBytes(t *Topic) int {
	n := 4 + 1 + len(t.Name) + 8 + topicOptionsBytes + 4 + len(t.ExplicitOptions) + 4 + len(t.DerivedOptions) + 4 + partitionBytes*len(t.Partitions)
	n += 4 + 4
	for _, g := range t.groups {
		n += groupBytes(g)
	}
	return n
}

// partitionBytes is a partition's record: id, created at, consensus group.
const partitionBytes = 4 + 8 + 8

// groupFixedBytes is a group's encoding besides its name, members and
// hand-offs; memberBytes a member's besides its partitions.
const (
	groupFixedBytes = 4 + 1 + 8 + 4 + 4
	memberBytes     = 4 + 16 + 4
	handOffBytes    = 4 + 4 + 4 + 8
)

func groupBytes(g *ConsumerGroup) int {
	n := groupFixedBytes + len(g.Name) + handOffBytes*len(g.handOffs)
	for _, mb := range g.members {
		n += memberBytes + 4*len(mb.Partitions)
	}
	return n
}

// groupBytesMax is the most a group named name can encode to with members
// members over a topic of partitions partitions: every partition assigned
// once and in one hand-off at most.
func groupBytesMax(name string, members, partitions int) int {
	return groupFixedBytes + len(name) + memberBytes*members + (4+handOffBytes)*partitions
}

func userBytes(u *User) int {
	n := 4 + 1 + len(u.Username) + 4 + len(u.PasswordHash) + 1 + 8
	n += len(appendOptionalPermissions(nil, u.Permissions))
	n += 4 + len(u.Options) + 4
	for _, t := range u.Tokens {
		n += 1 + len(t.Name) + 4 + len(t.Hash) + 8 + 8
	}
	return n
}

// opSlackBytes covers an op's fixed fields in the state it adds to.
const opSlackBytes = 256

// growthBound returns the most applying o (whose encoded body is
// bodyLen bytes) can add to the state, and whether o is bounded at all:
// the operations that free or move state (deletes, purges, leaves,
// hand-offs) are never refused. Every field an op stores comes from its
// body, so the body's length bounds them; partitions and consumer groups
// add what their counts make (partitionBytes a partition).
func (m *Machine) growthBound(o Op, bodyLen int) (int, bool) {
	base := opSlackBytes + bodyLen
	switch o := o.(type) {
	case *CreateStream, *UpdateStream, *UpdateTopic, *CreateUser, *UpdateUser, *ChangePassword,
		*UpdatePermissions, *CreatePersonalAccessToken, *CreateConsumerGroup:
		return base, true
	case *CreateTopic:
		return base + partitionBytes*int(o.PartitionsCount), true
	case *CreatePartitions:
		_, t, code := m.resolveTopic(o.Stream, o.Topic)
		if code != CodeOK {
			return 0, true // refused by Apply itself
		}
		n := base + partitionBytes*int(o.Count)
		for _, g := range t.groups {
			n += max(0, groupBytesMax(g.Name, len(g.members), len(t.Partitions)+int(o.Count))-groupBytes(g))
		}
		return n, true
	case *JoinConsumerGroup:
		_, t, code := m.resolveTopic(o.Stream, o.Topic)
		if code != CodeOK {
			return 0, true
		}
		g := t.Group(o.Group)
		if g == nil {
			return 0, true
		}
		return base + max(0, groupBytesMax(g.Name, len(g.members)+1, len(t.Partitions))-groupBytes(g)), true
	}
	return 0, false
}

// limitCode is the committed rejection of an op refused for the state's
// bound: the limit code Iggy gives the same kind of request.
func limitCode(o Op) Code {
	switch o.(type) {
	case *CreateStream, *UpdateStream:
		return CodeTooManyStreams
	case *CreateTopic, *UpdateTopic:
		return CodeTooManyTopics
	case *CreatePartitions:
		return CodeTooManyPartitions
	case *CreatePersonalAccessToken:
		return CodePersonalAccessTokensLimit
	case *CreateConsumerGroup, *JoinConsumerGroup:
		return CodeCannotCreateConsumerGroupInfo
	}
	return CodeUsersLimitReached
}

// admits reports whether the state has room for what o may add.
func (m *Machine) admits(o Op, bodyLen int) bool {
	bound, bounded := m.growthBound(o, bodyLen)
	return !bounded || m.stateBytes()+bound <= m.sizeMax
}
