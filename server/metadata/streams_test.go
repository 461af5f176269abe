package metadata

import (
	"reflect"
	"testing"
)

func TestCreateStreamReplyLayout(t *testing.T) {
	h := newHarness(t)
	payload := h.mustOK(&CreateStream{Name: "orders"})
	r := reader{t: t, b: payload}
	if id := r.u32(); id != 0 {
		t.Fatalf("id %d", id)
	}
	if created := r.u64(); created != h.ts {
		t.Fatalf("created_at %d, want op timestamp %d", created, h.ts)
	}
	if topics, size, msgs := r.u32(), r.u64(), r.u64(); topics != 0 || size != 0 || msgs != 0 {
		t.Fatalf("counters %d %d %d", topics, size, msgs)
	}
	if name := r.name(); name != "orders" {
		t.Fatalf("name %q", name)
	}
	if opts := r.u32(); opts != 0 {
		t.Fatalf("options length %d", opts)
	}
	r.done()
	effects := h.m.TakeEffects()
	if !reflect.DeepEqual(effects, []Effect{{Kind: EffectStreamCreated, StreamID: 0}}) {
		t.Fatalf("effects %+v", effects)
	}
}

func TestStreamIDsReuseLowestFree(t *testing.T) {
	h := newHarness(t)
	for _, name := range []string{"a", "b", "c"} {
		h.mustOK(&CreateStream{Name: name})
	}
	h.mustOK(&DeleteStream{Stream: NumericID(1)})
	h.mustOK(&DeleteStream{Stream: NamedID("a")})
	var ids []uint32
	for _, name := range []string{"d", "e", "f"} {
		payload := h.mustOK(&CreateStream{Name: name})
		r := reader{t: t, b: payload}
		ids = append(ids, r.u32())
	}
	if !reflect.DeepEqual(ids, []uint32{0, 1, 3}) {
		t.Fatalf("ids %v, want [0 1 3]", ids)
	}
	var names []string
	for _, s := range h.m.Streams() {
		names = append(names, s.Name)
	}
	if !reflect.DeepEqual(names, []string{"d", "e", "c", "f"}) {
		t.Fatalf("streams in id order %v", names)
	}
}

func TestStreamResultCodes(t *testing.T) {
	cases := []struct {
		name  string
		setup []Op
		user  string // "" = root, else a user without permissions
		op    Op
		want  Code
	}{
		{"create ok", nil, "", &CreateStream{Name: "s"}, CodeOK},
		{"create duplicate", []Op{&CreateStream{Name: "s"}}, "", &CreateStream{Name: "s"}, CodeStreamNameAlreadyExists},
		{"create unauthorized", nil, "nobody", &CreateStream{Name: "s"}, CodeUnauthorized},
		{"update ok", []Op{&CreateStream{Name: "s"}}, "", &UpdateStream{Stream: NamedID("s"), Name: "t"}, CodeOK},
		{"update same name", []Op{&CreateStream{Name: "s"}}, "", &UpdateStream{Stream: NumericID(0), Name: "s"}, CodeOK},
		{"update missing", nil, "", &UpdateStream{Stream: NumericID(0), Name: "t"}, CodeStreamIDNotFound},
		{"update taken", []Op{&CreateStream{Name: "s"}, &CreateStream{Name: "t"}}, "", &UpdateStream{Stream: NumericID(0), Name: "t"}, CodeStreamNameAlreadyExists},
		{"update unauthorized", []Op{&CreateStream{Name: "s"}}, "nobody", &UpdateStream{Stream: NumericID(0), Name: "t"}, CodeUnauthorized},
		{"update missing before permission", nil, "nobody", &UpdateStream{Stream: NumericID(0), Name: "t"}, CodeStreamIDNotFound},
		{"delete missing", nil, "", &DeleteStream{Stream: NamedID("x")}, CodeStreamIDNotFound},
		{"delete unauthorized", []Op{&CreateStream{Name: "s"}}, "nobody", &DeleteStream{Stream: NumericID(0)}, CodeUnauthorized},
		{"purge missing", nil, "", &PurgeStream{Stream: NumericID(3)}, CodeStreamIDNotFound},
		{"purge ok", []Op{&CreateStream{Name: "s"}}, "", &PurgeStream{Stream: NumericID(0)}, CodeOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			user := RootUserID
			if tc.user != "" {
				user = h.addUser(tc.user, nil)
			}
			for _, o := range tc.setup {
				h.mustOK(o)
			}
			if got := h.code(user, tc.op); got != tc.want {
				t.Fatalf("code %d, want %d", got, tc.want)
			}
		})
	}
}

