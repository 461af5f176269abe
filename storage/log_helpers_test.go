package storage_test

import (
	"encoding/binary"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// flushBuilder makes stamped batches continuing a partition's offsets, the
// way the server stamps them, with payloads that encode their offset.
type flushBuilder struct {
	next      uint64
	timestamp uint64
	builder   wire.BatchBuilder
}

// flush returns `batches` stamped batches of `perBatch` messages each, with
// payloads of payloadBytes bytes (at least 8) starting with the message
// offset, and base timestamps 1000 apart.
func (fb *flushBuilder) flush(t testing.TB, batches, perBatch, payloadBytes int) []byte {
	t.Helper()
	payload := make([]byte, max(payloadBytes, 8))
	var out []byte
	for b := 0; b < batches; b++ {
		fb.builder.Reset()
		for m := 0; m < perBatch; m++ {
			binary.LittleEndian.PutUint64(payload, fb.next+uint64(m))
			if err := fb.builder.Add(wire.MessageID{Low: fb.next + uint64(m)}, payload, nil, 5); err != nil {
				t.Fatal(err)
			}
		}
		batch, err := fb.builder.Finish()
		if err != nil {
			t.Fatal(err)
		}
		fb.timestamp += 1000
		if err := wire.StampBatch(batch, 7, fb.next, fb.timestamp); err != nil {
			t.Fatal(err)
		}
		out = append(out, batch...)
		fb.next += uint64(perBatch)
	}
	return out
}

// offsetsOf returns the offsets of the messages in a run of batch records,
// checking each payload names its own offset and each record validates
// (slices included: their checksum is recomputed).
func offsetsOf(t testing.TB, records []byte) []uint64 {
	t.Helper()
	var offsets []uint64
	for pos := 0; pos < len(records); {
		v := wire.BatchView(records[pos:])
		n := int(v.BatchLength())
		rec := records[pos : pos+n]
		sum, err := wire.ComputeBatchChecksum(rec)
		if err != nil || sum != v.BatchChecksum() {
			t.Fatalf("record at %d: checksum %v", pos, err)
		}
		it := wire.BatchView(rec).Frames()
		for {
			f, ok := it.Next()
			if !ok {
				break
			}
			offset := v.BaseOffset() + uint64(f.OffsetDelta())
			if got := binary.LittleEndian.Uint64(f.Payload()); got != offset {
				t.Fatalf("message at offset %d carries %d", offset, got)
			}
			offsets = append(offsets, offset)
		}
		pos += n
	}
	return offsets
}

// expectRange fails unless offsets are exactly from, from+1, …, to-1.
func expectRange(t testing.TB, offsets []uint64, from, to uint64) {
	t.Helper()
	if uint64(len(offsets)) != to-from {
		t.Fatalf("got %d messages, want [%d, %d)", len(offsets), from, to)
	}
	for i, o := range offsets {
		if o != from+uint64(i) {
			t.Fatalf("message %d has offset %d, want %d", i, o, from+uint64(i))
		}
	}
}

// flushFrom returns one stamped batch of two small messages at offset next.
func (fb *flushBuilder) flushFrom(t testing.TB, next uint64) []byte {
	t.Helper()
	fb.next = next
	return fb.flush(t, 1, 2, 10)
}
