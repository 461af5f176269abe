package metadata

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

func TestCreateTopicReplyLayout(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	op := createTopicOp(NamedID("s"), "events", 3)
	op.ExplicitOptions = block(wire.Uint64Option("segment_size", 1<<30))
	op.DerivedOptions = block(wire.BoolOption("enforce_fsync", true))
	h.m.TakeEffects()
	payload := h.mustOK(op)
	created := h.ts
	r := reader{t: t, b: payload}
	if id, c, parts := r.u32(), r.u64(), r.u32(); id != 0 || c != created || parts != 3 {
		t.Fatalf("header id %d created %d partitions %d", id, c, parts)
	}
	if expiry, compression, maxSize := r.u64(), r.u8(), r.u64(); expiry != NeverExpires || compression != CompressionNone || maxSize != NeverExpires {
		t.Fatalf("options %d %d %d", expiry, compression, maxSize)
	}
	if size, msgs := r.u64(), r.u64(); size != 0 || msgs != 0 {
		t.Fatalf("counters %d %d", size, msgs)
	}
	if name := r.name(); name != "events" {
		t.Fatalf("name %q", name)
	}
	if explicit := r.bytes(int(r.u32())); !bytes.Equal(explicit, op.ExplicitOptions) {
		t.Fatalf("explicit %x", explicit)
	}
	if derived := r.bytes(int(r.u32())); !bytes.Equal(derived, op.DerivedOptions) {
		t.Fatalf("derived %x", derived)
	}
	for want := uint32(0); want < 3; want++ {
		id, c, segments := r.u32(), r.u64(), r.u32()
		offset, size, msgs := r.u64(), r.u64(), r.u64()
		if id != want || c != created || segments != 0 || offset != 0 || size != 0 || msgs != 0 {
			t.Fatalf("partition %d: %d %d %d %d %d %d", want, id, c, segments, offset, size, msgs)
		}
	}
	r.done()
	want := []Effect{{Kind: EffectTopicCreated, StreamID: 0, TopicID: 0, PartitionIDs: []uint32{0, 1, 2}}}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, want) {
		t.Fatalf("effects %+v", got)
	}
}

