package metadata

import (
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/stratabroker/strata/net/wire"

	"github.com/stratabroker/strata/net/wire/statecodec"
	"github.com/zeebo/xxh3"
)

// groupHarness is a harness with stream "s", topic "t" of n partitions and
// group "g".
func groupHarness(t *testing.T, partitions uint32) *harness {
	t.Helper()
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NamedID("s"), "t", partitions))
	h.mustOK(&CreateConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Name: "g"})
	h.m.TakeEffects()
	return h
}

// as applies o as root from client lo and returns the committed code.
func (h *harness) as(lo uint64, o Op) Code {
	h.t.Helper()
	code, ok := ReplyCode(h.raw(o.Operation(), EncodeOp(Envelope{ClientLo: lo, Request: h.op + 1}, o)))
	if !ok {
		h.t.Fatalf("%T: reply not result-framed", o)
	}
	return code
}

func (h *harness) group() (*Topic, *ConsumerGroup) {
	h.t.Helper()
	_, topic, code := h.m.ResolveTopic(NamedID("s"), NamedID("t"))
	if code != CodeOK {
		h.t.Fatalf("topic: %d", code)
	}
	g := topic.Group(NamedID("g"))
	if g == nil {
		h.t.Fatal("group g missing")
	}
	return topic, g
}

// assignments returns the partitions of each member, by client lo.
func (h *harness) assignments() map[uint64][]uint32 {
	_, g := h.group()
	out := map[uint64][]uint32{}
	for _, m := range g.Members() {
		out[m.Client.Lo] = append([]uint32{}, m.Partitions...)
	}
	return out
}

func join(inFlight ...uint32) *JoinConsumerGroup {
	return &JoinConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Group: NamedID("g"), InFlight: inFlight}
}

func leave() *LeaveConsumerGroup {
	return &LeaveConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Group: NamedID("g")}
}

// TestCooperativeJoinExample is the §7 example: A=[0,1,2,3]; B joins →
// A=[0,1], B=[3,2]; C joins → A=[0,1], B=[3], C=[2].
func TestCooperativeJoinExample(t *testing.T) {
	h := groupHarness(t, 4)
	const a, b, c = 1, 2, 3
	steps := []struct {
		client uint64
		want   map[uint64][]uint32
	}{
		{a, map[uint64][]uint32{a: {0, 1, 2, 3}}},
		{b, map[uint64][]uint32{a: {0, 1}, b: {3, 2}}},
		{c, map[uint64][]uint32{a: {0, 1}, b: {3}, c: {2}}},
	}
	for i, step := range steps {
		if code := h.as(step.client, join()); code != CodeOK {
			t.Fatalf("join %d: code %d", step.client, code)
		}
		if got := h.assignments(); !reflect.DeepEqual(got, step.want) {
			t.Fatalf("after join %d: %v, want %v", step.client, got, step.want)
		}
		if _, g := h.group(); g.Generation != uint64(i+1) {
			t.Fatalf("generation %d after %d joins", g.Generation, i+1)
		}
	}
	// Joining again is a no-op: no rebalance, no generation change.
	if code := h.as(b, join()); code != CodeOK {
		t.Fatalf("rejoin: %d", code)
	}
	if _, g := h.group(); g.Generation != 3 {
		t.Fatalf("rejoin changed the generation to %d", g.Generation)
	}
	// Slots: A 0, B 1, C 2; the wire record lists them in slot order.
	topic, g := h.group()
	details := ConsumerGroupDetailsRecord(topic, g)
	want := []wire.ConsumerGroupMember{{ID: 0, Partitions: []uint32{0, 1}}, {ID: 1, Partitions: []uint32{3}}, {ID: 2, Partitions: []uint32{2}}}
	if !reflect.DeepEqual(details.Members, want) || details.PartitionsCount != 4 || details.MembersCount != 3 {
		t.Fatalf("details %+v", details)
	}
}

