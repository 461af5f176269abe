package partition

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// TestServerOperationsRoundTrip: each server-submitted operation decodes
// to what was encoded, and a body cut short or extended is malformed.
func TestServerOperationsRoundTrip(t *testing.T) {
	env := Envelope{UserID: 3, ClientLo: 4, ClientHi: 5, Request: 6}
	thresholds := SetFlushThresholds{MessagesRequiredToSave: 7, SizeOfMessagesRequiredToSaveBytes: 8 << 20}
	purge := PurgePartition{Generation: 41}
	segments := DeleteSegments{BelowOffset: 1000, Messages: 990, SizeBytes: 1 << 30}
	bodies := map[string][]byte{"thresholds": thresholds.Encode(env), "purge": purge.Encode(env), "segments": segments.Encode(env)}
	if gotEnv, got, err := DecodeSetFlushThresholds(bodies["thresholds"]); err != nil || gotEnv != env || got != thresholds {
		t.Fatalf("thresholds: %+v %+v %v", gotEnv, got, err)
	}
	if gotEnv, got, err := DecodePurgePartition(bodies["purge"]); err != nil || gotEnv != env || got != purge {
		t.Fatalf("purge: %+v %+v %v", gotEnv, got, err)
	}
	if gotEnv, got, err := DecodeDeleteSegments(bodies["segments"]); err != nil || gotEnv != env || got != segments {
		t.Fatalf("segments: %+v %+v %v", gotEnv, got, err)
	}
	decoders := map[string]func([]byte) error{
		"thresholds": func(b []byte) error { _, _, err := DecodeSetFlushThresholds(b); return err },
		"purge":      func(b []byte) error { _, _, err := DecodePurgePartition(b); return err },
		"segments":   func(b []byte) error { _, _, err := DecodeDeleteSegments(b); return err },
	}
	for name, body := range bodies {
		for _, bad := range [][]byte{body[:len(body)-1], append(append([]byte(nil), body...), 0), nil} {
			if err := decoders[name](bad); !errors.Is(err, ErrMalformed) {
				t.Fatalf("%s of %d bytes: %v", name, len(bad), err)
			}
		}
	}
}

// TestInternalOperationsAreNotWireOperations: a client cannot send one of
// the server's own operations (its byte is no §3.1 operation).
func TestInternalOperationsAreNotWireOperations(t *testing.T) {
	for _, op := range []uint8{OperationSetFlushThresholds, OperationPurgePartition, OperationDeleteSegments} {
		if wire.Operation(op).Defined() {
			t.Fatalf("operation %d is a wire operation", op)
		}
	}
}

// TestFlushIsAnEffect: a send that reaches a threshold asks for a flush of
// everything unflushed, FlushEveryBatch after every send, and a lowered
// threshold at once.
func TestFlushIsAnEffect(t *testing.T) {
	h := newHarness(t, Config{MessagesRequiredToSave: 3})
	h.send(1, buildBatch(t, "a", 2))
	if got := h.m.TakeEffects(); got != nil {
		t.Fatalf("effects below the threshold: %+v", got)
	}
	h.send(1, buildBatch(t, "b", 1))
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, []Effect{{Kind: EffectFlush, UpTo: 2}}) {
		t.Fatalf("effects at the threshold: %+v", got)
	}
	h.m.MarkFlushed(2)
	h.send(1, buildBatch(t, "c", 1))
	if got := h.m.TakeEffects(); got != nil {
		t.Fatalf("effects after the flush: %+v", got)
	}
	if code := h.setFlushThresholds(1, 0); code != CodeOK {
		t.Fatalf("set thresholds: %d", code)
	}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, []Effect{{Kind: EffectFlush, UpTo: 3}}) {
		t.Fatalf("effects of a lowered threshold: %+v", got)
	}
	if cfg := h.m.Config(); cfg.MessagesRequiredToSave != 1 || cfg.SizeOfMessagesRequiredToSaveBytes != DefaultSizeOfMessagesRequiredToSaveBytes {
		t.Fatalf("config %+v", cfg)
	}
	every := newHarness(t, Config{FlushEveryBatch: true})
	every.send(1, buildBatch(t, "a", 1))
	if got := every.m.TakeEffects(); !reflect.DeepEqual(got, []Effect{{Kind: EffectFlush, UpTo: 0}}) {
		t.Fatalf("flush every batch: %+v", got)
	}
}

