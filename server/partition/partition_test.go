package partition

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

func TestSendStampsBatchAndReplies(t *testing.T) {
	h := newHarness(t, Config{StreamID: 4, TopicID: 5, PartitionID: 6})
	batch := buildBatch(t, "a", 3)
	original := append([]byte(nil), batch...)
	body := EncodeSendMessages(Envelope{UserID: 9, Request: 2}, batch)
	reply := h.apply(5_000, OperationSendMessages, body)
	want := []byte{1, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(reply, want) {
		t.Fatalf("reply %v", reply)
	}
	if !bytes.Equal(batch, original) || !bytes.Equal(body[EnvelopeSize:], original) {
		t.Fatal("Apply modified the caller's bytes")
	}
	if base := h.send(4_000, buildBatch(t, "b", 2)); base != 3 {
		t.Fatalf("second base offset %d", base)
	}
	unflushed := h.m.Unflushed()
	if len(unflushed) != 2 {
		t.Fatalf("%d unflushed", len(unflushed))
	}
	for i, wantBase := range []uint64{0, 3} {
		v := wire.BatchView(unflushed[i])
		if v.PartitionID() != 6 || v.BaseOffset() != wantBase || v.BaseTimestamp() != 5_000 {
			t.Fatalf("batch %d: partition %d base %d timestamp %d", i, v.PartitionID(), v.BaseOffset(), v.BaseTimestamp())
		}
		if err := wire.ValidateBatch(unflushed[i], v.MessageCount()); err != nil {
			t.Fatalf("stamped batch %d does not validate: %v", i, err)
		}
	}
	if current, ok := h.m.CurrentOffset(); !ok || current != 4 {
		t.Fatalf("current %d %v", current, ok)
	}
	if h.m.MessagesCount() != 5 || h.m.NextOffset() != 5 || h.m.LastTimestamp() != 5_000 {
		t.Fatalf("counters %d %d %d", h.m.MessagesCount(), h.m.NextOffset(), h.m.LastTimestamp())
	}
	if h.m.SizeBytes() != uint64(len(unflushed[0])+len(unflushed[1])) {
		t.Fatalf("size %d", h.m.SizeBytes())
	}
}

func TestSendRejectsBadBatches(t *testing.T) {
	good := buildBatch(t, "a", 2)
	zeroCount := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(zeroCount[48:], 0)
	wrongLength := append([]byte(nil), good...)
	binary.LittleEndian.PutUint64(wrongLength[32:], uint64(len(good)+1))
	wrongCount := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(wrongCount[48:], 3)
	cases := map[string][]byte{
		"short envelope": {1, 2, 3},
		"short batch":    EncodeSendMessages(Envelope{}, good[:100]),
		"zero count":     EncodeSendMessages(Envelope{}, zeroCount),
		"wrong length":   EncodeSendMessages(Envelope{}, wrongLength),
		"frames short":   EncodeSendMessages(Envelope{}, wrongCount),
		"trailing bytes": EncodeSendMessages(Envelope{}, append(append([]byte(nil), good...), 0)),
	}
	for name, body := range cases {
		h := newHarness(t, Config{})
		reply := h.apply(1, OperationSendMessages, body)
		if !bytes.Equal(reply, []byte{0, 0, 0, 0}) {
			t.Fatalf("%s: reply %x", name, reply)
		}
		if h.m.NextOffset() != 0 || len(h.m.Unflushed()) != 0 {
			t.Fatalf("%s: state changed", name)
		}
	}
}

func TestBaseTimestampMonotonic(t *testing.T) {
	h := newHarness(t, Config{})
	h.send(100, buildBatch(t, "a", 1))
	h.send(50, buildBatch(t, "b", 1))
	h.send(200, buildBatch(t, "c", 1))
	var got []uint64
	for _, b := range h.m.Unflushed() {
		got = append(got, wire.BatchView(b).BaseTimestamp())
	}
	if !reflect.DeepEqual(got, []uint64{100, 100, 200}) {
		t.Fatalf("timestamps %v", got)
	}
}

func TestConsumerOffsets(t *testing.T) {
	alice := ConsumerKey{Kind: ConsumerKindConsumer, ID: 7}
	group := ConsumerKey{Kind: ConsumerKindGroup, ID: 7}
	h := newHarness(t, Config{})
	if code := h.store(alice, 0, StoreExplicit); code != CodeInvalidOffset {
		t.Fatalf("empty partition store: %d", code)
	}
	h.send(1, buildBatch(t, "a", 5))
	cases := []struct {
		name   string
		run    func() uint32
		want   uint32
		stored map[ConsumerKey]uint64
	}{
		{"beyond current", func() uint32 { return h.store(alice, 5, StoreExplicit) }, CodeInvalidOffset, map[ConsumerKey]uint64{}},
		{"store", func() uint32 { return h.store(alice, 3, StoreExplicit) }, CodeOK, map[ConsumerKey]uint64{alice: 3}},
		{"explicit backwards", func() uint32 { return h.store(alice, 1, StoreExplicit) }, CodeOK, map[ConsumerKey]uint64{alice: 1}},
		{"auto forwards", func() uint32 { return h.store(alice, 4, StoreAutoCommit) }, CodeOK, map[ConsumerKey]uint64{alice: 4}},
		{"auto never backwards", func() uint32 { return h.store(alice, 2, StoreAutoCommit) }, CodeOK, map[ConsumerKey]uint64{alice: 4}},
		{"auto beyond current", func() uint32 { return h.store(alice, 9, StoreAutoCommit) }, CodeInvalidOffset, map[ConsumerKey]uint64{alice: 4}},
		{"group separate key", func() uint32 { return h.store(group, 0, StoreAutoCommit) }, CodeOK, map[ConsumerKey]uint64{alice: 4, group: 0}},
		{"delete", func() uint32 { return h.deleteOffset(alice) }, CodeOK, map[ConsumerKey]uint64{group: 0}},
		{"delete again", func() uint32 { return h.deleteOffset(alice) }, CodeConsumerOffsetNotFound, map[ConsumerKey]uint64{group: 0}},
	}
	for _, tc := range cases {
		if got := tc.run(); got != tc.want {
			t.Fatalf("%s: code %d, want %d", tc.name, got, tc.want)
		}
		for _, o := range h.m.StoredOffsets() {
			if tc.stored[o.Key] != o.Offset {
				t.Fatalf("%s: stored %+v, want %v", tc.name, h.m.StoredOffsets(), tc.stored)
			}
		}
		if len(h.m.StoredOffsets()) != len(tc.stored) {
			t.Fatalf("%s: stored %+v, want %v", tc.name, h.m.StoredOffsets(), tc.stored)
		}
	}
	want := []Effect{
		{Kind: EffectOffsetStored, Consumer: alice, Offset: 3},
		{Kind: EffectOffsetStored, Consumer: alice, Offset: 1},
		{Kind: EffectOffsetStored, Consumer: alice, Offset: 4, AutoCommit: true},
		{Kind: EffectOffsetStored, Consumer: group, Offset: 0, AutoCommit: true},
		{Kind: EffectOffsetDeleted, Consumer: alice},
	}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, want) {
		t.Fatalf("effects %+v", got)
	}
}

