package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/zeebo/xxh3"
)

// buildTestBatch builds a batch of n messages whose payloads are
// "message-<i>" and whose every third message carries a user-header block.
func buildTestBatch(t testing.TB, n int) []byte {
	t.Helper()
	var bb BatchBuilder
	for i := 0; i < n; i++ {
		var headers []byte
		if i%3 == 0 {
			headers = []byte{1, 'k', 0, 0, 0, 1, 1, 0, 0, 0, 'v'}
		}
		id := MessageID{Low: uint64(i) + 1, High: 0xabc}
		if err := bb.Add(id, fmt.Appendf(nil, "message-%d", i), headers, 1_000_000+uint64(n-i)*10); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(b)
}

// referenceBatchChecksum computes §6.3 the slow, obvious way: one-shot
// XXH3 over the concatenation.
func referenceBatchChecksum(b []byte) uint64 {
	var in []byte
	in = append(in, b[0:40]...)
	in = append(in, b[48:52]...)
	pos := BatchHeaderSize
	for pos < len(b) {
		p := int(binary.LittleEndian.Uint32(b[pos+36:]))
		u := int(binary.LittleEndian.Uint32(b[pos+32:]))
		in = append(in, b[pos:pos+8]...)
		pos += 48 + p + u
	}
	return xxh3.Hash(in)
}

func TestBatchBuilderProducesValidBatch(t *testing.T) {
	b := buildTestBatch(t, 7)
	if err := ValidateBatch(b, 7); err != nil {
		t.Fatalf("built batch does not validate: %v", err)
	}
	h, err := DecodeBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.MessageCount != 7 || h.BatchLength != uint64(len(b)) || h.PartitionID != 0 || h.BaseOffset != 0 {
		t.Fatalf("header %+v", h)
	}
	// Earliest timestamp is the last message's: 1_000_000 + 10.
	if h.OriginTimestamp != 1_000_010 {
		t.Fatalf("origin timestamp %d", h.OriginTimestamp)
	}
	if h.BatchChecksum != referenceBatchChecksum(b) {
		t.Fatal("batch checksum differs from the one-shot reference")
	}
	it := BatchView(b).Frames()
	i := 0
	for {
		f, ok := it.Next()
		if !ok {
			break
		}
		if got, want := string(f.Payload()), fmt.Sprintf("message-%d", i); got != want {
			t.Fatalf("payload %d = %q", i, got)
		}
		if f.ID() != (MessageID{Low: uint64(i) + 1, High: 0xabc}) {
			t.Fatalf("id %d = %+v", i, f.ID())
		}
		if f.OffsetDelta() != uint32(i) {
			t.Fatalf("offset delta %d", f.OffsetDelta())
		}
		if got, want := uint64(f.TimestampDelta())+h.OriginTimestamp, 1_000_000+uint64(7-i)*10; got != want {
			t.Fatalf("origin timestamp of %d = %d, want %d", i, got, want)
		}
		if (i%3 == 0) != (len(f.UserHeaders()) == 11) {
			t.Fatalf("user headers of %d: %v", i, f.UserHeaders())
		}
		if xxh3.Hash(f[8:]) != f.Checksum() {
			t.Fatal("frame checksum")
		}
		i++
	}
	if it.Err() != nil || i != 7 {
		t.Fatalf("iterated %d frames, err %v", i, it.Err())
	}
}

func TestValidateBatchRejections(t *testing.T) {
	good := buildTestBatch(t, 3)
	frame0 := BatchHeaderSize
	cases := []struct {
		name   string
		mutate func(b []byte) []byte
		count  uint32
		want   error
		code   uint32
	}{
		{"short", func(b []byte) []byte { return b[:100] }, 3, ErrBatchMalformed, 3},
		{"count mismatch", func(b []byte) []byte { return b }, 2, ErrBatchMalformed, 3},
		{"zero count", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[48:], 0)
			return b
		}, 0, ErrBatchMalformed, 3},
		{"length mismatch", func(b []byte) []byte { return append(b, 0) }, 3, ErrBatchMalformed, 3},
		{"header reserved", func(b []byte) []byte { b[200] = 1; return b }, 3, ErrBatchReserved, 4101},
		{"frame reserved", func(b []byte) []byte { b[frame0+45] = 1; return b }, 3, ErrBatchReserved, 4101},
		{"payload flipped", func(b []byte) []byte { b[frame0+50] ^= 0xff; return b }, 3, ErrBatchMessageChecksum, 4027},
		{"batch checksum", func(b []byte) []byte { b[41] ^= 1; return b }, 3, ErrBatchChecksum, 4039},
		{"origin changed", func(b []byte) []byte { b[24] ^= 1; return b }, 3, ErrBatchChecksum, 4039},
		{"frame overruns", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[frame0+36:], 1<<20)
			return b
		}, 3, ErrBatchMalformed, 3},
		{"offset delta", func(b []byte) []byte {
			f := b[frame0:]
			binary.LittleEndian.PutUint32(f[24:], 5)
			binary.LittleEndian.PutUint64(f[0:], MessageChecksum(f[:48+int(binary.LittleEndian.Uint32(f[36:]))+int(binary.LittleEndian.Uint32(f[32:]))]))
			return b
		}, 3, ErrBatchMalformed, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.mutate(bytes.Clone(good))
			err := ValidateBatch(b, c.count)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if got := BatchErrorCode(err); got != c.code {
				t.Fatalf("code %d, want %d", got, c.code)
			}
			if got := CodeOf(err); uint32(got) != c.code {
				t.Fatalf("CodeOf %d, want %d", got, c.code)
			}
		})
	}
	if BatchErrorCode(nil) != 0 || BatchErrorCode(errors.New("x")) != 3 {
		t.Fatal("BatchErrorCode of nil / foreign error")
	}
}

