package metadata

import (
	"fmt"
	"testing"
)

// TestStateBoundRefusesGrowthNotDeletes: with a bound of 64 KiB, creating
// topics of 100 partitions is refused (2021) once
// the next could pass it, never after it passed; the checkpoint stays
// within the bound; deletes are never refused and make room again; a
// restored machine keeps its bound and counts the same bytes. Before the
// bound, a state larger than the metadata checkpoint area failed the
// replica at its checkpoint, and a restart replayed into the same failure.
func TestStateBoundRefusesGrowthNotDeletes(t *testing.T) {
	h := newHarness(t)
	const bound = 64 << 10
	h.m.SetStateBytesMax(bound)
	h.mustOK(&CreateStream{Name: "s"})
	created := 0
	for i := 0; ; i++ {
		o := createTopicOp(NumericID(0), fmt.Sprintf("t%d", i), 100)
		code := h.code(RootUserID, o)
		if code == CodeTooManyTopics {
			break
		}
		if code != CodeOK {
			t.Fatalf("topic %d: code %d", i, code)
		}
		created++
		if n := len(h.m.Checkpoint()); n > bound {
			t.Fatalf("checkpoint of %d bytes after %d topics, over the bound %d", n, created, bound)
		}
		if i > 1000 {
			t.Fatal("no topic refused")
		}
	}
	if created < 5 {
		t.Fatalf("only %d topics fit", created)
	}
	before := len(h.m.Checkpoint())
	if code := h.code(RootUserID, &CreatePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 1000}); code != CodeTooManyPartitions {
		t.Fatalf("1000 more partitions near the bound: code %d", code)
	}
	if n := len(h.m.Checkpoint()); n != before {
		t.Fatalf("a refused op changed the state: %d bytes, %d before", n, before)
	}
	// Deletes go through, and make room.
	if code := h.code(RootUserID, &DeleteTopic{Stream: NumericID(0), Topic: NumericID(0)}); code != CodeOK {
		t.Fatalf("delete near the bound: code %d", code)
	}
	o := createTopicOp(NumericID(0), "again", 100)
	if code := h.code(RootUserID, o); code != CodeOK {
		t.Fatalf("create after a delete: code %d", code)
	}
	restored := New()
	restored.SetStateBytesMax(bound)
	if err := restored.Restore(h.m.Checkpoint()); err != nil {
		t.Fatal(err)
	}
	if restored.sizeMax != bound || restored.stateBytes() != h.m.stateBytes() || restored.stateBytes() != len(h.m.Checkpoint()) {
		t.Fatalf("restored: bound %d, %d bytes; original %d bytes, checkpoint %d", restored.sizeMax, restored.stateBytes(), h.m.stateBytes(), len(h.m.Checkpoint()))
	}
}

// TestGroupJoinsStayWithinTheBound: joins of a consumer group over a topic
// of 200 partitions are refused (5007 CannotCreateConsumerGroupInfo) before
// the members and hand-offs they add could pass the bound.
func TestGroupJoinsStayWithinTheBound(t *testing.T) {
	h := newHarness(t)
	const bound = 16 << 10
	h.m.SetStateBytesMax(bound)
	h.mustOK(&CreateStream{Name: "s"})
	h.mustOK(createTopicOp(NumericID(0), "t", 200))
	h.mustOK(&CreateConsumerGroup{Stream: NumericID(0), Topic: NumericID(0), Name: "g"})
	refused := false
	for c := uint64(1); c <= 2000 && !refused; c++ {
		body := EncodeOp(Envelope{UserID: RootUserID, ClientLo: c, Request: 1},
			&JoinConsumerGroup{Stream: NumericID(0), Topic: NumericID(0), Group: NumericID(0)})
		code, _ := ReplyCode(h.raw(OperationJoinConsumerGroup, body))
		switch code {
		case CodeOK:
		case CodeCannotCreateConsumerGroupInfo:
			refused = true
		default:
			t.Fatalf("join %d: code %d", c, code)
		}
		if n := len(h.m.Checkpoint()); n > bound {
			t.Fatalf("checkpoint of %d bytes after join %d, over the bound %d", n, c, bound)
		}
	}
	if !refused {
		t.Fatal("no join refused")
	}
}
