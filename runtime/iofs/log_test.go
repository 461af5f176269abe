package iofs

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

// batchMaker makes stamped batches continuing a log's offsets, each
// payload starting with its message's offset.
type batchMaker struct {
	next    uint64
	builder wire.BatchBuilder
}

func (m *batchMaker) flush(t *testing.T, batches, perBatch, payloadBytes int) []byte {
	t.Helper()
	payload := make([]byte, max(payloadBytes, 8))
	var out []byte
	for b := 0; b < batches; b++ {
		m.builder.Reset()
		for i := 0; i < perBatch; i++ {
			binary.LittleEndian.PutUint64(payload, m.next+uint64(i))
			if err := m.builder.Add(wire.MessageID{Low: m.next + uint64(i)}, payload, nil, 1); err != nil {
				t.Fatal(err)
			}
		}
		batch, err := m.builder.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if err := wire.StampBatch(batch, 3, m.next, 1000+m.next); err != nil {
			t.Fatal(err)
		}
		out = append(out, batch...)
		m.next += uint64(perBatch)
	}
	return out
}

// checkLog reads every message of l and checks offsets from..to-1 come back
// in order, each payload naming its offset, each batch's checksum valid.
func checkLog(t *testing.T, l *storage.Log, from, to uint64) {
	t.Helper()
	records, n, err := l.Read(nil, from, ^uint32(0), 0)
	if err != nil {
		t.Fatalf("read from %d: %v", from, err)
	}
	if uint64(n) != to-from {
		t.Fatalf("read %d messages, want %d", n, to-from)
	}
	next := from
	for pos := 0; pos < len(records); {
		v := wire.BatchView(records[pos:])
		size := int(v.BatchLength())
		rec := records[pos : pos+size]
		if sum, err := wire.ComputeBatchChecksum(rec); err != nil || sum != v.BatchChecksum() {
			t.Fatalf("batch at %d: checksum %v", pos, err)
		}
		it := wire.BatchView(rec).Frames()
		for {
			f, ok := it.Next()
			if !ok {
				break
			}
			offset := v.BaseOffset() + uint64(f.OffsetDelta())
			if offset != next || binary.LittleEndian.Uint64(f.Payload()) != offset {
				t.Fatalf("message %d where %d was due (payload %d)", offset, next, binary.LittleEndian.Uint64(f.Payload()))
			}
			next++
		}
		pos += size
	}
	if next != to {
		t.Fatalf("messages end at %d, want %d", next, to)
	}
}

// TestLogOverUring runs a partition log on the uring FS: appends across
// segment rolls, syncs, reads, closes and reopens, and reads again, and
// checks the reopened log finds nothing to repair.
func TestLogOverUring(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		fsys := newFS(t, uring.Config{Entries: 32})
		dir := filepath.Join(t.TempDir(), "streams", "1", "topics", "1", "partitions", "0")
		opts := storage.LogOptions{SegmentSizeBytes: 64 << 10}
		l, report, err := storage.OpenLog(fsys, dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !report.Clean() {
			t.Fatalf("fresh log report %+v", report)
		}
		var m batchMaker
		for i := 0; i < 40; i++ {
			if err := l.Append(m.flush(t, 3, 5, 200)); err != nil {
				t.Fatal(err)
			}
			if i%8 == 0 {
				if err := l.Sync(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		stats := l.Stats()
		if stats.Messages != 600 || stats.Segments < 3 {
			t.Fatalf("stats %+v: want 600 messages over several segments", stats)
		}
		checkLog(t, l, 0, 600)
		checkLog(t, l, 123, 600)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}

		l, report, err = storage.OpenLog(fsys, dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !report.Clean() {
			t.Fatalf("reopen report %+v", report)
		}
		if got := l.Stats(); got.Messages != stats.Messages || got.Segments != stats.Segments || got.NextOffset != 600 {
			t.Fatalf("reopened stats %+v, closed with %+v", got, stats)
		}
		checkLog(t, l, 0, 600)
		if err := l.Append(m.flush(t, 2, 4, 50)); err != nil {
			t.Fatal(err)
		}
		checkLog(t, l, 590, 608)

		// The same directory opens cleanly with the sync engine too: the two
		// engines write the same format.
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l, report, err = storage.OpenLog(storage.OSFS{}, dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !report.Clean() {
			t.Fatalf("sync-engine reopen report %+v", report)
		}
		checkLog(t, l, 0, 608)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