func TestTopicResultCodes(t *testing.T) {
	stream := &CreateStream{Name: "s"}
	topic := createTopicOp(NumericID(0), "t", 2)
	badCompression := createTopicOp(NumericID(0), "t", 1)
	badCompression.Options.CompressionAlgorithm = 9
	prealloc := createTopicOp(NumericID(0), "t", 65)
	prealloc.Options.PreallocateSegments = true
	smallCap := createTopicOp(NumericID(0), "t", 1)
	smallCap.Options.MaxTopicSizeBytes = 1 << 20
	tooMany := createTopicOp(NumericID(0), "t", 1001)
	badBlock := createTopicOp(NumericID(0), "t", 1)
	badBlock.ExplicitOptions = []byte{2, 1, 0, 0, 0, 'k'}
	cases := []struct {
		name  string
		setup []Op
		op    Op
		want  Code
	}{
		{"create ok", []Op{stream}, topic, CodeOK},
		{"create zero partitions", []Op{stream}, createTopicOp(NumericID(0), "t", 0), CodeOK},
		{"create missing stream", nil, topic, CodeStreamIDNotFound},
		{"create duplicate", []Op{stream, topic}, createTopicOp(NamedID("s"), "t", 1), CodeTopicNameAlreadyExists},
		{"create too many partitions", []Op{stream}, tooMany, CodeTooManyPartitions},
		{"create bad compression", []Op{stream}, badCompression, CodeInvalidOptionValue},
		{"create preallocate over 64 GiB", []Op{stream}, prealloc, CodeInvalidOptionValue},
		{"create cap below segment", []Op{stream}, smallCap, CodeInvalidTopicSize},
		{"create malformed options block", []Op{stream}, badBlock, CodeInvalidOptionValue},
		{"update missing stream", nil, &UpdateTopic{Stream: NumericID(0), Topic: NumericID(0), Name: "x"}, CodeStreamIDNotFound},
		{"update missing topic", []Op{stream}, &UpdateTopic{Stream: NumericID(0), Topic: NumericID(0), Name: "x"}, CodeTopicIDNotFound},
		{"update taken", []Op{stream, topic, createTopicOp(NumericID(0), "u", 1)}, &UpdateTopic{Stream: NumericID(0), Topic: NamedID("u"), Name: "t"}, CodeTopicNameAlreadyExists},
		{"update bad compression", []Op{stream, topic}, &UpdateTopic{Stream: NumericID(0), Topic: NumericID(0), Name: "t", SetCompression: true, CompressionAlgorithm: 0}, CodeInvalidOptionValue},
		{"update cap below segment", []Op{stream, topic}, &UpdateTopic{Stream: NumericID(0), Topic: NumericID(0), Name: "t", SetMaxTopicSize: true, MaxTopicSizeBytes: 5}, CodeInvalidTopicSize},
		{"update bad block", []Op{stream, topic}, &UpdateTopic{Stream: NumericID(0), Topic: NumericID(0), Name: "t", Options: []byte{9}}, CodeInvalidOptionValue},
		{"delete missing topic", []Op{stream}, &DeleteTopic{Stream: NumericID(0), Topic: NamedID("t")}, CodeTopicIDNotFound},
		{"delete missing stream", nil, &DeleteTopic{Stream: NumericID(0), Topic: NamedID("t")}, CodeStreamIDNotFound},
		{"delete ok", []Op{stream, topic}, &DeleteTopic{Stream: NumericID(0), Topic: NamedID("t")}, CodeOK},
		{"purge missing topic", []Op{stream}, &PurgeTopic{Stream: NumericID(0), Topic: NumericID(4)}, CodeTopicIDNotFound},
		{"purge ok", []Op{stream, topic}, &PurgeTopic{Stream: NumericID(0), Topic: NumericID(0)}, CodeOK},
		{"create partitions ok", []Op{stream, topic}, &CreatePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 3}, CodeOK},
		{"create partitions missing topic", []Op{stream}, &CreatePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 3}, CodeTopicIDNotFound},
		{"create partitions zero", []Op{stream, topic}, &CreatePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 0}, CodeInvalidPartitionsCount},
		{"create partitions over request max", []Op{stream, topic}, &CreatePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 1001}, CodeTooManyPartitions},
		{"delete partitions ok", []Op{stream, topic}, &DeletePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 2}, CodeOK},
		{"delete partitions more than exist", []Op{stream, topic}, &DeletePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 3}, CodeInvalidPartitionsCount},
		{"delete partitions zero", []Op{stream, topic}, &DeletePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 0}, CodeInvalidPartitionsCount},
		{"delete partitions missing stream", nil, &DeletePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 1}, CodeStreamIDNotFound},
		{"delete segments ok", []Op{stream, topic}, &DeleteSegments{Stream: NumericID(0), Topic: NumericID(0), PartitionID: 1, SegmentsCount: 2}, CodeOK},
		{"delete segments missing partition", []Op{stream, topic}, &DeleteSegments{Stream: NumericID(0), Topic: NumericID(0), PartitionID: 2, SegmentsCount: 1}, CodePartitionNotFound},
		{"delete segments missing topic", []Op{stream}, &DeleteSegments{Stream: NumericID(0), Topic: NumericID(0), PartitionID: 0, SegmentsCount: 1}, CodeTopicIDNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			for _, o := range tc.setup {
				h.mustOK(o)
			}
			if got := h.code(RootUserID, tc.op); got != tc.want {
				t.Fatalf("code %d, want %d", got, tc.want)
			}
		})
	}
}

func TestTooManyTopics(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	s := h.m.Stream(NumericID(0))
	for i := uint32(0); i < topicsPerStreamMax; i++ {
		name := fmt.Sprint("topic-", i)
		s.topics[i] = &Topic{ID: i, StreamID: 0, Name: name}
		s.topicNames[name] = i
	}
	if got := h.code(RootUserID, createTopicOp(NumericID(0), "last", 1)); got != CodeTooManyTopics {
		t.Fatalf("code %d", got)
	}
}