// TestEagerRebalanceOnLeaveAndSlotReuse: a leave deals P[i] to member i
// mod M in slot order, and a later join takes the lowest free slot.
func TestEagerRebalanceOnLeaveAndSlotReuse(t *testing.T) {
	h := groupHarness(t, 5)
	for _, c := range []uint64{1, 2, 3} {
		if code := h.as(c, join()); code != CodeOK {
			t.Fatal(code)
		}
	}
	if code := h.as(2, leave()); code != CodeOK {
		t.Fatalf("leave: %d", code)
	}
	if got, want := h.assignments(), map[uint64][]uint32{1: {0, 2, 4}, 3: {1, 3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after leave: %v, want %v", got, want)
	}
	if code := h.as(2, leave()); code != CodeConsumerGroupMemberNotFound {
		t.Fatalf("second leave: %d, want 5006", code)
	}
	if code := h.as(9, join()); code != CodeOK {
		t.Fatal(code)
	}
	_, g := h.group()
	if m := g.Member(ClientID{Lo: 9}); m == nil || m.Slot != 1 {
		t.Fatalf("new member %+v, want slot 1", m)
	}
	// fair = 5/3 = 1, extra 2: slot 0 (3 partitions) keeps 2, slot 2 (2
	// partitions) keeps 2, the excess of slot 0 (its last, 4) moves.
	if got, want := h.assignments(), map[uint64][]uint32{1: {0, 2}, 3: {1, 3}, 9: {4}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after join: %v, want %v", got, want)
	}
}

// TestHandOffOfInFlightPartition: an in-flight partition stays with its
// source, disappears from its Sync list, still counts as owned for offset
// writes, and moves when the hand-off completes.
func TestHandOffOfInFlightPartition(t *testing.T) {
	h := groupHarness(t, 4)
	h.as(1, join())
	if code := h.as(2, join(3)); code != CodeOK {
		t.Fatal(code)
	}
	a, b := ClientID{Lo: 1}, ClientID{Lo: 2}
	topic, g := h.group()
	if got, want := h.assignments(), map[uint64][]uint32{1: {0, 1, 3}, 2: {2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("assignments %v, want %v", got, want)
	}
	if len(g.HandOffs()) != 1 || g.HandOffs()[0].PartitionID != 3 || g.HandOffs()[0].From != 0 || g.HandOffs()[0].To != 1 {
		t.Fatalf("hand-offs %+v", g.HandOffs())
	}
	gen, parts, ok := g.Sync(a)
	if !ok || gen != 2 || !reflect.DeepEqual(parts, []uint32{0, 1}) {
		t.Fatalf("sync A: %d %v %v", gen, parts, ok)
	}
	if g.MayPoll(a, 3) || !g.Owns(a, 3) || g.MayPoll(b, 3) || g.Owns(b, 3) {
		t.Fatal("fences wrong during hand-off")
	}
	if !g.MayPoll(b, 2) || g.MayPoll(a, 2) {
		t.Fatal("moved partition fences wrong")
	}
	if got := h.m.PendingHandOffs(); len(got) != 1 || got[0].GroupID != g.ID || got[0].TopicID != topic.ID {
		t.Fatalf("pending %+v", got)
	}
	complete := &CompleteConsumerGroupHandOff{StreamID: topic.StreamID, TopicID: topic.ID, GroupID: g.ID, PartitionID: 3}
	if code := h.as(0, complete); code != CodeOK {
		t.Fatalf("complete: %d", code)
	}
	if code := h.as(0, complete); code != CodeResourceNotFound {
		t.Fatalf("second complete: %d, want 20", code)
	}
	_, g = h.group()
	if got, want := h.assignments(), map[uint64][]uint32{1: {0, 1}, 2: {2, 3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after hand-off %v, want %v", got, want)
	}
	if gen, parts, _ := g.Sync(b); gen != 3 || !reflect.DeepEqual(parts, []uint32{2, 3}) {
		t.Fatalf("sync B: %d %v", gen, parts)
	}
	if _, _, ok := g.Sync(ClientID{Lo: 77}); ok {
		t.Fatal("non-member synced")
	}
}

// TestRemoveMemberFromEveryGroup: the internal removal leaves every group
// in (stream, topic, group) order and rebalances each.
func TestRemoveMemberFromEveryGroup(t *testing.T) {
	h := groupHarness(t, 2)
	h.mustOK(&CreateConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Name: "h"})
	other := &JoinConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Group: NamedID("h")}
	for _, c := range []uint64{1, 2} {
		h.as(c, join())
		h.as(c, other)
	}
	if !h.m.IsGroupMember(ClientID{Lo: 1}) || !reflect.DeepEqual(h.m.GroupMemberClients(), []ClientID{{Lo: 1}, {Lo: 2}}) {
		t.Fatal("membership reads wrong")
	}
	if got, want := h.m.GroupsOfClient(ClientID{Lo: 1}), []GroupRef{{0, 0, 0}, {0, 0, 1}}; !reflect.DeepEqual(got, want) || h.m.ConsumerGroupsCount() != 2 {
		t.Fatalf("groups of client 1: %v (count %d)", got, h.m.ConsumerGroupsCount())
	}
	if code := h.as(0, &RemoveConsumerGroupMember{Client: ClientID{Lo: 1}}); code != CodeOK {
		t.Fatal(code)
	}
	if h.m.IsGroupMember(ClientID{Lo: 1}) {
		t.Fatal("client 1 still a member")
	}
	if code := h.as(0, &RemoveConsumerGroupMember{Client: ClientID{Lo: 1}}); code != CodeConsumerGroupMemberNotFound {
		t.Fatalf("second removal: %d", code)
	}
	_, topic, _ := h.m.ResolveTopic(NamedID("s"), NamedID("t"))
	for _, g := range topic.Groups() {
		if _, parts, ok := g.Sync(ClientID{Lo: 2}); !ok || !reflect.DeepEqual(parts, []uint32{0, 1}) {
			t.Fatalf("group %s: client 2 holds %v", g.Name, parts)
		}
	}
}

// TestGroupLifecycleCodes: ids per topic from 0 and never reused, unique
// names, 1009/2010/5000/5004, permission 41, partition changes rebalance,
// delete emits the offsets effect.
func TestGroupLifecycleCodes(t *testing.T) {
	h := groupHarness(t, 3)
	create := func(name string) *CreateConsumerGroup {
		return &CreateConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Name: name}
	}
	if code := h.code(RootUserID, create("g")); code != CodeConsumerGroupNameAlreadyExists {
		t.Fatalf("duplicate name: %d", code)
	}
	if code := h.code(RootUserID, &CreateConsumerGroup{Stream: NamedID("x"), Topic: NamedID("t"), Name: "a"}); code != CodeStreamIDNotFound {
		t.Fatalf("unknown stream: %d", code)
	}
	if code := h.code(RootUserID, &CreateConsumerGroup{Stream: NamedID("s"), Topic: NamedID("x"), Name: "a"}); code != CodeTopicIDNotFound {
		t.Fatalf("unknown topic: %d", code)
	}
	payload := h.mustOK(create("second"))
	var details wire.ConsumerGroupDetails
	if err := details.Decode(payload); err != nil || details.ID != 1 || details.Name != "second" || details.PartitionsCount != 3 || details.MembersCount != 0 {
		t.Fatalf("create payload %+v %v", details, err)
	}
	h.mustOK(&DeleteConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Group: NumericID(1)})
	effects := h.m.TakeEffects()
	if len(effects) != 1 || effects[0].Kind != EffectConsumerGroupDeleted || effects[0].GroupID != 1 || !reflect.DeepEqual(effects[0].PartitionIDs, []uint32{0, 1, 2}) {
		t.Fatalf("effects %+v", effects)
	}
	if code := h.code(RootUserID, &DeleteConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Group: NumericID(1)}); code != CodeConsumerGroupIDNotFound {
		t.Fatalf("delete twice: %d", code)
	}
	payload = h.mustOK(create("third"))
	if err := details.Decode(payload); err != nil || details.ID != 2 {
		t.Fatalf("ids reused: %+v", details)
	}
	if code := h.as(1, &JoinConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Group: NumericID(1)}); code != CodeConsumerGroupIDNotFound {
		t.Fatalf("join deleted: %d", code)
	}
	reader := h.addUser("reader", &Permissions{Streams: []StreamPermissions{{StreamID: 0, SendMessages: true}}})
	if code := h.code(reader, create("nope")); code != CodeUnauthorized {
		t.Fatalf("no permission: %d", code)
	}
	allowed := h.addUser("topics", &Permissions{Streams: []StreamPermissions{{StreamID: 0, ReadTopics: true}}})
	if code := h.code(allowed, create("yes")); code != CodeOK {
		t.Fatalf("read_topics: %d", code)
	}
	// A partition count change rebalances eagerly.
	h.as(1, join())
	h.as(2, join())
	h.mustOK(&CreatePartitions{Stream: NamedID("s"), Topic: NamedID("t"), Count: 2})
	if got, want := h.assignments(), map[uint64][]uint32{1: {0, 2, 4}, 2: {1, 3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after create partitions %v, want %v", got, want)
	}
	h.mustOK(&DeletePartitions{Stream: NamedID("s"), Topic: NamedID("t"), Count: 4})
	if got, want := h.assignments(), map[uint64][]uint32{1: {0}, 2: {}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after delete partitions %v, want %v", got, want)
	}
	// Deleting the topic drops its groups.
	h.mustOK(&DeleteTopic{Stream: NamedID("s"), Topic: NamedID("t")})
	if h.m.IsGroupMember(ClientID{Lo: 1}) {
		t.Fatal("membership survived the topic")
	}
}