func TestStreamPermissionsScoped(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "mine"})
	h.mustOK(&CreateStream{Name: "other"})
	user := h.addUser("scoped", &Permissions{Streams: []StreamPermissions{{StreamID: 0, ManageStream: true}}})
	if got := h.code(user, &UpdateStream{Stream: NumericID(1), Name: "x"}); got != CodeUnauthorized {
		t.Fatalf("other stream: %d", got)
	}
	if got := h.code(user, &UpdateStream{Stream: NumericID(0), Name: "x"}); got != CodeOK {
		t.Fatalf("own stream: %d", got)
	}
	if got := h.code(user, &CreateStream{Name: "new"}); got != CodeUnauthorized {
		t.Fatalf("create needs global manage_streams: %d", got)
	}
	manager := h.addUser("manager", &Permissions{Global: GlobalPermissions{ManageStreams: true}})
	if got := h.code(manager, &CreateStream{Name: "new"}); got != CodeOK {
		t.Fatalf("manager create: %d", got)
	}
}

func TestDeleteAndPurgeStreamEffects(t *testing.T) {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NumericID(0), "t0", 2))
	h.mustOK(createTopicOp(NumericID(0), "t1", 1))
	h.m.TakeEffects()
	h.mustOK(&PurgeStream{Stream: NumericID(0)})
	want := []Effect{
		{Kind: EffectTopicPurged, StreamID: 0, TopicID: 0, PartitionIDs: []uint32{0, 1}},
		{Kind: EffectTopicPurged, StreamID: 0, TopicID: 1, PartitionIDs: []uint32{0}},
	}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, want) {
		t.Fatalf("purge effects %+v", got)
	}
	h.mustOK(&DeleteStream{Stream: NamedID("s")})
	want = []Effect{
		{Kind: EffectTopicDeleted, StreamID: 0, TopicID: 0, PartitionIDs: []uint32{0, 1}},
		{Kind: EffectTopicDeleted, StreamID: 0, TopicID: 1, PartitionIDs: []uint32{0}},
		{Kind: EffectStreamDeleted, StreamID: 0},
	}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, want) {
		t.Fatalf("delete effects %+v", got)
	}
	if h.m.Stream(NamedID("s")) != nil || len(h.m.Streams()) != 0 {
		t.Fatal("stream still present")
	}
	if got := h.m.TakeEffects(); got != nil {
		t.Fatalf("effects not drained: %+v", got)
	}
}

func TestMalformedAndUnknownOperations(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		operation uint8
		body      []byte
		want      Code
	}{
		{OperationCreateStream, nil, CodeInvalidCommand},
		{OperationCreateStream, make([]byte, EnvelopeSize), CodeInvalidCommand},
		{OperationCreateStream, append(EncodeOp(Envelope{}, &CreateStream{Name: "x"}), 0), CodeInvalidCommand},
		{OperationCreateConsumerGroup, EncodeOp(Envelope{}, &CreateStream{Name: "x"}), CodeInvalidCommand},
		{OperationJoinConsumerGroup, nil, CodeInvalidCommand},
		{OperationLeaveConsumerGroup, nil, CodeInvalidCommand},
		{OperationDeleteConsumerGroup, nil, CodeInvalidCommand},
		{OperationRemoveConsumerGroupMember, make([]byte, EnvelopeSize+15), CodeInvalidCommand},
		{160, nil, CodeInvalidCommand},
		{0, nil, CodeInvalidCommand},
	}
	for _, tc := range cases {
		code, ok := ReplyCode(h.raw(tc.operation, tc.body))
		if !ok || code != tc.want {
			t.Fatalf("operation %d body %x: code %d ok %v, want %d", tc.operation, tc.body, code, ok, tc.want)
		}
	}
	if len(h.m.Streams()) != 0 {
		t.Fatal("a rejected operation changed state")
	}
}