// TestPurgeOperation: a purge empties the partition, keeps base
// timestamps monotonic, asks the server to remove the files, and a purge
// of a generation already applied changes nothing.
func TestPurgeOperation(t *testing.T) {
	h := newHarness(t, Config{})
	key := ConsumerKey{Kind: ConsumerKindConsumer, ID: 1}
	h.send(100, buildBatch(t, "a", 3))
	h.store(key, 2, StoreExplicit)
	h.m.TakeEffects()
	if code := h.purge(7); code != CodeOK {
		t.Fatalf("purge: %d", code)
	}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, []Effect{{Kind: EffectPurged, Generation: 7}}) {
		t.Fatalf("purge effects %+v", got)
	}
	if _, ok := h.m.CurrentOffset(); ok || h.m.NextOffset() != 0 || h.m.MessagesCount() != 0 || h.m.SizeBytes() != 0 || h.m.PurgeGeneration() != 7 {
		t.Fatal("purge kept messages")
	}
	if len(h.m.StoredOffsets()) != 0 || len(h.m.Unflushed()) != 0 {
		t.Fatal("purge kept offsets or batches")
	}
	if base := h.send(50, buildBatch(t, "b", 1)); base != 0 {
		t.Fatalf("base after purge %d", base)
	}
	if ts := wire.BatchView(h.m.Unflushed()[0]).BaseTimestamp(); ts != 100 {
		t.Fatalf("timestamp went backwards after purge: %d", ts)
	}
	before := observe(h.m)
	for _, generation := range []uint64{7, 3} {
		if code := h.purge(generation); code != CodeOK {
			t.Fatalf("replayed purge %d: %d", generation, code)
		}
		if got := h.m.TakeEffects(); got != nil {
			t.Fatalf("replayed purge %d: effects %+v", generation, got)
		}
	}
	if after := observe(h.m); !reflect.DeepEqual(after, before) {
		t.Fatalf("a replayed purge changed the partition: %+v, was %+v", after, before)
	}
}

// observed is a machine's state as its accessors show it (no lastOp).
type observed struct {
	next, first, messages, size, generation uint64
	offsets                                 []StoredOffset
	unflushed                               [][]byte
}

func observe(m *Machine) observed {
	return observed{m.NextOffset(), m.FirstOffset(), m.MessagesCount(), m.SizeBytes(), m.PurgeGeneration(), m.StoredOffsets(), m.Unflushed()}
}

// TestDeleteSegmentsOperation: deleting segments lowers the counters by
// what they held (never below the unflushed messages) and moves the first
// offset; offsets keep counting; a deletion below the first offset is a
// no-op and one past the flushed messages is rejected.
func TestDeleteSegmentsOperation(t *testing.T) {
	h := newHarness(t, Config{})
	h.send(1, buildBatch(t, "a", 4)) // 0..3
	h.send(1, buildBatch(t, "b", 2)) // 4..5
	first := uint64(len(h.m.Unflushed()[0]))
	h.m.MarkFlushed(3)
	if code := h.deleteSegments(DeleteSegments{BelowOffset: 5, Messages: 5}); code != CodeInvalidOffset {
		t.Fatalf("deletion into the unflushed batches: %d", code)
	}
	if code := h.deleteSegments(DeleteSegments{BelowOffset: 4, Messages: 4, SizeBytes: first}); code != CodeOK {
		t.Fatalf("delete: %d", code)
	}
	if got := h.m.TakeEffects(); !reflect.DeepEqual(got, []Effect{{Kind: EffectSegmentsDeleted, Below: 4}}) {
		t.Fatalf("effects %+v", got)
	}
	if h.m.MessagesCount() != 2 || h.m.SizeBytes() != uint64(len(h.m.Unflushed()[0])) || h.m.NextOffset() != 6 || h.m.FirstOffset() != 4 {
		t.Fatalf("counters %d %d next %d first %d", h.m.MessagesCount(), h.m.SizeBytes(), h.m.NextOffset(), h.m.FirstOffset())
	}
	if code := h.deleteSegments(DeleteSegments{BelowOffset: 3, Messages: 100, SizeBytes: 1 << 40}); code != CodeOK || h.m.MessagesCount() != 2 || h.m.TakeEffects() != nil {
		t.Fatalf("a deletion below the first offset changed the partition: %d, %d messages", code, h.m.MessagesCount())
	}
	h.m.MarkFlushed(5)
	if code := h.deleteSegments(DeleteSegments{BelowOffset: 6, Messages: 100, SizeBytes: 1 << 40}); code != CodeOK || h.m.MessagesCount() != 0 || h.m.SizeBytes() != 0 {
		t.Fatalf("counters after deleting everything: %d, %d %d", code, h.m.MessagesCount(), h.m.SizeBytes())
	}
	if base := h.send(1, buildBatch(t, "c", 1)); base != 6 {
		t.Fatalf("base after deleting segments %d", base)
	}
}

