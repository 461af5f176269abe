package metadata

import (
	"slices"
	"sort"
)

// Limits of consumer groups.
const (
	// groupsPerTopicMax bounds the live groups of one topic (5007).
	groupsPerTopicMax = 4096
	// membersPerGroupMax bounds the members of one group (5007).
	membersPerGroupMax = 1 << 16
	// groupIDLimit bounds group ids; ids are never reused (5002).
	groupIDLimit = 1 << 31
)

// Consumer-group result codes (§8).
const (
	CodeConsumerGroupIDNotFound        Code = 5000
	CodeInvalidConsumerGroupID         Code = 5002
	CodeConsumerGroupNameAlreadyExists Code = 5004
	CodeConsumerGroupMemberNotFound    Code = 5006
	CodeCannotCreateConsumerGroupInfo  Code = 5007
)

// resolveGroupTopic finds the topic of a group operation and checks the
// GetTopic rule (§5.9: not-found before permissions).
func (m *Machine) resolveGroupTopic(env Envelope, stream, topic Identifier) (*Topic, Code) {
	_, t, code := m.resolveTopic(stream, topic)
	if code != CodeOK {
		return nil, code
	}
	if !m.allowed(env.UserID, func(p *Permissions) bool { return p.CanReadTopic(t.StreamID, t.ID) }) {
		return nil, CodeUnauthorized
	}
	return t, CodeOK
}

// resolveGroup finds a group and its topic as resolveGroupTopic does, or
// returns 5000 when the topic has no such group.
func (m *Machine) resolveGroup(env Envelope, stream, topic, group Identifier) (*Topic, *ConsumerGroup, Code) {
	t, code := m.resolveGroupTopic(env, stream, topic)
	if code != CodeOK {
		return nil, nil, code
	}
	g := t.Group(group)
	if g == nil {
		return nil, nil, CodeConsumerGroupIDNotFound
	}
	return t, g, CodeOK
}

func envelopeClient(env Envelope) ClientID { return ClientID{Lo: env.ClientLo, Hi: env.ClientHi} }

func (m *Machine) createConsumerGroup(env Envelope, o *CreateConsumerGroup) ([]byte, Code) {
	t, code := m.resolveGroupTopic(env, o.Stream, o.Topic)
	if code != CodeOK {
		return nil, code
	}
	if t.Group(NamedID(o.Name)) != nil {
		return nil, CodeConsumerGroupNameAlreadyExists
	}
	if len(t.groups) >= groupsPerTopicMax {
		return nil, CodeCannotCreateConsumerGroupInfo
	}
	if t.nextGroupID >= groupIDLimit {
		return nil, CodeInvalidConsumerGroupID
	}
	g := &ConsumerGroup{ID: t.nextGroupID, Name: o.Name}
	t.nextGroupID++
	t.groups = append(t.groups, g)
	return AppendConsumerGroupDetails(nil, t, g), CodeOK
}

func (m *Machine) deleteConsumerGroup(env Envelope, o *DeleteConsumerGroup) Code {
	t, g, code := m.resolveGroup(env, o.Stream, o.Topic, o.Group)
	if code != CodeOK {
		return code
	}
	for i := range t.groups {
		if t.groups[i] == g {
			t.groups = append(t.groups[:i:i], t.groups[i+1:]...)
			break
		}
	}
	m.emit(Effect{Kind: EffectConsumerGroupDeleted, StreamID: t.StreamID, TopicID: t.ID, GroupID: g.ID, PartitionIDs: t.partitionIDs()})
	return CodeOK
}

func (m *Machine) joinConsumerGroup(env Envelope, timestamp uint64, o *JoinConsumerGroup) Code {
	t, g, code := m.resolveGroup(env, o.Stream, o.Topic, o.Group)
	if code != CodeOK {
		return code
	}
	client := envelopeClient(env)
	if g.Member(client) != nil {
		return CodeOK
	}
	if len(g.members) >= membersPerGroupMax {
		return CodeCannotCreateConsumerGroupInfo
	}
	g.addMember(client)
	g.rebalanceCooperative(t.partitionIDs(), o.InFlight, timestamp)
	return CodeOK
}

func (m *Machine) leaveConsumerGroup(env Envelope, o *LeaveConsumerGroup) Code {
	t, g, code := m.resolveGroup(env, o.Stream, o.Topic, o.Group)
	if code != CodeOK {
		return code
	}
	if !g.removeMember(envelopeClient(env)) {
		return CodeConsumerGroupMemberNotFound
	}
	g.rebalanceEager(t.partitionIDs())
	return CodeOK
}

// removeConsumerGroupMember removes a client from every group, in
// (stream, topic, group) order.
func (m *Machine) removeConsumerGroupMember(o *RemoveConsumerGroupMember) Code {
	removed := false
	for _, s := range m.Streams() {
		for _, t := range s.Topics() {
			for _, g := range t.groups {
				if g.removeMember(o.Client) {
					g.rebalanceEager(t.partitionIDs())
					removed = true
				}
			}
		}
	}
	if !removed {
		return CodeConsumerGroupMemberNotFound
	}
	return CodeOK
}