func TestStampBatch(t *testing.T) {
	b := buildTestBatch(t, 4)
	frames := bytes.Clone(b[BatchHeaderSize:])
	if err := StampBatch(b, 3, 100, 1_700_000_000_000_000); err != nil {
		t.Fatal(err)
	}
	if err := ValidateBatch(b, 4); err != nil {
		t.Fatalf("stamped batch: %v", err)
	}
	v := BatchView(b)
	if v.PartitionID() != 3 || v.BaseOffset() != 100 || v.BaseTimestamp() != 1_700_000_000_000_000 {
		t.Fatal("stamped fields")
	}
	if v.BatchChecksum() != referenceBatchChecksum(b) {
		t.Fatal("stamped checksum differs from reference")
	}
	if !bytes.Equal(frames, b[BatchHeaderSize:]) {
		t.Fatal("stamping changed frames")
	}
}

func TestSliceBatch(t *testing.T) {
	b := buildTestBatch(t, 10)
	if err := StampBatch(b, 1, 50, 99); err != nil {
		t.Fatal(err)
	}
	prefix := []byte("prefix")
	cases := []struct {
		from  uint64
		max   uint32
		count uint32
		first uint32 // offset delta of the first selected frame
	}{
		{50, 10, 10, 0}, {0, 1000, 10, 0}, {53, 4, 4, 3}, {58, 100, 2, 8},
		{40, 11, 1, 0}, {60, 5, 0, 0}, {0, 50, 0, 0}, {55, 0, 0, 0},
		{^uint64(0) - 1, ^uint32(0), 0, 0},
	}
	for _, c := range cases {
		out, n, err := SliceBatch(bytes.Clone(prefix), b, c.from, c.max)
		if err != nil {
			t.Fatalf("slice %+v: %v", c, err)
		}
		if n != c.count {
			t.Fatalf("slice %+v: count %d", c, n)
		}
		if !bytes.Equal(out[:len(prefix)], prefix) {
			t.Fatal("prefix overwritten")
		}
		rec := out[len(prefix):]
		if n == 0 {
			if len(rec) != 0 {
				t.Fatalf("empty slice appended %d bytes", len(rec))
			}
			continue
		}
		if n == 10 && !bytes.Equal(rec, b) {
			t.Fatal("whole selection must be byte-identical")
		}
		v := BatchView(rec)
		if v.BatchLength() != uint64(len(rec)) || v.MessageCount() != n || v.BaseOffset() != 50 ||
			v.PartitionID() != 1 || v.BaseTimestamp() != 99 || v.OriginTimestamp() != BatchView(b).OriginTimestamp() {
			t.Fatalf("slice header %+v", v[:56])
		}
		if v.BatchChecksum() != referenceBatchChecksum(rec) {
			t.Fatal("slice checksum")
		}
		it := v.Frames()
		want := c.first
		for {
			f, ok := it.Next()
			if !ok {
				break
			}
			if f.OffsetDelta() != want || MessageChecksum(f) != f.Checksum() {
				t.Fatalf("frame delta %d want %d", f.OffsetDelta(), want)
			}
			want++
		}
		if want-c.first != n {
			t.Fatalf("walked %d frames", want-c.first)
		}
	}
	if _, _, err := SliceBatch(nil, b[:len(b)-1], 0, 10); !errors.Is(err, ErrBatchMalformed) {
		t.Fatalf("truncated record: %v", err)
	}
}

func TestBatchBuilderErrors(t *testing.T) {
	var bb BatchBuilder
	if _, err := bb.Finish(); !errors.Is(err, ErrBatchMalformed) {
		t.Fatal("empty batch must fail")
	}
	if err := bb.Add(MessageID{}, []byte("a"), nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := bb.Add(MessageID{}, []byte("b"), nil, 1<<33); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.Finish(); !errors.Is(err, ErrBatchMalformed) {
		t.Fatal("timestamp spread over u32 must fail")
	}
	bb.Reset()
	if bb.Count() != 0 || bb.Len() != BatchHeaderSize {
		t.Fatal("reset")
	}
}

func TestBatchHotPathsDoNotAllocate(t *testing.T) {
	b := buildTestBatch(t, 16)
	payload := make([]byte, 100)
	var bb BatchBuilder
	dst := make([]byte, 0, 2*len(b))
	build := func() {
		bb.Reset()
		for i := 0; i < 16; i++ {
			if err := bb.Add(MessageID{Low: uint64(i)}, payload, nil, uint64(i)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := bb.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	build() // warm the buffers
	allocs := testing.AllocsPerRun(50, func() {
		if err := ValidateBatch(b, 16); err != nil {
			t.Fatal(err)
		}
		if err := StampBatch(b, 1, 2, 3); err != nil {
			t.Fatal(err)
		}
		var err error
		if dst, _, err = SliceBatch(dst[:0], b, 5, 4); err != nil {
			t.Fatal(err)
		}
		build()
	})
	if allocs != 0 {
		t.Fatalf("hot paths allocate %.1f times per run", allocs)
	}
}

func BenchmarkValidateBatch(b *testing.B) {
	batch := buildTestBatch(b, 1000)
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		if err := ValidateBatch(batch, 1000); err != nil {
			b.Fatal(err)
		}
	}
}
