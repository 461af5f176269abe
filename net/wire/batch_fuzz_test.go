package wire

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzBatchValidate checks that ValidateBatch and the frame iterator never
// panic, that a batch built from the fuzz input validates, survives
// stamping, and that a validated input keeps validating after a stamp.
func FuzzBatchValidate(f *testing.F) {
	f.Add([]byte("hello"), uint8(3), []byte{})
	f.Add(buildTestBatch(f, 2), uint8(1), []byte{1, 1, 0, 0, 0, 'a', 1, 0, 0, 0, 'b'})
	f.Fuzz(func(t *testing.T, data []byte, n uint8, headers []byte) {
		count := uint32(0)
		if len(data) >= BatchHeaderSize {
			count = BatchView(data).MessageCount()
		}
		if err := ValidateBatch(data, count); err == nil {
			again := bytes.Clone(data)
			if err := StampBatch(again, 1, 2, 3); err != nil {
				t.Fatalf("stamping a valid batch: %v", err)
			}
			if err := ValidateBatch(again, count); err != nil {
				t.Fatalf("stamped valid batch: %v", err)
			}
		}
		it := BatchView(data).Frames()
		for {
			if _, ok := it.Next(); !ok {
				break
			}
		}
		var bb BatchBuilder
		messages := int(n%16) + 1
		for i := 0; i < messages; i++ {
			if err := bb.Add(MessageID{Low: uint64(i)}, data, headers, uint64(i)*7); err != nil {
				t.Fatal(err)
			}
		}
		b, err := bb.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateBatch(b, uint32(messages)); err != nil {
			t.Fatalf("built batch: %v", err)
		}
		// Admission adds exactly the user-header check.
		if got, want := ValidateSendBatch(b, uint32(messages)), ValidateUserHeaders(headers); (got == nil) != (want == nil) ||
			BatchErrorCode(got) != BatchErrorCode(want) {
			t.Fatalf("send check %v, header check %v", got, want)
		}
	})
}

// FuzzUserHeaders: the user-header decoders (ValidateUserHeaders and the
// TLV iterator) never panic; ValidateUserHeaders accepts exactly what
// ValidateTLVStrict accepts, refuses with one of 4040, 4018, 4019, and an
// accepted block re-encodes item by item to itself.
func FuzzUserHeaders(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'})
	f.Add([]byte{0, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'})
	f.Add([]byte{2, 1, 0, 0, 0, 'k', 12, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{2, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, block []byte) {
		err := ValidateUserHeaders(block)
		pairs, strict := ValidateTLVStrict(block)
		if (err == nil) != (strict == nil) {
			t.Fatalf("ValidateUserHeaders %v, ValidateTLVStrict %v", err, strict)
		}
		if err != nil {
			if code := BatchErrorCode(err); code != 4040 && code != 4018 && code != 4019 {
				t.Fatalf("code %d for %v", code, err)
			}
			return
		}
		var again []byte
		it := NewTLVIterator(block)
		n := 0
		for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
			var e error
			if again, e = AppendTLVItem(again, k.Kind, k.Data); e != nil {
				t.Fatal(e)
			}
			if again, e = AppendTLVItem(again, v.Kind, v.Data); e != nil {
				t.Fatal(e)
			}
			n++
		}
		if it.Err() != nil || n != pairs || !bytes.Equal(again, block) {
			t.Fatalf("accepted block %x re-encodes as %x (%v)", block, again, it.Err())
		}
	})
}

// FuzzBatchSlice checks that SliceBatch never panics on any record and that
// slicing a valid stamped batch yields a record of exactly the selected
// messages with a correct checksum.
func FuzzBatchSlice(f *testing.F) {
	f.Add([]byte("x"), uint8(5), uint64(12), uint32(3))
	f.Add(buildTestBatch(f, 3), uint8(0), uint64(0), uint32(100))
	f.Fuzz(func(t *testing.T, data []byte, n uint8, from uint64, maxCount uint32) {
		_, _, _ = SliceBatch(nil, data, from, maxCount) // must not panic
		var bb BatchBuilder
		messages := int(n%32) + 1
		for i := 0; i < messages; i++ {
			if err := bb.Add(MessageID{High: uint64(i)}, data, nil, 0); err != nil {
				t.Fatal(err)
			}
		}
		b, err := bb.Finish()
		if err != nil {
			t.Fatal(err)
		}
		base := uint64(10)
		if err := StampBatch(b, 0, base, 0); err != nil {
			t.Fatal(err)
		}
		from %= 64
		maxCount %= 64
		out, count, err := SliceBatch(nil, b, from, maxCount)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := max(from, base), min(from+uint64(maxCount), base+uint64(messages))
		want := uint32(0)
		if hi > lo {
			want = uint32(hi - lo)
		}
		if count != want {
			t.Fatalf("count %d, want %d", count, want)
		}
		if count == 0 {
			if len(out) != 0 {
				t.Fatal("bytes for an empty selection")
			}
			return
		}
		// A slice whose first delta is 0 is itself a valid batch.
		firstDelta := binary.LittleEndian.Uint32(out[BatchHeaderSize+24:])
		if uint64(firstDelta) != lo-base {
			t.Fatalf("first delta %d, want %d", firstDelta, lo-base)
		}
		sum, err := ComputeBatchChecksum(out)
		if err != nil || sum != BatchView(out).BatchChecksum() {
			t.Fatalf("slice checksum: %v", err)
		}
	})
}
