package metadata

import (
	"errors"
	"testing"
)

// consensusGroupsOf returns the consensus group ids of a topic's
// partitions, in partition id order.
func consensusGroupsOf(t *testing.T, m *Machine, stream, topic string) []uint64 {
	t.Helper()
	_, tp, code := m.ResolveTopic(NamedID(stream), NamedID(topic))
	if code != CodeOK {
		t.Fatalf("topic %s/%s: code %d", stream, topic, code)
	}
	out := make([]uint64, len(tp.Partitions))
	for i, p := range tp.Partitions {
		out[i] = p.ConsensusGroup
	}
	return out
}

// recreateOps deletes and re-creates what an earlier op created, under
// the same (lowest free) ids: a topic, partitions, a stream.
func recreateOps(h *harness) {
	h.mustOK(&DeleteTopic{Stream: NamedID("s"), Topic: NamedID("t")})
	h.mustOK(createTopicOp(NamedID("s"), "t", 3))
	h.mustOK(&DeletePartitions{Stream: NamedID("s"), Topic: NamedID("t"), Count: 2})
	h.mustOK(&CreatePartitions{Stream: NamedID("s"), Topic: NamedID("t"), Count: 2})
	h.mustOK(&DeleteStream{Stream: NamedID("s")})
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NamedID("s"), "t", 3))
}

// TestConsensusGroupsAreNeverReused: a topic deleted and created again
// gets the same stream, topic and partition ids (the lowest free) but new
// consensus group ids, and so do partitions deleted and added again and
// a re-created stream's topics; a checkpoint keeps the counter, so a
// restored machine (a restarted or transferred replica) gives out the
// same next ids as the one it was taken from.
func TestConsensusGroupsAreNeverReused(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NamedID("s"), "t", 3))
	seen := map[uint64]string{}
	// record checks that the topic's partitions past the first kept
	// ones have groups never given out before.
	record := func(when string, kept int) []uint64 {
		t.Helper()
		ids := consensusGroupsOf(t, h.m, "s", "t")
		for i, g := range ids {
			if i < kept {
				continue
			}
			if g >= h.m.NextConsensusGroup() || g >= ConsensusGroupLimit {
				t.Fatalf("%s: partition %d group %d, next %d", when, i, g, h.m.NextConsensusGroup())
			}
			if before, dup := seen[g]; dup {
				t.Fatalf("%s: partition %d has group %d, given out already (%s)", when, i, g, before)
			}
			seen[g] = when
		}
		return ids
	}
	first := record("created", 0)
	if len(first) != 3 || first[0] != 0 || first[1] != 1 || first[2] != 2 {
		t.Fatalf("first topic's groups %v", first)
	}

	h.mustOK(&DeleteTopic{Stream: NamedID("s"), Topic: NamedID("t")})
	h.mustOK(createTopicOp(NamedID("s"), "t", 3))
	if _, tp, _ := h.m.ResolveTopic(NamedID("s"), NamedID("t")); tp.ID != 0 {
		t.Fatalf("the re-created topic has id %d, the lowest free is 0", tp.ID)
	}
	record("topic re-created", 0)

	h.mustOK(&DeletePartitions{Stream: NamedID("s"), Topic: NamedID("t"), Count: 2})
	h.mustOK(&CreatePartitions{Stream: NamedID("s"), Topic: NamedID("t"), Count: 2})
	again := record("partitions re-created", 1)
	if again[0] != 3 {
		t.Fatalf("the kept partition's group changed: %v", again)
	}

	h.mustOK(&DeleteStream{Stream: NamedID("s")})
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NamedID("s"), "t", 3))
	record("stream re-created", 0)

	// A restored machine continues the counter.
	restored := New()
	if err := restored.Restore(h.m.Checkpoint()); err != nil {
		t.Fatal(err)
	}
	if restored.NextConsensusGroup() != h.m.NextConsensusGroup() {
		t.Fatalf("restored next group %d, want %d", restored.NextConsensusGroup(), h.m.NextConsensusGroup())
	}
	h2 := &harness{t: t, m: restored, op: h.op, ts: h.ts}
	h.mustOK(&DeleteTopic{Stream: NamedID("s"), Topic: NamedID("t")})
	h.mustOK(createTopicOp(NamedID("s"), "t", 3))
	h2.mustOK(&DeleteTopic{Stream: NamedID("s"), Topic: NamedID("t")})
	h2.mustOK(createTopicOp(NamedID("s"), "t", 3))
	a, b := record("after restore", 0), consensusGroupsOf(t, restored, "s", "t")
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("partition %d: group %d, the restored machine's %d", i, a[i], b[i])
		}
	}
}

