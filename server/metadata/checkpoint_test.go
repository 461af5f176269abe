package metadata

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// populated returns a harness with streams, topics, users, permissions
// and tokens.
func populated(t *testing.T) *harness {
	h := newHarness(t)
	h.mustOK(&CreateStream{Name: "orders"})
	h.mustOK(&CreateStream{Name: "billing"})
	op := createTopicOp(NamedID("orders"), "eu", 3)
	op.Options.Durability = DurabilityPersisted
	op.ExplicitOptions = block(wire.Uint64Option("segment_size", 1<<20))
	h.mustOK(op)
	h.mustOK(createTopicOp(NamedID("orders"), "us", 1))
	h.mustOK(&DeleteStream{Stream: NamedID("billing")})
	alice := h.addUser("alice", &Permissions{Global: GlobalPermissions{PollMessages: true},
		Streams: []StreamPermissions{{StreamID: 0, SendMessages: true, Topics: []TopicPermissions{{TopicID: 1, ReadTopic: true}}}}})
	h.addUser("bobby", nil)
	h.code(alice, &CreatePersonalAccessToken{Name: "ci", TokenHash: "hash-ci", ExpiryMicros: 10})
	h.code(alice, &CreatePersonalAccessToken{Name: "dev", TokenHash: "hash-dev"})
	h.m.TakeEffects()
	return h
}

func TestCheckpointRoundTrip(t *testing.T) {
	h := populated(t)
	data := h.m.Checkpoint()
	restored := New()
	if err := restored.Restore(data); err != nil {
		t.Fatal(err)
	}
	if again := restored.Checkpoint(); !bytes.Equal(again, data) {
		t.Fatal("checkpoint of the restored machine differs")
	}
	if restored.LastOp() != h.m.LastOp() {
		t.Fatalf("last op %d, want %d", restored.LastOp(), h.m.LastOp())
	}
	if u, tok := restored.TokenByHash("hash-dev"); u == nil || u.Username != "alice" || tok.Name != "dev" {
		t.Fatal("token index not rebuilt")
	}
	if _, topic, code := restored.ResolveTopic(NamedID("orders"), NamedID("eu")); code != CodeOK ||
		topic.Options.Durability != DurabilityPersisted || len(topic.Partitions) != 3 {
		t.Fatalf("topic %+v code %d", topic, code)
	}
	// Both machines answer the same next operation identically.
	next := EncodeOp(Envelope{UserID: RootUserID}, createTopicOp(NamedID("orders"), "asia", 2))
	if a, b := h.m.Apply(99, 5, OperationCreateTopic, next), restored.Apply(99, 5, OperationCreateTopic, next); !bytes.Equal(a, b) {
		t.Fatalf("replies differ:\n%x\n%x", a, b)
	}
	if !bytes.Equal(h.m.Checkpoint(), restored.Checkpoint()) {
		t.Fatal("states diverged")
	}
}

func TestRestoreRejectsCorruption(t *testing.T) {
	h := populated(t)
	data := h.m.Checkpoint()
	before := h.m.Checkpoint()
	for _, i := range []int{0, 5, 7, len(data) / 2, len(data) - 9, len(data) - 1} {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x40
		if err := h.m.Restore(bad); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Fatalf("flip at %d: %v", i, err)
		}
	}
	for _, n := range []int{0, 10, len(data) - 1} {
		if err := h.m.Restore(data[:n]); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	if !bytes.Equal(h.m.Checkpoint(), before) {
		t.Fatal("a failed restore changed the state")
	}
}

func TestEmptyCheckpoint(t *testing.T) {
	m := New()
	data := m.Checkpoint()
	other := populated(t).m
	if err := other.Restore(data); err != nil {
		t.Fatal(err)
	}
	if len(other.Streams()) != 0 || len(other.Users()) != 0 {
		t.Fatal("restore of an empty checkpoint kept state")
	}
}

func TestInvariantErrorDetectsBrokenIndexes(t *testing.T) {
	h := populated(t)
	if err := h.m.invariantError(); err != nil {
		t.Fatal(err)
	}
	h.m.streamNames["ghost"] = 42
	if h.m.invariantError() == nil {
		t.Fatal("extra stream name not detected")
	}
	delete(h.m.streamNames, "ghost")
	h.m.tokenHashes["stray"] = 1
	if h.m.invariantError() == nil {
		t.Fatal("stray token hash not detected")
	}
}
