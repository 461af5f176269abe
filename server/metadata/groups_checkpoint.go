package metadata

import (
	"errors"
	"fmt"

	"github.com/stratabroker/strata/net/wire/statecodec"
)

// errGroupState reports consumer-group state that breaks an invariant.
var errGroupState = errors.New("consumer group state invalid")

// appendGroupsState appends t's group state to a checkpoint (version 2).
func appendGroupsState(out []byte, t *Topic) []byte {
	out = statecodec.AppendU32(out, t.nextGroupID)
	out = statecodec.AppendU32(out, uint32(len(t.groups)))
	for _, g := range t.groups {
		out = statecodec.AppendU32(out, g.ID)
		out = statecodec.AppendName(out, g.Name)
		out = statecodec.AppendU64(out, g.Generation)
		out = statecodec.AppendU32(out, uint32(len(g.members)))
		for _, m := range g.members {
			out = statecodec.AppendU32(out, m.Slot)
			out = statecodec.AppendU64(statecodec.AppendU64(out, m.Client.Lo), m.Client.Hi)
			out = statecodec.AppendU32(out, uint32(len(m.Partitions)))
			for _, p := range m.Partitions {
				out = statecodec.AppendU32(out, p)
			}
		}
		out = statecodec.AppendU32(out, uint32(len(g.handOffs)))
		for _, h := range g.handOffs {
			out = statecodec.AppendU32(statecodec.AppendU32(statecodec.AppendU32(out, h.PartitionID), h.From), h.To)
			out = statecodec.AppendU64(out, h.SinceMicros)
		}
	}
	return out
}

// decodeGroupsState reads what appendGroupsState wrote into t and checks
// it.
func decodeGroupsState(d *statecodec.Decoder, t *Topic) error {
	t.nextGroupID = d.U32()
	n := d.Count(4 + 2 + 8 + 4 + 4)
	if n > groupsPerTopicMax {
		return corrupt(d, "group count")
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		g := &ConsumerGroup{ID: d.U32(), Name: d.Name(), Generation: d.U64()}
		members := d.Count(4 + 16 + 4)
		if members > membersPerGroupMax {
			return corrupt(d, "member count")
		}
		for j := 0; j < members && d.Err() == nil; j++ {
			m := &Member{Slot: d.U32(), Client: ClientID{Lo: d.U64(), Hi: d.U64()}}
			partitions := d.Count(4)
			for k := 0; k < partitions && d.Err() == nil; k++ {
				m.Partitions = append(m.Partitions, d.U32())
			}
			g.members = append(g.members, m)
		}
		handOffs := d.Count(4 + 4 + 4 + 8)
		for j := 0; j < handOffs && d.Err() == nil; j++ {
			g.handOffs = append(g.handOffs, HandOff{PartitionID: d.U32(), From: d.U32(), To: d.U32(), SinceMicros: d.U64()})
		}
		t.groups = append(t.groups, g)
	}
	if d.Err() != nil {
		return corrupt(d, "groups")
	}
	if err := t.groupsError(); err != nil {
		return fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
	return nil
}

// groupsError returns the first broken consumer-group invariant of t, or
// nil.
func (t *Topic) groupsError() error {
	names := map[string]bool{}
	for i, g := range t.groups {
		if g.ID >= t.nextGroupID || (i > 0 && g.ID <= t.groups[i-1].ID) || t.nextGroupID > groupIDLimit {
			return fmt.Errorf("%w: topic %d group %d id order", errGroupState, t.ID, g.ID)
		}
		if g.Name == "" || len(g.Name) > 255 || names[g.Name] {
			return fmt.Errorf("%w: topic %d group %d name", errGroupState, t.ID, g.ID)
		}
		names[g.Name] = true
		if err := g.stateError(t); err != nil {
			return fmt.Errorf("%w: topic %d group %d: %w", errGroupState, t.ID, g.ID, err)
		}
	}
	return nil
}

// stateError checks one group's members and hand-offs against its topic.
func (g *ConsumerGroup) stateError(t *Topic) error {
	owner := map[uint32]uint32{}
	clients := map[ClientID]bool{}
	for i, m := range g.members {
		if i > 0 && m.Slot <= g.members[i-1].Slot {
			return errors.New("member slots out of order")
		}
		if clients[m.Client] {
			return errors.New("duplicate member")
		}
		clients[m.Client] = true
		for _, p := range m.Partitions {
			if !t.HasPartition(p) {
				return fmt.Errorf("member %d owns unknown partition %d", m.Slot, p)
			}
			if _, taken := owner[p]; taken {
				return fmt.Errorf("partition %d owned twice", p)
			}
			owner[p] = m.Slot
		}
	}
	for i, h := range g.handOffs {
		if i > 0 && h.PartitionID <= g.handOffs[i-1].PartitionID {
			return errors.New("hand-offs out of order")
		}
		if from, ok := owner[h.PartitionID]; !ok || from != h.From || h.To == h.From || g.memberBySlot(h.To) == nil {
			return fmt.Errorf("hand-off of partition %d", h.PartitionID)
		}
	}
	return nil
}