// TestConsensusGroupsAgreeAcrossReplicas: replicas that apply the same
// metadata operations give every partition the same consensus group id,
// whatever else (users, rejected operations) each applied in between: the
// ids count partitions created, not op numbers.
func TestConsensusGroupsAgreeAcrossReplicas(t *testing.T) {
	a, b := newHarness(t), newHarness(t)
	for _, h := range []*harness{a, b} {
		h.mustOK(&CreateStream{Name: "s"})
		h.mustOK(createTopicOp(NamedID("s"), "t", 3))
	}
	b.addUser("alice", nil)
	if code := b.code(RootUserID, createTopicOp(NamedID("s"), "t", 3)); code != CodeTopicNameAlreadyExists {
		t.Fatalf("duplicate topic: code %d", code)
	}
	for _, h := range []*harness{a, b} {
		recreateOps(h)
	}
	if a.op == b.op {
		t.Fatal("the replicas applied the same op numbers; the test needs them to differ")
	}
	ga, gb := consensusGroupsOf(t, a.m, "s", "t"), consensusGroupsOf(t, b.m, "s", "t")
	for i := range ga {
		if ga[i] != gb[i] {
			t.Fatalf("partition %d: group %d on one replica, %d on the other", i, ga[i], gb[i])
		}
	}
	if a.m.NextConsensusGroup() != b.m.NextConsensusGroup() || a.m.NextConsensusGroup() != 3+3+2+3 {
		t.Fatalf("next groups %d and %d, want %d", a.m.NextConsensusGroup(), b.m.NextConsensusGroup(), 3+3+2+3)
	}
}

// TestConsensusGroupsSpent: a creation that would give out an id at or
// above ConsensusGroupLimit commits 3013 and changes nothing.
func TestConsensusGroupsSpent(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	h.m.nextConsensusGroup = ConsensusGroupLimit - 2
	if code := h.code(RootUserID, createTopicOp(NamedID("s"), "t", 3)); code != CodePartitionIDSpaceExhausted {
		t.Fatalf("create topic past the limit: code %d", code)
	}
	h.mustOK(createTopicOp(NamedID("s"), "t", 2))
	if code := h.code(RootUserID, &CreatePartitions{Stream: NamedID("s"), Topic: NamedID("t"), Count: 1}); code != CodePartitionIDSpaceExhausted {
		t.Fatalf("create partitions past the limit: code %d", code)
	}
	if got := consensusGroupsOf(t, h.m, "s", "t"); len(got) != 2 || got[1] != ConsensusGroupLimit-1 {
		t.Fatalf("groups %v", got)
	}
	if err := New().Restore(h.m.Checkpoint()); err != nil {
		t.Fatalf("a machine at the limit does not restore: %v", err)
	}
}

// TestCheckpointRefusesOlderVersions: checkpoints of versions 1 and 2
// (partition groups named by their ids) are refused with the version,
// not read with made-up group ids.
func TestCheckpointRefusesOlderVersions(t *testing.T) {
	for _, version := range []byte{1, 2} {
		old := New().Checkpoint()
		old[4] = version
		err := New().Restore(resum(old))
		if !errors.Is(err, ErrCheckpointVersion) || !errors.Is(err, ErrCorruptCheckpoint) {
			t.Fatalf("version %d: %v", version, err)
		}
		t.Logf("version %d: %v", version, err)
	}
}

// TestRestoreRefusesReusedConsensusGroups: a checkpoint that gives two
// partitions one group, or a group at or above the next one, is corrupt.
func TestRestoreRefusesReusedConsensusGroups(t *testing.T) {
	for name, damage := range map[string]func(m *Machine){
		"two partitions, one group": func(m *Machine) {
			_, tp, _ := m.ResolveTopic(NamedID("s"), NamedID("t"))
			tp.Partitions[1].ConsensusGroup = tp.Partitions[0].ConsensusGroup
		},
		"a group not given out": func(m *Machine) { m.nextConsensusGroup = 2 },
	} {
		h := newHarness(t)
		h.mustOK(&CreateStream{Name: "s"})
		h.mustOK(createTopicOp(NamedID("s"), "t", 3))
		damage(h.m)
		if err := New().Restore(h.m.Checkpoint()); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