func TestPartitionIDSpaceExhausted(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NumericID(0), "t", 1))
	_, topic, _ := h.m.ResolveTopic(NumericID(0), NumericID(0))
	topic.Partitions[0].ID = partitionIDLimit - 2
	if got := h.code(RootUserID, &CreatePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 2}); got != CodePartitionIDSpaceExhausted {
		t.Fatalf("code %d", got)
	}
	if got := h.code(RootUserID, &CreatePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 1}); got != CodeOK {
		t.Fatalf("code %d", got)
	}
}

func TestPartitionsContinueAfterMaxAndDeleteHighest(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NumericID(0), "t", 2))
	h.m.TakeEffects()
	h.mustOK(&CreatePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 3})
	want := []Effect{{Kind: EffectPartitionsCreated, StreamID: 0, TopicID: 0, PartitionIDs: []uint32{2, 3, 4}}}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, want) {
		t.Fatalf("create effects %+v", got)
	}
	h.mustOK(&DeletePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 2})
	want = []Effect{{Kind: EffectPartitionsDeleted, StreamID: 0, TopicID: 0, PartitionIDs: []uint32{3, 4}}}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, want) {
		t.Fatalf("delete effects %+v", got)
	}
	_, topic, _ := h.m.ResolveTopic(NumericID(0), NamedID("t"))
	if ids := topic.partitionIDs(); !reflect.DeepEqual(ids, []uint32{0, 1, 2}) {
		t.Fatalf("partitions %v", ids)
	}
	h.mustOK(&DeleteSegments{Stream: NumericID(0), Topic: NumericID(0), PartitionID: 2, SegmentsCount: 5})
	want = []Effect{{Kind: EffectSegmentsDeleted, StreamID: 0, TopicID: 0, PartitionIDs: []uint32{2}, SegmentsCount: 5}}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, want) {
		t.Fatalf("segments effects %+v", got)
	}
}

func TestUpdateTopicPatchesOptions(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	op := createTopicOp(NumericID(0), "t", 1)
	op.ExplicitOptions = block(wire.Uint64Option("segment_size", 1<<30))
	op.DerivedOptions = block(wire.Uint64Option("message_expiry", NeverExpires), wire.BoolOption("enforce_fsync", true))
	h.mustOK(op)
	sent := block(wire.Uint64Option("message_expiry", 60e6))
	h.mustOK(&UpdateTopic{Stream: NumericID(0), Topic: NumericID(0), Name: "renamed",
		SetMessageExpiry: true, MessageExpiryMicros: 60e6, Options: sent})
	_, topic, code := h.m.ResolveTopic(NumericID(0), NamedID("renamed"))
	if code != CodeOK {
		t.Fatalf("renamed topic not found: %d", code)
	}
	if topic.Options.MessageExpiryMicros != 60e6 || topic.Options.MaxTopicSizeBytes != NeverExpires {
		t.Fatalf("options %+v", topic.Options)
	}
	wantExplicit := block(wire.Uint64Option("message_expiry", 60e6), wire.Uint64Option("segment_size", 1<<30))
	wantDerived := block(wire.BoolOption("enforce_fsync", true))
	if !bytes.Equal(topic.ExplicitOptions, wantExplicit) || !bytes.Equal(topic.DerivedOptions, wantDerived) {
		t.Fatalf("explicit %x derived %x", topic.ExplicitOptions, topic.DerivedOptions)
	}
	// A sent 0 is the server default (as at create and in Iggy): the key
	// leaves the explicit options and its resolved value is derived.
	h.mustOK(&UpdateTopic{Stream: NumericID(0), Topic: NamedID("renamed"), Name: "renamed",
		SetMessageExpiry: true, MessageExpiryMicros: 0, Options: block(wire.Uint64Option("message_expiry", 0))})
	_, topic, _ = h.m.ResolveTopic(NumericID(0), NamedID("renamed"))
	wantExplicit = block(wire.Uint64Option("segment_size", 1<<30))
	wantDerived = block(wire.BoolOption("enforce_fsync", true), wire.Uint64Option("message_expiry", NeverExpires))
	if topic.Options.MessageExpiryMicros != NeverExpires || !bytes.Equal(topic.ExplicitOptions, wantExplicit) || !bytes.Equal(topic.DerivedOptions, wantDerived) {
		t.Fatalf("after a 0: expiry %d explicit %x derived %x", topic.Options.MessageExpiryMicros, topic.ExplicitOptions, topic.DerivedOptions)
	}
	if _, _, code := h.m.ResolveTopic(NumericID(0), NamedID("t")); code != CodeTopicIDNotFound {
		t.Fatal("old name still resolves")
	}
	if got := h.m.TakeEffects(); got[len(got)-1].Kind != EffectTopicUpdated {
		t.Fatalf("effects %+v", got)
	}
}

