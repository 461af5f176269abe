package partition

import (
	"bytes"
	"testing"
)

// countingBuffers lends numbered buffers and records every return.
type countingBuffers struct {
	lent     map[int][]byte
	returned map[int]int
	next     int
}

func newCountingBuffers() *countingBuffers {
	return &countingBuffers{lent: map[int][]byte{}, returned: map[int]int{}}
}

func (c *countingBuffers) Borrow(n int) ([]byte, any) {
	c.next++
	buf := make([]byte, n)
	c.lent[c.next] = buf
	return buf, c.next
}

func (c *countingBuffers) Return(token any) { c.returned[token.(int)]++ }

// outstanding counts lent buffers not yet returned, failing on a double
// return.
func (c *countingBuffers) outstanding(t *testing.T) int {
	t.Helper()
	n := 0
	for id := range c.lent {
		switch c.returned[id] {
		case 0:
			n++
		case 1:
		default:
			t.Fatalf("buffer %d returned %d times", id, c.returned[id])
		}
	}
	return n
}

// TestBuffersLentUntilFlushed checks that unflushed batches live in the
// lent buffers, and that each buffer goes back exactly once: when its
// batch is flushed, or on a purge.
func TestBuffersLentUntilFlushed(t *testing.T) {
	lender := newCountingBuffers()
	h := newHarness(t, Config{Buffers: lender})
	h.send(1, buildBatch(t, "a", 2)) // offsets 0-1
	h.send(1, buildBatch(t, "b", 2)) // 2-3
	h.send(1, buildBatch(t, "c", 1)) // 4
	if got := lender.outstanding(t); got != 3 {
		t.Fatalf("%d buffers lent for 3 unflushed batches", got)
	}
	for i, b := range h.m.Unflushed() {
		if !bytes.Equal(b, lender.lent[i+1]) || &b[0] != &lender.lent[i+1][0] {
			t.Fatalf("unflushed batch %d is not kept in lent buffer %d", i, i+1)
		}
	}
	h.m.MarkFlushed(3)
	if got := lender.outstanding(t); got != 1 || lender.returned[1] != 1 || lender.returned[2] != 1 {
		t.Fatalf("after flushing to 3: %d outstanding, returns %v", got, lender.returned)
	}
	h.send(1, buildBatch(t, "d", 3))
	h.purge(0)
	if got := lender.outstanding(t); got != 0 {
		t.Fatalf("%d buffers outstanding after a purge", got)
	}
	h.send(1, buildBatch(t, "e", 1))
	h.m.MarkFlushed(0)
	if got := lender.outstanding(t); got != 0 {
		t.Fatalf("%d buffers outstanding after flushing everything", got)
	}
	h.send(1, buildBatch(t, "f", 2))
	h.m.ReleaseBuffers()
	if got := lender.outstanding(t); got != 0 || len(h.m.Unflushed()) != 0 {
		t.Fatalf("%d buffers outstanding after ReleaseBuffers", got)
	}
	// A rejected batch (bad length) borrows nothing it does not return.
	h.apply(1, OperationSendMessages, EncodeSendMessages(Envelope{}, []byte{1, 2, 3}))
	if got := lender.outstanding(t); got != 0 {
		t.Fatalf("%d buffers outstanding after a rejected send", got)
	}
}