// TestMalformedServerOperations: an undecodable body is rejected with 3
// and changes nothing.
func TestMalformedServerOperations(t *testing.T) {
	h := newHarness(t, Config{})
	h.send(1, buildBatch(t, "a", 1))
	before := h.m.Checkpoint()
	for _, operation := range []uint8{OperationSetFlushThresholds, OperationPurgePartition, OperationDeleteSegments} {
		if code := replyCode(t, h.m.Apply(h.op, 1, operation, []byte{1, 2, 3})); code != CodeInvalidCommand {
			t.Fatalf("operation %d: code %d", operation, code)
		}
	}
	if !bytes.Equal(h.m.Checkpoint(), before) {
		t.Fatal("a malformed operation changed the state")
	}
}

// TestServerOperationsReplayAndCheckpoint: a machine that applied every
// kind of operation (carrying out its flushes) and a fresh one replaying
// the same operations encode to the same checkpoint, which restores to a
// machine that goes on alike.
func TestServerOperationsReplayAndCheckpoint(t *testing.T) {
	type op struct {
		timestamp uint64
		operation uint8
		body      []byte
	}
	key := ConsumerKey{Kind: ConsumerKindGroup, ID: 2}
	ops := []op{
		{10, OperationSendMessages, EncodeSendMessages(Envelope{}, buildBatch(t, "a", 3))},
		{20, OperationSetFlushThresholds, SetFlushThresholds{MessagesRequiredToSave: 4}.Encode(Envelope{})},
		{30, OperationSendMessages, EncodeSendMessages(Envelope{}, buildBatch(t, "b", 2))},
		{40, OperationStoreConsumerOffset, StoreConsumerOffset{Consumer: key, Offset: 4, Mode: StoreAutoCommit}.Encode(Envelope{})},
		{50, OperationDeleteSegments, DeleteSegments{BelowOffset: 3, Messages: 3, SizeBytes: 100}.Encode(Envelope{})},
		{60, OperationSendMessages, EncodeSendMessages(Envelope{}, buildBatch(t, "c", 1))},
		{70, OperationPurgePartition, PurgePartition{Generation: 9}.Encode(Envelope{})},
		{80, OperationSendMessages, EncodeSendMessages(Envelope{}, buildBatch(t, "d", 2))},
		{90, OperationDeleteConsumerOffset, DeleteConsumerOffset{Consumer: key}.Encode(Envelope{})},
	}
	cfg := Config{StreamID: 1, TopicID: 2, PartitionID: 3}
	live, replay := New(cfg), New(cfg)
	for i, o := range ops {
		live.Apply(uint64(i+1), o.timestamp, o.operation, o.body)
		carryOut(live)
	}
	for i, o := range ops {
		replay.Apply(uint64(i+1), o.timestamp, o.operation, o.body)
		carryOut(replay)
	}
	data := live.Checkpoint()
	if !bytes.Equal(data, replay.Checkpoint()) {
		t.Fatal("the replay encodes differently")
	}
	restored := New(Config{})
	if err := restored.Restore(data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(restored.Checkpoint(), data) || restored.PurgeGeneration() != 9 || restored.FirstOffset() != 0 || restored.NextOffset() != 2 {
		t.Fatalf("restored: generation %d first %d next %d", restored.PurgeGeneration(), restored.FirstOffset(), restored.NextOffset())
	}
	next := EncodeSendMessages(Envelope{}, buildBatch(t, "e", 1))
	if a, b := live.Apply(10, 100, OperationSendMessages, next), restored.Apply(10, 100, OperationSendMessages, next); !bytes.Equal(a, b) {
		t.Fatalf("replies differ %x %x", a, b)
	}
	if !reflect.DeepEqual(live.TakeEffects(), restored.TakeEffects()) || !bytes.Equal(live.Checkpoint(), restored.Checkpoint()) {
		t.Fatal("the restored machine diverged")
	}
}

// TestRecoverFirstOffsetAndPurgeGeneration: the first offset and purge
// generation found on disk are the machine's; a first offset past the
// next is invalid.
func TestRecoverFirstOffsetAndPurgeGeneration(t *testing.T) {
	m, err := Recover(Config{}, RecoveredState{NextOffset: 10, FirstOffset: 4, MessagesCount: 6, PurgeGeneration: 12})
	if err != nil || m.FirstOffset() != 4 || m.PurgeGeneration() != 12 {
		t.Fatalf("recovered first %d generation %d: %v", m.FirstOffset(), m.PurgeGeneration(), err)
	}
	h := &harness{t: t, m: m}
	if code := h.purge(12); code != CodeOK || m.NextOffset() != 10 {
		t.Fatal("a purge the superblock recorded ran again")
	}
	if _, err := Recover(Config{}, RecoveredState{NextOffset: 3, FirstOffset: 4}); !errors.Is(err, ErrInvalidRecovery) {
		t.Fatalf("first offset past next: %v", err)
	}
}
