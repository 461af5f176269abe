package storage_test

import (
	"errors"
	"testing"

	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// TestLogTruncateTo: a log cut back to a batch boundary drops the later
// batches and segments (a skipped reservation too), appends continue at
// the cut, and a reopen finds exactly the kept messages without fencing
// (the superblock's frontier was lowered first). A cut inside a batch or
// beyond the log's end is refused and changes nothing.
func TestLogTruncateTo(t *testing.T) {
	fsys := memfs.New()
	l := newPartition(t, fsys, storage.LogOptions{SegmentSizeBytes: 4 << 10})
	var fb flushBuilder
	for i := 0; i < 6; i++ {
		if err := l.Append(fb.flush(t, 2, 10, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.StoreSuperblock(l.NextOffset() + 50); err != nil {
		t.Fatal(err)
	}
	segments := l.Stats().Segments
	if segments < 3 {
		t.Fatalf("want several segments, have %d", segments)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The reopen skips to the reservation: offsets 120..169 are skipped.
	l, report := reopenPartition(t, fsys, storage.LogOptions{SegmentSizeBytes: 4 << 10})
	if report.Skip == nil || l.NextOffset() != 170 {
		t.Fatalf("reopen: skip %+v, next %d", report.Skip, l.NextOffset())
	}
	if err := l.TruncateTo(125); !errors.Is(err, storage.ErrLogShort) {
		t.Fatalf("truncate beyond the data: %v", err)
	}
	if err := l.TruncateTo(35); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("truncate inside a batch: %v", err)
	}
	if err := l.TruncateTo(30); err != nil {
		t.Fatal(err)
	}
	if got := l.Stats(); got.NextOffset != 30 || got.Messages != 30 {
		t.Fatalf("after the cut: %+v", got)
	}
	if err := l.Append(fb.flushFrom(t, 30)); err != nil {
		t.Fatalf("append at the cut: %v", err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, report = reopenPartition(t, fsys, storage.LogOptions{SegmentSizeBytes: 4 << 10})
	defer l.Close()
	if report.Corruption != nil || l.Fenced() != nil {
		t.Fatalf("reopen after the cut fenced: %+v", report.Corruption)
	}
	out, n, err := l.Read(nil, 0, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	expectRange(t, offsetsOf(t, out), 0, 32)
	if n != 32 {
		t.Fatalf("read %d messages", n)
	}
}