// TestCheckpointKeepsGroups: groups, members, hand-offs and the next group
// id survive a checkpoint.
func TestCheckpointKeepsGroups(t *testing.T) {
	h := groupHarness(t, 4)
	h.as(1, join())
	h.as(2, join(2))
	h.mustOK(&CreateConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Name: "gone"})
	h.mustOK(&DeleteConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Group: NamedID("gone")})
	data := h.m.Checkpoint()
	restored := New()
	if err := restored.Restore(data); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(restored.Checkpoint(), data) {
		t.Fatal("checkpoint not stable across restore")
	}
	if got := restored.PendingHandOffs(); len(got) != 1 || got[0].PartitionID != 2 {
		t.Fatalf("hand-offs after restore %+v", got)
	}
	// The next group id is kept: a new group gets 2, not 1.
	h2 := &harness{t: t, m: restored, op: h.op, ts: h.ts}
	var details wire.ConsumerGroupDetails
	if err := details.Decode(h2.mustOK(&CreateConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Name: "new"})); err != nil || details.ID != 2 {
		t.Fatalf("restored next id: %+v %v", details, err)
	}
}

// resum rewrites the trailing checksum of a checkpoint.
func resum(data []byte) []byte {
	body := data[:len(data)-statecodec.CheckpointTrailerSize]
	return binary.LittleEndian.AppendUint64(append([]byte(nil), body...), xxh3.Hash(body))
}
