package storage_test

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// newPartition creates a partition directory with both superblock copies
// and opens its log with them.
func newPartition(t *testing.T, fsys storage.FS, opts storage.LogOptions) *storage.Log {
	t.Helper()
	if err := fsys.MkdirAll(partitionDir); err != nil {
		t.Fatal(err)
	}
	sb, err := storage.CreatePartitionSuperblock(fsys, partitionDir, storage.PartitionSuperblock{Flags: 42})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"superblock.a", "superblock.b"} {
		if ok, _ := storage.Exists(fsys, partitionDir+"/"+name); !ok {
			t.Fatalf("a new partition lacks %s", name)
		}
	}
	opts.Superblock = &sb
	l, _ := openLog(t, fsys, partitionDir, opts)
	return l
}

// reopenPartition loads the partition's superblock and opens its log.
func reopenPartition(t *testing.T, fsys storage.FS, opts storage.LogOptions) (*storage.Log, storage.RecoveryReport) {
	t.Helper()
	sb, _, err := storage.LoadPartitionSuperblock(fsys, partitionDir)
	if err != nil {
		t.Fatal(err)
	}
	opts.Superblock = &sb
	return openLog(t, fsys, partitionDir, opts)
}

// TestLogDamageBelowTheDurableFrontierFences: a bit flip in the last
// batch of a log whose superblock recorded it as durable is corruption,
// not a torn tail: the log is fenced at that batch and the file keeps
// every byte. The same damage beyond the frontier is cut as torn.
func TestLogDamageBelowTheDurableFrontierFences(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		fsys := memfs.New()
		l := newPartition(t, fsys, storage.LogOptions{})
		var fb flushBuilder
		if err := l.Append(fb.flush(t, 3, 10, 40)); err != nil {
			t.Fatal(err)
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		lastAt := l.Stats().Bytes
		if err := l.Append(fb.flush(t, 1, 10, 40)); err != nil {
			t.Fatal(err)
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		if recorded {
			if err := l.StoreSuperblock(l.NextOffset()); err != nil {
				t.Fatal(err)
			}
			if sb, _ := l.Superblock(); sb.DurableOffset != 40 || sb.DurableMessages != 40 || sb.ReservedOffset != 40 {
				t.Fatalf("stored superblock %+v", sb)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		fsys.Corrupt(firstLog, lastAt+300, 0x10)
		before, _ := fsys.ReadFile(firstLog)
		l2, report := reopenPartition(t, fsys, storage.LogOptions{})
		after, _ := fsys.ReadFile(firstLog)
		if !recorded {
			if len(report.Truncations) != 1 || report.Corruption != nil || l2.NextOffset() != 30 {
				t.Fatalf("beyond the frontier: %+v", report)
			}
			continue
		}
		c := report.Corruption
		if c == nil || c.File != firstLog || c.Position != lastAt || c.Offset != 30 || len(report.Truncations) != 0 {
			t.Fatalf("below the frontier: %+v", report)
		}
		if !bytes.Equal(before, after) {
			t.Fatalf("the damaged file changed: %d bytes, was %d", len(after), len(before))
		}
		if l2.Fenced() != c {
			t.Fatalf("fence %+v", l2.Fenced())
		}
		// The verified prefix is served, the damage is not; appends are
		// refused.
		expectRange(t, readAll(t, l2, 0), 0, 30)
		if err := l2.Append(fb.flushFrom(t, 30)); !errors.Is(err, storage.ErrLogFenced) {
			t.Fatalf("append to a fenced log: %v", err)
		}
	}
}

// TestLogMissingSegmentBelowTheFrontierFences: the superblock's message
// count tells a lost middle segment from offsets a recovery skipped.
func TestLogMissingSegmentBelowTheFrontierFences(t *testing.T) {
	fsys := memfs.New()
	l := newPartition(t, fsys, storage.LogOptions{SegmentSizeBytes: 1000})
	var fb flushBuilder
	for i := 0; i < 6; i++ {
		if err := l.Append(fb.flush(t, 1, 2, 200)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.StoreSuperblock(l.NextOffset()); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s.Segments < 3 {
		t.Fatalf("want 3 segments or more, %+v", s)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A clean reopen first.
	l2, report := reopenPartition(t, fsys, storage.LogOptions{SegmentSizeBytes: 1000})
	if !report.Clean() {
		t.Fatalf("reopen %+v", report)
	}
	second := l2.Stats()
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := fsys.ReadDir(partitionDir)
	var logs []string
	for _, e := range entries {
		if len(e.Name) > 4 && e.Name[len(e.Name)-4:] == ".log" {
			logs = append(logs, e.Name)
		}
	}
	if err := fsys.Remove(partitionDir + "/" + logs[1]); err != nil {
		t.Fatal(err)
	}
	l3, report := reopenPartition(t, fsys, storage.LogOptions{SegmentSizeBytes: 1000})
	if c := report.Corruption; c == nil || !errors.Is(c.Err, storage.ErrCorrupt) {
		t.Fatalf("lost segment: %+v (stats before %+v)", report, second)
	}
	if records, n, err := l3.Read(nil, 0, 100, 0); err != nil || n != 0 || len(records) != 0 {
		t.Fatalf("a log with a lost segment served %d messages (%v)", n, err)
	}
}

// TestLogSkipsToTheReservationAfterACrash: offsets reserved before a
// crash are never handed out again; reads from a skipped offset continue
// at the next stored message.
func TestLogSkipsToTheReservationAfterACrash(t *testing.T) {
	fsys := memfs.New()
	l := newPartition(t, fsys, storage.LogOptions{})
	var fb flushBuilder
	if l.Reserved() != 0 {
		t.Fatalf("a new partition reserved %d", l.Reserved())
	}
	if err := l.StoreSuperblock(100); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(fb.flush(t, 2, 5, 20)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(fb.flush(t, 2, 5, 20)); err != nil { // lost
		t.Fatal(err)
	}
	fsys.Crash()
	l2, report := reopenPartition(t, fsys, storage.LogOptions{})
	if sk := report.Skip; sk == nil || sk.From != 10 || sk.To != 100 || report.Corruption != nil {
		t.Fatalf("report %+v", report)
	}
	if l2.NextOffset() != 100 || l2.Reserved() != 100 || l2.DurableOffset() != 100 {
		t.Fatalf("next %d reserved %d durable %d", l2.NextOffset(), l2.Reserved(), l2.DurableOffset())
	}
	if got := l2.NextStoredOffset(12); got != 100 {
		t.Fatalf("next stored offset after 12: %d", got)
	}
	if got := l2.NextStoredOffset(7); got != 7 {
		t.Fatalf("next stored offset of 7: %d", got)
	}
	if err := l2.Append(fb.flushFrom(t, 100)); err != nil {
		t.Fatal(err)
	}
	records, n, err := l2.Read(nil, 8, 10, 0)
	if err != nil || n != 4 {
		t.Fatalf("read across the skip: %d %v", n, err)
	}
	if got := offsetsOf(t, records); len(got) != 4 || got[0] != 8 || got[1] != 9 || got[2] != 100 || got[3] != 101 {
		t.Fatalf("offsets %v", got)
	}
	if err := l2.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l2.StoreSuperblock(l2.NextOffset()); err != nil {
		t.Fatal(err)
	}
	if sb, _ := l2.Superblock(); sb.DurableOffset != 102 || sb.DurableMessages != 12 {
		t.Fatalf("superblock after the skip %+v", sb)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	// The gap is recorded in the count: a reopen is clean and does not
	// skip again.
	l3, report := reopenPartition(t, fsys, storage.LogOptions{})
	if !report.Clean() || l3.NextOffset() != 102 {
		t.Fatalf("reopen %+v next %d", report, l3.NextOffset())
	}
	expectRange(t, readAll(t, l3, 100), 100, 102)
}

// TestLogWithoutAValidSuperblockCutsNothing: with no valid superblock
// copy nothing says where a torn write may lie: the log is fenced and
// keeps every byte, and serves what verifies.
func TestLogWithoutAValidSuperblockCutsNothing(t *testing.T) {
	fsys := memfs.New()
	l := newPartition(t, fsys, storage.LogOptions{})
	var fb flushBuilder
	if err := l.Append(fb.flush(t, 2, 5, 20)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"superblock.a", "superblock.b"} {
		fsys.Corrupt(partitionDir+"/"+name, 30, 0xff)
	}
	data, _ := fsys.ReadFile(firstLog)
	fsys.Corrupt(firstLog, int64(len(data))-5, 0x01) // a "torn" tail
	before, _ := fsys.ReadFile(firstLog)
	_, _, err := storage.LoadPartitionSuperblock(fsys, partitionDir)
	if !errors.Is(err, storage.ErrNoSuperblock) {
		t.Fatalf("load: %v", err)
	}
	l2, report := openLog(t, fsys, partitionDir, storage.LogOptions{Superblock: &storage.PartitionSuperblock{Flags: 42}, SuperblockErr: err})
	after, _ := fsys.ReadFile(firstLog)
	if c := report.Corruption; c == nil || !errors.Is(c.Err, storage.ErrNoSuperblock) || len(report.Truncations) != 0 || !bytes.Equal(before, after) {
		t.Fatalf("report %+v", report)
	}
	expectRange(t, readAll(t, l2, 0), 0, 5)
	if err := l2.StoreSuperblock(10); !errors.Is(err, storage.ErrLogFenced) {
		t.Fatalf("store on a fenced log: %v", err)
	}
	// Purge starts over with a fresh superblock, both copies.
	if err := l2.Purge(9); err != nil {
		t.Fatal(err)
	}
	sb, report2, err := storage.LoadPartitionSuperblock(fsys, partitionDir)
	if err != nil || report2.Valid != 2 || sb.PurgeGeneration != 9 || sb.Flags != 42 || l2.Fenced() != nil {
		t.Fatalf("after purge: %+v %+v %v", sb, report2, err)
	}
}

// TestLogFinishesARecordedRetention: segments entirely below the
// superblock's first offset are what a crash left of a deletion; a
// deletion records its first offset before it removes files.
func TestLogFinishesARecordedRetention(t *testing.T) {
	fsys := memfs.New()
	l := newPartition(t, fsys, storage.LogOptions{SegmentSizeBytes: 1000})
	var fb flushBuilder
	for i := 0; i < 6; i++ {
		if err := l.Append(fb.flush(t, 1, 2, 200)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if n, err := l.DeleteOldestSealed(1); err != nil || n != 1 {
		t.Fatalf("delete: %d %v", n, err)
	}
	sb, _ := l.Superblock()
	first := l.Stats().FirstOffset
	if sb.FirstOffset != first || first == 0 {
		t.Fatalf("superblock first offset %d, log %d", sb.FirstOffset, first)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Record a second deletion as DeleteOldestSealed does, then crash
	// before the files go.
	entries, _ := fsys.ReadDir(partitionDir)
	var starts []string
	for _, e := range entries {
		if len(e.Name) > 4 && e.Name[len(e.Name)-4:] == ".log" {
			starts = append(starts, e.Name)
		}
	}
	l2, report := reopenPartition(t, fsys, storage.LogOptions{SegmentSizeBytes: 1000})
	if !report.Clean() {
		t.Fatalf("reopen %+v", report)
	}
	secondStart := l2.Stats()
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	next, err := strconv.ParseUint(starts[1][:20], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	sb, _ = l2.Superblock()
	sb.Sequence++
	sb.FirstOffset = next // the start of the next segment
	sb.DurableMessages -= next - first
	if err := storage.StorePartitionSuperblock(fsys, partitionDir, sb); err != nil {
		t.Fatal(err)
	}
	l3, report := reopenPartition(t, fsys, storage.LogOptions{SegmentSizeBytes: 1000})
	if len(report.RetentionFinished) != 1 || report.RetentionFinished[0] != partitionDir+"/"+starts[0] || report.Corruption != nil {
		t.Fatalf("report %+v (before %+v)", report, secondStart)
	}
	if s := l3.Stats(); s.FirstOffset != next || s.Segments != secondStart.Segments-1 {
		t.Fatalf("stats %+v", s)
	}
}