func TestMalformedOffsetOps(t *testing.T) {
	h := newHarness(t, Config{})
	h.send(1, buildBatch(t, "a", 1))
	bad := [][2]any{
		{OperationStoreConsumerOffset, []byte{}},
		{OperationStoreConsumerOffset, StoreConsumerOffset{Consumer: ConsumerKey{Kind: 3}}.Encode(Envelope{})},
		{OperationStoreConsumerOffset, StoreConsumerOffset{Consumer: ConsumerKey{Kind: 1}, Mode: 2}.Encode(Envelope{})},
		{OperationDeleteConsumerOffset, DeleteConsumerOffset{Consumer: ConsumerKey{Kind: 0}}.Encode(Envelope{})},
		{OperationDeleteConsumerOffset, append(DeleteConsumerOffset{Consumer: ConsumerKey{Kind: 1}}.Encode(Envelope{}), 0)},
		{uint8(128), []byte{}},
	}
	for i, c := range bad {
		if code := replyCode(t, h.apply(1, c[0].(uint8), c[1].([]byte))); code != CodeInvalidCommand {
			t.Fatalf("case %d: code %d", i, code)
		}
	}
}

func TestFlushThresholdsAndMarkFlushed(t *testing.T) {
	h := newHarness(t, Config{MessagesRequiredToSave: 5})
	h.send(1, buildBatch(t, "a", 2))
	h.send(1, buildBatch(t, "b", 2))
	if h.m.FlushDue() {
		t.Fatal("flush due at 4 messages")
	}
	h.send(1, buildBatch(t, "c", 1))
	if !h.m.FlushDue() {
		t.Fatal("flush not due at 5 messages")
	}
	h.m.MarkFlushed(2) // the first batch ends at 1, the second at 3
	if n := len(h.m.Unflushed()); n != 2 {
		t.Fatalf("%d unflushed after flushing to 2", n)
	}
	if first, ok := h.m.FirstUnflushedOffset(); !ok || first != 2 {
		t.Fatalf("first unflushed %d %v", first, ok)
	}
	if messages, _ := h.m.UnflushedCounts(); messages != 3 || h.m.FlushDue() {
		t.Fatalf("unflushed messages %d", messages)
	}
	h.m.MarkFlushed(4)
	if messages, bytes := h.m.UnflushedCounts(); messages != 0 || bytes != 0 || h.m.Unflushed() != nil {
		t.Fatalf("after full flush %d %d", messages, bytes)
	}
	if h.m.MessagesCount() != 5 {
		t.Fatal("flushing changed the message count")
	}

	bySize := newHarness(t, Config{SizeOfMessagesRequiredToSaveBytes: 600})
	batch := buildBatch(t, "x", 1)
	bySize.send(1, batch)
	if bySize.m.FlushDue() {
		t.Fatalf("flush due at %d bytes", len(batch))
	}
	bySize.send(1, batch)
	bySize.send(1, batch)
	if !bySize.m.FlushDue() {
		t.Fatalf("flush not due at %d bytes", 3*len(batch))
	}
	defaults := New(Config{}).Config()
	if defaults.MessagesRequiredToSave != DefaultMessagesRequiredToSave || defaults.SizeOfMessagesRequiredToSaveBytes != DefaultSizeOfMessagesRequiredToSaveBytes {
		t.Fatalf("defaults %+v", defaults)
	}
	if code := bySize.setFlushThresholds(1, 0); code != CodeOK || !bySize.m.FlushDue() {
		t.Fatalf("lowered threshold not applied (code %d)", code)
	}
}