func (m *Machine) completeConsumerGroupHandOff(o *CompleteConsumerGroupHandOff) Code {
	s := m.streams[o.StreamID]
	if s == nil {
		return CodeStreamIDNotFound
	}
	t := s.topics[o.TopicID]
	if t == nil {
		return CodeTopicIDNotFound
	}
	g := t.Group(NumericID(o.GroupID))
	if g == nil {
		return CodeConsumerGroupIDNotFound
	}
	i := g.handOff(o.PartitionID)
	if i < 0 {
		return CodeResourceNotFound
	}
	h := g.handOffs[i]
	g.handOffs = append(g.handOffs[:i:i], g.handOffs[i+1:]...)
	from, to := g.memberBySlot(h.From), g.memberBySlot(h.To)
	if from != nil {
		from.Partitions = removeU32(from.Partitions, h.PartitionID)
	}
	if to != nil {
		to.Partitions = append(to.Partitions, h.PartitionID)
	}
	g.Generation++
	return CodeOK
}

// rebalanceTopicGroups runs the eager rebalance of every group of t after
// its partition count changed.
func (t *Topic) rebalanceTopicGroups() {
	ids := t.partitionIDs()
	for _, g := range t.groups {
		g.rebalanceEager(ids)
	}
}

// memberBySlot returns the member in slot, or nil.
func (g *ConsumerGroup) memberBySlot(slot uint32) *Member {
	i := sort.Search(len(g.members), func(i int) bool { return g.members[i].Slot >= slot })
	if i < len(g.members) && g.members[i].Slot == slot {
		return g.members[i]
	}
	return nil
}

// addMember adds client in the lowest free slot, keeping slot order.
func (g *ConsumerGroup) addMember(client ClientID) {
	slot := uint32(0)
	i := 0
	for ; i < len(g.members) && g.members[i].Slot == slot; i++ {
		slot++
	}
	member := &Member{Slot: slot, Client: client}
	g.members = append(g.members, nil)
	copy(g.members[i+1:], g.members[i:])
	g.members[i] = member
}

// removeMember removes client; false when it is not a member.
func (g *ConsumerGroup) removeMember(client ClientID) bool {
	for i, m := range g.members {
		if m.Client == client {
			g.members = append(g.members[:i:i], g.members[i+1:]...)
			return true
		}
	}
	return false
}

// rebalanceEager clears every assignment and hand-off and deals partition
// ids[i] to member i mod M in slot order (§7, leave / removal / partition
// count change).
func (g *ConsumerGroup) rebalanceEager(ids []uint32) {
	g.handOffs = nil
	for _, m := range g.members {
		m.Partitions = nil
	}
	if len(g.members) > 0 {
		for i, p := range ids {
			m := g.members[i%len(g.members)]
			m.Partitions = append(m.Partitions, p)
		}
	}
	g.Generation++
}

// rebalanceCooperative is the join rebalance of §7 over the topic's
// partition ids (ascending). Partitions in inFlight that must move are
// handed off instead of moved.
func (g *ConsumerGroup) rebalanceCooperative(ids []uint32, inFlight []uint32, timestamp uint64) {
	defer func() { g.Generation++ }()
	if len(g.members) == 0 {
		return
	}
	// 1. Partitions owned by nobody go round-robin to members owning
	// nothing.
	owned := map[uint32]bool{}
	for _, m := range g.members {
		for _, p := range m.Partitions {
			owned[p] = true
		}
	}
	idle := g.idleMembers(false)
	dealt := 0
	for _, p := range ids {
		if owned[p] || len(idle) == 0 {
			continue
		}
		m := idle[dealt%len(idle)]
		m.Partitions = append(m.Partitions, p)
		dealt++
	}
	// 2. Collect the excess over the fair share, from the end of each
	// member's list, skipping partitions already pending hand-off.
	fair := len(ids) / len(g.members)
	extra := len(ids) % len(g.members)
	var excess []uint32
	var sources []*Member
	for _, m := range g.members {
		count := 0
		for _, p := range m.Partitions {
			if g.handOff(p) < 0 {
				count++
			}
		}
		if count <= fair {
			continue
		}
		keep := fair
		if extra > 0 {
			keep = fair + 1
			extra--
		}
		take := count - keep
		for i := len(m.Partitions) - 1; i >= 0 && take > 0; i-- {
			p := m.Partitions[i]
			if g.handOff(p) >= 0 {
				continue
			}
			excess = append(excess, p)
			sources = append(sources, m)
			take--
		}
	}
	// 3. Deal the excess round-robin to idle members that await no
	// hand-off; in-flight partitions are handed off, the rest move now.
	targets := g.idleMembers(true)
	if len(targets) == 0 {
		return
	}
	for i, p := range excess {
		source, target := sources[i], targets[i%len(targets)]
		if slices.Contains(inFlight, p) {
			g.handOffs = append(g.handOffs, HandOff{PartitionID: p, From: source.Slot, To: target.Slot, SinceMicros: timestamp})
			continue
		}
		source.Partitions = removeU32(source.Partitions, p)
		target.Partitions = append(target.Partitions, p)
	}
	sort.Slice(g.handOffs, func(i, j int) bool { return g.handOffs[i].PartitionID < g.handOffs[j].PartitionID })
}

// idleMembers returns the members owning nothing, in slot order; with
// notTargets, members awaiting a hand-off are left out.
func (g *ConsumerGroup) idleMembers(notTargets bool) []*Member {
	var out []*Member
	for _, m := range g.members {
		if len(m.Partitions) == 0 && (!notTargets || !g.isHandOffTarget(m.Slot)) {
			out = append(out, m)
		}
	}
	return out
}