func TestTopicPermissions(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NumericID(0), "t0", 1))
	h.mustOK(createTopicOp(NumericID(0), "t1", 1))
	topicManager := h.addUser("topicman", &Permissions{Streams: []StreamPermissions{{
		StreamID: 0, Topics: []TopicPermissions{{TopicID: 1, ManageTopic: true}},
	}}})
	streamTopics := h.addUser("streamtop", &Permissions{Streams: []StreamPermissions{{StreamID: 0, ManageTopics: true}}})
	cases := []struct {
		user uint32
		op   Op
		want Code
	}{
		{topicManager, &PurgeTopic{Stream: NumericID(0), Topic: NumericID(1)}, CodeOK},
		{topicManager, &PurgeTopic{Stream: NumericID(0), Topic: NumericID(0)}, CodeUnauthorized},
		{topicManager, createTopicOp(NumericID(0), "t2", 1), CodeUnauthorized},
		{topicManager, &CreatePartitions{Stream: NumericID(0), Topic: NumericID(1), Count: 1}, CodeOK},
		{topicManager, &DeleteTopic{Stream: NumericID(0), Topic: NumericID(0)}, CodeUnauthorized},
		{topicManager, &DeleteTopic{Stream: NumericID(0), Topic: NumericID(9)}, CodeTopicIDNotFound},
		{streamTopics, createTopicOp(NumericID(0), "t2", 1), CodeOK},
		{streamTopics, &DeleteTopic{Stream: NumericID(0), Topic: NumericID(0)}, CodeOK},
		{streamTopics, &DeleteStream{Stream: NumericID(0)}, CodeUnauthorized},
	}
	for i, tc := range cases {
		if got := h.code(tc.user, tc.op); got != tc.want {
			t.Fatalf("case %d %T: code %d, want %d", i, tc.op, got, tc.want)
		}
	}
}

func TestUpdateTopicRejectsOversizedPatch(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	explicit := make(wire.Options, 0, 700)
	sent := make(wire.Options, 0, 700)
	for i := 0; i < 700; i++ {
		explicit = append(explicit, wire.BoolOption(fmt.Sprintf("a%03d", i), true))
		sent = append(sent, wire.BoolOption(fmt.Sprintf("b%03d", i), true))
	}
	op := createTopicOp(NumericID(0), "t", 1)
	op.ExplicitOptions = block(explicit...)
	h.mustOK(op)
	// 1400 pairs after merging exceed the 1024-pair limit of §4.8.
	update := &UpdateTopic{Stream: NumericID(0), Topic: NumericID(0), Name: "t", Options: block(sent...)}
	if got := h.code(RootUserID, update); got != CodeInvalidOptionValue {
		t.Fatalf("code %d", got)
	}
	_, topic, _ := h.m.ResolveTopic(NumericID(0), NumericID(0))
	if !bytes.Equal(topic.ExplicitOptions, op.ExplicitOptions) {
		t.Fatal("a rejected update changed the options")
	}
}