func TestPollSelection(t *testing.T) {
	key := ConsumerKey{Kind: ConsumerKindConsumer, ID: 1}
	empty := New(Config{})
	if _, _, ok := empty.PollRange(0, 10); ok {
		t.Fatal("empty partition polled")
	}
	if start, _, _ := empty.StartOffset(StrategyLast, 0, 5, key); start != 0 {
		t.Fatalf("last on empty %d", start)
	}
	h := newHarness(t, Config{})
	h.send(100, buildBatch(t, "a", 4)) // 0..3 at 100
	h.send(200, buildBatch(t, "b", 6)) // 4..9 at 200
	h.store(key, 6, StoreExplicit)
	starts := []struct {
		strategy uint8
		value    uint64
		count    uint32
		want     uint64
	}{
		{StrategyOffset, 7, 3, 7},
		{StrategyFirst, 99, 3, 0},
		{StrategyLast, 0, 3, 7},
		{StrategyLast, 0, 1, 9},
		{StrategyLast, 0, 10, 0},
		{StrategyLast, 0, 50, 0},
		{StrategyNext, 0, 3, 7},
	}
	for _, s := range starts {
		got, lookup, err := h.m.StartOffset(s.strategy, s.value, s.count, key)
		if err != nil || lookup || got != s.want {
			t.Fatalf("strategy %d value %d count %d: %d %v %v, want %d", s.strategy, s.value, s.count, got, lookup, err, s.want)
		}
	}
	if got, _, _ := h.m.StartOffset(StrategyNext, 0, 1, ConsumerKey{Kind: ConsumerKindConsumer, ID: 2}); got != 0 {
		t.Fatalf("next without stored offset %d", got)
	}
	if _, lookup, err := h.m.StartOffset(StrategyTimestamp, 150, 1, key); !lookup || err != nil {
		t.Fatal("timestamp strategy does not ask storage")
	}
	if _, _, err := h.m.StartOffset(6, 0, 1, key); !errors.Is(err, ErrUnknownStrategy) {
		t.Fatalf("unknown strategy: %v", err)
	}
	if off, ok := h.m.UnflushedOffsetAtTimestamp(150); !ok || off != 4 {
		t.Fatalf("timestamp 150 → %d %v", off, ok)
	}
	if _, ok := h.m.UnflushedOffsetAtTimestamp(201); ok {
		t.Fatal("timestamp after every batch found")
	}
	ranges := []struct {
		start       uint64
		count       uint32
		first, last uint64
		ok          bool
	}{
		{0, 3, 0, 2, true},
		{8, 5, 8, 9, true},
		{9, 1, 9, 9, true},
		{10, 1, 0, 0, false},
		{0, 0, 0, 0, false},
		{5, ^uint32(0), 5, 9, true},
		{^uint64(0) - 1, 5, 0, 0, false},
	}
	for _, r := range ranges {
		first, last, ok := h.m.PollRange(r.start, r.count)
		if ok != r.ok || first != r.first || last != r.last {
			t.Fatalf("range %d+%d: %d..%d %v", r.start, r.count, first, last, ok)
		}
	}
}

