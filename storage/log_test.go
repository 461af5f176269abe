package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

func openLog(t *testing.T, fsys storage.FS, dir string, opts storage.LogOptions) (*storage.Log, storage.RecoveryReport) {
	t.Helper()
	l, report, err := storage.OpenLog(fsys, dir, opts)
	if err != nil {
		t.Fatalf("open log: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, report
}

func readAll(t *testing.T, l *storage.Log, from uint64) []uint64 {
	t.Helper()
	records, _, err := l.Read(nil, from, ^uint32(0), 0)
	if err != nil {
		t.Fatalf("read from %d: %v", from, err)
	}
	return offsetsOf(t, records)
}

func TestLogAppendReadReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "partitions", "0")
	l, report := openLog(t, storage.OSFS{}, dir, storage.LogOptions{})
	if !report.Clean() {
		t.Fatalf("fresh log report %+v", report)
	}
	var fb flushBuilder
	for i := 0; i < 5; i++ {
		if err := l.Append(fb.flush(t, 3, 4, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	stats := l.Stats()
	if stats.Messages != 60 || stats.NextOffset != 60 || stats.FirstOffset != 0 || stats.Segments != 1 {
		t.Fatalf("stats %+v", stats)
	}
	expectRange(t, readAll(t, l, 0), 0, 60)
	// Partial first and last batches, across flushes.
	records, n, err := l.Read(nil, 6, 13, 0)
	if err != nil || n != 13 {
		t.Fatalf("read 6+13: %d %v", n, err)
	}
	expectRange(t, offsetsOf(t, records), 6, 19)
	if _, n, _ := l.Read(nil, 60, 10, 0); n != 0 {
		t.Fatal("read past the end returned messages")
	}
	// A byte budget stops at batch boundaries but returns at least one.
	records, n, err = l.Read(nil, 0, 100, 1)
	if err != nil || n != 4 {
		t.Fatalf("budgeted read: %d %v", n, err)
	}
	expectRange(t, offsetsOf(t, records), 0, 4)
	if _, err := os.Stat(filepath.Join(dir, "00000000000000000000.log")); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.index"))
	if err != nil || len(index) != 5*storage.IndexEntrySize {
		t.Fatalf("index of %d bytes (one entry per flush expected): %v", len(index), err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l2, report := openLog(t, storage.OSFS{}, dir, storage.LogOptions{})
	if !report.Clean() {
		t.Fatalf("clean reopen reported %+v", report)
	}
	if l2.Stats() != stats {
		t.Fatalf("stats after reopen %+v, before %+v", l2.Stats(), stats)
	}
	if err := l2.Append(fb.flush(t, 1, 2, 10)); err != nil {
		t.Fatal(err)
	}
	expectRange(t, readAll(t, l2, 0), 0, 62)
}

func TestLogRejectsBadAppends(t *testing.T) {
	l, _ := openLog(t, memfs.New(), "/p", storage.LogOptions{})
	fb := flushBuilder{next: 5}
	if err := l.Append(fb.flush(t, 1, 1, 10)); !errors.Is(err, storage.ErrBadAppend) {
		t.Fatalf("offset gap: %v", err)
	}
	fb = flushBuilder{}
	good := fb.flush(t, 2, 1, 10)
	if err := l.Append(good[:len(good)-1]); !errors.Is(err, storage.ErrBadAppend) {
		t.Fatalf("partial batch: %v", err)
	}
	if err := l.Append(nil); !errors.Is(err, storage.ErrBadAppend) {
		t.Fatalf("empty: %v", err)
	}
	if l.Stats().Messages != 0 {
		t.Fatal("rejected appends changed the log")
	}
}

func TestLogRollsSegments(t *testing.T) {
	dir := t.TempDir()
	const segmentSize = 4096
	l, _ := openLog(t, storage.OSFS{}, dir, storage.LogOptions{SegmentSizeBytes: segmentSize})
	var fb flushBuilder
	for i := 0; i < 20; i++ {
		if err := l.Append(fb.flush(t, 2, 3, 200)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	batchBytes := int64(wire.BatchHeaderSize + 3*(wire.MessageHeaderSize+200))
	stats := l.Stats()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs int
	var total int64
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".log" {
			continue
		}
		logs++
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		total += info.Size()
		// A segment exceeds the size by less than one batch; every
		// sealed one (all but the last) reached it.
		if info.Size() >= segmentSize+batchBytes || (logs < stats.Segments && info.Size() < segmentSize) {
			t.Fatalf("%s has %d bytes", e.Name(), info.Size())
		}
	}
	if total != stats.Bytes || logs < 2 {
		t.Fatalf("%d bytes in %d files, stats say %d", total, logs, stats.Bytes)
	}
	if logs != stats.Segments {
		t.Fatalf("%d .log files for %d segments", logs, stats.Segments)
	}
	expectRange(t, readAll(t, l, 0), 0, 120)
	records, n, err := l.Read(nil, 31, 40, 0)
	if err != nil || n != 40 {
		t.Fatalf("cross-segment read: %d %v", n, err)
	}
	expectRange(t, offsetsOf(t, records), 31, 71)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, report := openLog(t, storage.OSFS{}, dir, storage.LogOptions{SegmentSizeBytes: segmentSize})
	if !report.Clean() || l2.Stats() != stats {
		t.Fatalf("reopen: %+v %+v", report, l2.Stats())
	}

	deleted, err := l2.DeleteOldestSealed(2)
	if err != nil || deleted != 2 {
		t.Fatalf("delete: %d %v", deleted, err)
	}
	after := l2.Stats()
	if after.Segments != stats.Segments-2 || after.FirstOffset == 0 || after.NextOffset != 120 {
		t.Fatalf("after delete %+v", after)
	}
	expectRange(t, readAll(t, l2, 0), after.FirstOffset, 120)
	if after.Messages != 120-after.FirstOffset {
		t.Fatalf("messages %d after delete", after.Messages)
	}
	if deleted, err := l2.DeleteOldestSealed(1000); err != nil || deleted != after.Segments-1 {
		t.Fatalf("delete all sealed: %d %v", deleted, err)
	}
	if l2.Stats().Segments != 1 {
		t.Fatal("the active segment must stay")
	}

	if err := l2.Purge(0); err != nil {
		t.Fatal(err)
	}
	if s := l2.Stats(); s != (storage.LogStats{Segments: 1}) {
		t.Fatalf("after purge %+v", s)
	}
	fb = flushBuilder{}
	if err := l2.Append(fb.flush(t, 1, 2, 10)); err != nil {
		t.Fatal(err)
	}
	expectRange(t, readAll(t, l2, 0), 0, 2)
}

func TestLogFindByTimestamp(t *testing.T) {
	l, _ := openLog(t, memfs.New(), "/p", storage.LogOptions{SegmentSizeBytes: 2048})
	var fb flushBuilder
	for i := 0; i < 10; i++ {
		if err := l.Append(fb.flush(t, 2, 2, 100)); err != nil {
			t.Fatal(err)
		}
	}
	// Batch k (0-based) has base timestamp 1000(k+1) and base offset 2k.
	for _, c := range []struct {
		ts     uint64
		offset uint64
		found  bool
	}{{0, 0, true}, {1000, 0, true}, {1001, 2, true}, {7000, 12, true}, {20000, 38, true}, {20001, 0, false}} {
		offset, found, err := l.FindByTimestamp(c.ts)
		if err != nil || found != c.found || (found && offset != c.offset) {
			t.Fatalf("timestamp %d: %d %v %v, want %d %v", c.ts, offset, found, err, c.offset, c.found)
		}
	}
}

func TestLogAppendDoesNotAllocatePerMessage(t *testing.T) {
	l, _ := openLog(t, storage.OSFS{}, t.TempDir(), storage.LogOptions{})
	var fb flushBuilder
	flushes := make([][]byte, 60)
	for i := range flushes {
		flushes[i] = fb.flush(t, 4, 16, 64)
	}
	i := 0
	allocs := testing.AllocsPerRun(50, func() {
		if err := l.Append(flushes[i]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	// The only allocation is the amortised growth of the in-memory index
	// (one entry per flush), far below one per flush.
	if allocs >= 1 {
		t.Fatalf("Append allocates %.2f times per flush of 64 messages", allocs)
	}
}
