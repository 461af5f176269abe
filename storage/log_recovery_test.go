package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

const partitionDir = "/data/streams/0/topics/0/partitions/0"

var firstLog = partitionDir + "/" + storage.SegmentLogName(0)

func TestLogCrashKeepsSyncedLosesUnsynced(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{SegmentSizeBytes: 3000})
	var fb flushBuilder
	for i := 0; i < 6; i++ {
		if err := l.Append(fb.flush(t, 2, 2, 300)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	synced := l.Stats()
	for i := 0; i < 4; i++ {
		if err := l.Append(fb.flush(t, 2, 2, 300)); err != nil {
			t.Fatal(err)
		}
	}
	fsys.Crash()
	if err := l.Sync(); err == nil {
		t.Fatal("a handle from before the crash must fail")
	}
	l2, report := openLog(t, fsys, partitionDir, storage.LogOptions{SegmentSizeBytes: 3000})
	got := l2.Stats()
	// Rolling syncs the sealed segment, so more than the explicitly synced
	// prefix may survive, never less and never more than was appended.
	if got.NextOffset < synced.NextOffset || got.NextOffset > fb.next || got.Messages != got.NextOffset {
		t.Fatalf("after crash %+v, synced %+v (report %+v)", got, synced, report)
	}
	if report.Corruption != nil {
		t.Fatalf("crash produced corruption: %+v", report.Corruption)
	}
	expectRange(t, readAll(t, l2, 0), 0, got.NextOffset)
	if err := l2.Append(fb.flushFrom(t, got.NextOffset)); err != nil {
		t.Fatal(err)
	}
}

func TestLogCrashWithoutRollKeepsExactlySynced(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{})
	var fb flushBuilder
	for round := 0; round < 3; round++ {
		if err := l.Append(fb.flush(t, 2, 3, 50)); err != nil {
			t.Fatal(err)
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		synced := l.Stats()
		if err := l.Append(fb.flush(t, 1, 3, 50)); err != nil {
			t.Fatal(err)
		}
		fsys.Crash()
		var report storage.RecoveryReport
		l, report = openLog(t, fsys, partitionDir, storage.LogOptions{})
		if l.Stats() != synced || !report.Clean() {
			t.Fatalf("round %d: %+v, synced %+v, report %+v", round, l.Stats(), synced, report)
		}
		expectRange(t, readAll(t, l, 0), 0, synced.NextOffset)
		fb.next = synced.NextOffset
	}
}

func TestLogTornTailTruncated(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{})
	var fb flushBuilder
	if err := l.Append(fb.flush(t, 3, 5, 100)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	syncedBytes := l.Stats().Bytes
	// One unsynced flush of 2 batches of 5 messages, 256+5*(48+300) = 1996
	// bytes each, written at byte 2988; the crash keeps the file up to the
	// sector boundary 5632: the first batch whole, the second torn after
	// its header.
	if err := l.Append(fb.flush(t, 2, 5, 300)); err != nil {
		t.Fatal(err)
	}
	fsys.CrashTorn(firstLog, 2700)
	l2, report := openLog(t, fsys, partitionDir, storage.LogOptions{IndexIntervalBytes: 1})
	if len(report.Truncations) != 1 {
		t.Fatalf("report %+v", report)
	}
	tr := report.Truncations[0]
	wantEnd := syncedBytes + 1996
	if tr.File != firstLog || tr.Position != wantEnd || tr.BytesDropped != 5632-wantEnd || tr.MessagesDropped != 5 {
		t.Fatalf("truncation %+v, want end %d", tr, wantEnd)
	}
	if s := l2.Stats(); s.NextOffset != 20 || s.Bytes != wantEnd {
		t.Fatalf("stats %+v", s)
	}
	if data, _ := fsys.ReadFile(firstLog); int64(len(data)) != wantEnd {
		t.Fatalf("file holds %d bytes", len(data))
	}
	// The surviving torn flush had no index entry (index unsynced): with
	// an interval of 1 byte the index is extended for the recovered batch.
	if len(report.IndexesRebuilt) != 1 {
		t.Fatalf("index not extended: %+v", report)
	}
	expectRange(t, readAll(t, l2, 0), 0, 20)
	records, n, err := l2.Read(nil, 16, 10, 0)
	if err != nil || n != 4 {
		t.Fatalf("read in the recovered batch: %d %v", n, err)
	}
	expectRange(t, offsetsOf(t, records), 16, 20)

	// Reopening again is clean and idempotent.
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	_, report = openLog(t, fsys, partitionDir, storage.LogOptions{})
	if !report.Clean() {
		t.Fatalf("second reopen %+v", report)
	}
}

func TestLogTornHeaderDropsUnknownMessages(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{})
	var fb flushBuilder
	if err := l.Append(fb.flush(t, 1, 1, 400)); err != nil { // 704 bytes
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(fb.flush(t, 1, 3, 400)); err != nil {
		t.Fatal(err)
	}
	// Keeps up to byte 1024 of the file: 320 bytes of the second batch,
	// its header whole.
	fsys.CrashTorn(firstLog, 400)
	_, report := openLog(t, fsys, partitionDir, storage.LogOptions{})
	if len(report.Truncations) != 1 || report.Truncations[0].BytesDropped != 1024-704 || report.Truncations[0].MessagesDropped != 3 {
		t.Fatalf("report %+v", report)
	}
}

func TestLogIndexRebuiltAfterExternalTruncation(t *testing.T) {
	dir := t.TempDir()
	l, _ := openLog(t, storage.OSFS{}, dir, storage.LogOptions{})
	var fb flushBuilder
	for i := 0; i < 4; i++ {
		if err := l.Append(fb.flush(t, 1, 2, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, storage.SegmentLogName(0))
	info, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	batch := info.Size() / 4
	if err := os.Truncate(logPath, info.Size()-batch/2); err != nil {
		t.Fatal(err)
	}
	l2, report := openLog(t, storage.OSFS{}, dir, storage.LogOptions{})
	if len(report.Truncations) != 1 || report.Truncations[0].BytesDropped != batch-batch/2 ||
		report.Truncations[0].MessagesDropped != 2 || len(report.IndexesRebuilt) != 1 {
		t.Fatalf("report %+v", report)
	}
	index, err := os.ReadFile(filepath.Join(dir, storage.SegmentIndexName(0)))
	if err != nil || len(index) != 3*storage.IndexEntrySize {
		t.Fatalf("index has %d bytes: %v", len(index), err)
	}
	expectRange(t, readAll(t, l2, 0), 0, 6)

	// A garbage index is rebuilt from the log.
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, storage.SegmentIndexName(0)), []byte("not an index at all, no"), 0o644); err != nil {
		t.Fatal(err)
	}
	l3, report := openLog(t, storage.OSFS{}, dir, storage.LogOptions{})
	if len(report.IndexesRebuilt) != 1 || len(report.Truncations) != 0 {
		t.Fatalf("report %+v", report)
	}
	records, n, err := l3.Read(nil, 3, 2, 0)
	if err != nil || n != 2 {
		t.Fatalf("read after index rebuild: %d %v", n, err)
	}
	expectRange(t, offsetsOf(t, records), 3, 5)
}

func TestLogCorruptSealedSegmentFences(t *testing.T) {
	fsys := memfs.New()
	opts := storage.LogOptions{SegmentSizeBytes: 2000}
	l, _ := openLog(t, fsys, partitionDir, opts)
	var fb flushBuilder
	for i := 0; i < 8; i++ { // batches of 256+2*148 = 552 bytes
		if err := l.Append(fb.flush(t, 1, 2, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	before := l.Stats()
	if before.Segments < 2 {
		t.Fatalf("want several segments, got %+v", before)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Flip a payload byte of the second batch of the first (sealed) segment.
	if !fsys.Corrupt(firstLog, 552+256+60, 0x40) {
		t.Fatal("corrupt")
	}
	l2, report := openLog(t, fsys, partitionDir, opts)
	c := report.Corruption
	if c == nil || c.File != firstLog || c.Position != 552 || c.Offset != 2 || len(report.Truncations) != 0 {
		t.Fatalf("report %+v corruption %+v", report, c)
	}
	if data, _ := fsys.ReadFile(firstLog); len(data) < 3*552 {
		t.Fatal("a sealed segment was truncated")
	}
	if l2.NextOffset() != 2 {
		t.Fatalf("readable range ends at %d", l2.NextOffset())
	}
	expectRange(t, readAll(t, l2, 0), 0, 2)
	if err := l2.Append(fb.flushFrom(t, 2)); !errors.Is(err, storage.ErrLogFenced) {
		t.Fatalf("append to a fenced log: %v", err)
	}
	if err := l2.Purge(0); err != nil {
		t.Fatal(err)
	}
	if l2.Fenced() != nil || l2.Stats().Segments != 1 {
		t.Fatal("purge must clear the fence and every segment")
	}
	if err := l2.Append(fb.flushFrom(t, 0)); err != nil {
		t.Fatal(err)
	}
}

func TestLogCorruptMiddleOfActiveSegmentFences(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{})
	var fb flushBuilder
	for i := 0; i < 3; i++ {
		if err := l.Append(fb.flush(t, 1, 2, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fsys.Corrupt(firstLog, 552+100, 1) // inside the second batch's header reserved bytes
	before, _ := fsys.ReadFile(firstLog)
	l2, report := openLog(t, fsys, partitionDir, storage.LogOptions{})
	if report.Corruption == nil || report.Corruption.Position != 552 || len(report.Truncations) != 0 {
		t.Fatalf("corruption followed by valid batches must fence, not truncate: %+v", report)
	}
	after, _ := fsys.ReadFile(firstLog)
	if len(after) != len(before) {
		t.Fatal("file changed")
	}
	expectRange(t, readAll(t, l2, 0), 0, 2)
}

func TestLogReadErrorsAreNotDamage(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{})
	var fb flushBuilder
	if err := l.Append(fb.flush(t, 4, 2, 100)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	fsys.InjectReadError(firstLog, 1000, 10)
	if _, _, err := l.Read(nil, 0, 100, 0); !errors.Is(err, memfs.ErrInjected) {
		t.Fatalf("read with an injected error: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := storage.OpenLog(fsys, partitionDir, storage.LogOptions{}); !errors.Is(err, memfs.ErrInjected) {
		t.Fatalf("open with a read error must fail, not truncate: %v", err)
	}
	fsys.ClearFaults()
	l2, report := openLog(t, fsys, partitionDir, storage.LogOptions{})
	if !report.Clean() || l2.Stats().Messages != 8 {
		t.Fatalf("after clearing the fault: %+v %+v", report, l2.Stats())
	}
}

func TestLogReadDetectsLatentCorruption(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{})
	var fb flushBuilder
	if err := l.Append(fb.flush(t, 3, 2, 100)); err != nil {
		t.Fatal(err)
	}
	fsys.Corrupt(firstLog, 552+300, 2)
	records, n, err := l.Read(nil, 0, 100, 0)
	if !errors.Is(err, storage.ErrCorrupt) || n != 2 {
		t.Fatalf("read over a damaged batch: %d %v", n, err)
	}
	expectRange(t, offsetsOf(t, records), 0, 2)
}

func TestLogWriteFailureStopsUntilReopen(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{})
	var fb flushBuilder
	if err := l.Append(fb.flush(t, 2, 2, 50)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	fsys.InjectWriteError(firstLog)
	if err := l.Append(fb.flush(t, 1, 2, 50)); !errors.Is(err, storage.ErrLogFailed) {
		t.Fatalf("append on a failing disk: %v", err)
	}
	fsys.ClearFaults()
	// The failure is sticky: the file state is unknown until recovery.
	if err := l.Append(fb.flushFrom(t, 4)); !errors.Is(err, storage.ErrLogFailed) {
		t.Fatalf("append after a failure: %v", err)
	}
	if err := l.Sync(); !errors.Is(err, storage.ErrLogFailed) {
		t.Fatalf("sync after a failure: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, report := openLog(t, fsys, partitionDir, storage.LogOptions{})
	if !report.Clean() || l2.NextOffset() != 4 {
		t.Fatalf("reopen: %+v next %d", report, l2.NextOffset())
	}
	if err := l2.Append(fb.flushFrom(t, 4)); err != nil {
		t.Fatal(err)
	}

	// A failed sync is sticky too.
	fsys.InjectWriteError(firstLog)
	if err := l2.Sync(); !errors.Is(err, storage.ErrLogFailed) {
		t.Fatalf("failing sync: %v", err)
	}
	fsys.ClearFaults()
	if err := l2.Sync(); !errors.Is(err, storage.ErrLogFailed) {
		t.Fatalf("sync after a failed sync: %v", err)
	}
}

func TestLogTrustSealedSegments(t *testing.T) {
	fsys := memfs.New()
	opts := storage.LogOptions{SegmentSizeBytes: 2000, TrustSealedSegments: true}
	l, _ := openLog(t, fsys, partitionDir, opts)
	var fb flushBuilder
	for i := 0; i < 12; i++ { // batches of 552 bytes, 4 per sealed segment
		if err := l.Append(fb.flush(t, 1, 2, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	stats := l.Stats()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, report := openLog(t, fsys, partitionDir, opts)
	if !report.Clean() || l2.Stats() != stats {
		t.Fatalf("quick open: %+v %+v, want %+v", report, l2.Stats(), stats)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}

	// Damage in the last batch of the first sealed segment is found at
	// open: the quick check fails and the full scan locates it.
	secondLog := partitionDir + "/" + storage.SegmentLogName(8)
	fsys.Corrupt(secondLog, 3*552+400, 0x04)
	_, report = openLog(t, fsys, partitionDir, opts)
	if c := report.Corruption; c == nil || c.File != secondLog || c.Position != 3*552 || c.Offset != 14 {
		t.Fatalf("quick check missed damage at the end: %+v", report.Corruption)
	}
	fsys.Corrupt(secondLog, 3*552+400, 0x04) // repair

	// Damage in the middle of a sealed segment is not looked for at open;
	// the read that reaches it fails, and the log is fenced there.
	fsys.Corrupt(firstLog, 552+400, 0x08)
	l3, report := openLog(t, fsys, partitionDir, opts)
	if !report.Clean() {
		t.Fatalf("quick open read the middle of a sealed segment: %+v", report)
	}
	records, n, err := l3.Read(nil, 0, 100, 0)
	if !errors.Is(err, storage.ErrCorrupt) || n != 2 {
		t.Fatalf("read into damage: %d %v", n, err)
	}
	expectRange(t, offsetsOf(t, records), 0, 2)
	if c := l3.Fenced(); c == nil || c.File != firstLog || c.Position != 552 || c.Offset != 2 {
		t.Fatalf("fence %+v", c)
	}
	if s := l3.Stats(); s.NextOffset != 2 || s.Messages != 2 || s.Segments != 1 || s.Bytes != 552 {
		t.Fatalf("stats after fence %+v", s)
	}
	if err := l3.Append(fb.flushFrom(t, 2)); !errors.Is(err, storage.ErrLogFenced) {
		t.Fatalf("append after a fence: %v", err)
	}
	expectRange(t, readAll(t, l3, 0), 0, 2)
	// Without the option the same damage is found at open.
	_, report = openLog(t, fsys, partitionDir, storage.LogOptions{SegmentSizeBytes: 2000})
	if report.Corruption == nil || report.Corruption.Position != 552 {
		t.Fatalf("full scan: %+v", report)
	}
}

func TestLogSegmentGapFences(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{})
	var fb flushBuilder
	if err := l.Append(fb.flush(t, 2, 2, 10)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A segment that does not continue the previous one's offsets.
	stray := partitionDir + "/" + storage.SegmentLogName(100)
	f, err := fsys.Create(stray)
	if err != nil {
		t.Fatal(err)
	}
	fb.next = 100
	if _, err := f.Append(fb.flush(t, 1, 1, 10)); err != nil {
		t.Fatal(err)
	}
	l2, report := openLog(t, fsys, partitionDir, storage.LogOptions{})
	if c := report.Corruption; c == nil || c.File != stray || c.Offset != 4 {
		t.Fatalf("gap: %+v", report.Corruption)
	}
	if s := l2.Stats(); s.NextOffset != 4 || s.Segments != 1 {
		t.Fatalf("stats %+v", s)
	}
	expectRange(t, readAll(t, l2, 0), 0, 4)
	if err := l2.Purge(0); err != nil {
		t.Fatal(err)
	}
	if ok, _ := storage.Exists(fsys, stray); ok {
		t.Fatal("purge left a segment the fenced log never loaded")
	}
}