func TestRecover(t *testing.T) {
	key := ConsumerKey{Kind: ConsumerKindConsumer, ID: 1}
	other := ConsumerKey{Kind: ConsumerKindGroup, ID: 3}
	m, err := Recover(Config{PartitionID: 2}, RecoveredState{NextOffset: 10, LastTimestamp: 500, MessagesCount: 10, SizeBytes: 4096,
		Offsets: []StoredOffset{{Key: key, Offset: 4}, {Key: other, Offset: 12}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.StoredOffsets(); !reflect.DeepEqual(got, []StoredOffset{{Key: key, Offset: 4}, {Key: other, Offset: 9}}) {
		t.Fatalf("offsets %+v", got)
	}
	h := &harness{t: t, m: m}
	if base := h.send(100, buildBatch(t, "a", 1)); base != 10 {
		t.Fatalf("base after recovery %d", base)
	}
	if ts := wire.BatchView(m.Unflushed()[0]).BaseTimestamp(); ts != 500 {
		t.Fatalf("timestamp %d, want the recovered 500", ts)
	}
	bad := []RecoveredState{
		{NextOffset: 1, MessagesCount: 2},
		{NextOffset: 5, Offsets: []StoredOffset{{Key: ConsumerKey{Kind: 9}}}},
		{NextOffset: 5, Offsets: []StoredOffset{{Key: key}, {Key: key, Offset: 1}}},
	}
	for i, s := range bad {
		if _, err := Recover(Config{}, s); !errors.Is(err, ErrInvalidRecovery) {
			t.Fatalf("bad state %d: %v", i, err)
		}
	}
	empty, err := Recover(Config{}, RecoveredState{Offsets: []StoredOffset{{Key: key, Offset: 0}}})
	if err != nil || len(empty.StoredOffsets()) != 0 {
		t.Fatalf("offsets kept on empty partition: %v", err)
	}
}
