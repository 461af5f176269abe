package partition

import (
	"bytes"
	"errors"
	"testing"
)

func populatedPartition(t *testing.T) *harness {
	h := newHarness(t, Config{StreamID: 1, TopicID: 2, PartitionID: 3, MessagesRequiredToSave: 100})
	h.send(100, buildBatch(t, "a", 3))
	h.send(200, buildBatch(t, "b", 2))
	h.send(300, buildBatch(t, "c", 4))
	h.m.MarkFlushed(2)
	h.store(ConsumerKey{Kind: ConsumerKindConsumer, ID: 9}, 5, StoreExplicit)
	h.store(ConsumerKey{Kind: ConsumerKindGroup, ID: 1}, 8, StoreAutoCommit)
	h.store(ConsumerKey{Kind: ConsumerKindConsumer, ID: 2}, 0, StoreExplicit)
	h.m.TakeEffects()
	return h
}

func TestPartitionCheckpointRoundTrip(t *testing.T) {
	h := populatedPartition(t)
	data := h.m.Checkpoint()
	restored := New(Config{})
	if err := restored.Restore(data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(restored.Checkpoint(), data) {
		t.Fatal("checkpoint of the restored machine differs")
	}
	if restored.Config() != h.m.Config() || restored.NextOffset() != 9 || len(restored.Unflushed()) != 2 {
		t.Fatalf("restored %+v next %d unflushed %d", restored.Config(), restored.NextOffset(), len(restored.Unflushed()))
	}
	if m1, b1 := h.m.UnflushedCounts(); true {
		if m2, b2 := restored.UnflushedCounts(); m1 != m2 || b1 != b2 {
			t.Fatalf("unflushed counts %d/%d vs %d/%d", m1, b1, m2, b2)
		}
	}
	batch := buildBatch(t, "d", 1)
	body := EncodeSendMessages(Envelope{}, batch)
	if a, b := h.m.Apply(50, 400, OperationSendMessages, body), restored.Apply(50, 400, OperationSendMessages, body); !bytes.Equal(a, b) {
		t.Fatalf("replies differ %x %x", a, b)
	}
	if !bytes.Equal(h.m.Checkpoint(), restored.Checkpoint()) {
		t.Fatal("states diverged")
	}
}

func TestPartitionRestoreRejectsCorruption(t *testing.T) {
	h := populatedPartition(t)
	data := h.m.Checkpoint()
	before := append([]byte(nil), data...)
	for _, i := range []int{0, 4, 6, 30, len(data) / 2, len(data) - 1} {
		bad := append([]byte(nil), data...)
		bad[i] ^= 1
		if err := h.m.Restore(bad); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Fatalf("flip at %d: %v", i, err)
		}
	}
	if err := h.m.Restore(data[:12]); !errors.Is(err, ErrCorruptCheckpoint) {
		t.Fatalf("truncated: %v", err)
	}
	if !bytes.Equal(h.m.Checkpoint(), before) {
		t.Fatal("a failed restore changed the state")
	}
}

func TestPartitionInvariantErrorDetectsDamage(t *testing.T) {
	h := populatedPartition(t)
	if err := h.m.invariantError(); err != nil {
		t.Fatal(err)
	}
	h.m.unflushedBytes++
	if h.m.invariantError() == nil {
		t.Fatal("wrong unflushed byte total not detected")
	}
	h.m.unflushedBytes--
	h.m.offsets[ConsumerKey{Kind: ConsumerKindConsumer, ID: 99}] = h.m.nextOffset
	if h.m.invariantError() == nil {
		t.Fatal("offset beyond the partition not detected")
	}
	delete(h.m.offsets, ConsumerKey{Kind: ConsumerKindConsumer, ID: 99})
	h.m.nextOffset++
	if h.m.invariantError() == nil {
		t.Fatal("gap after the unflushed batches not detected")
	}
}
