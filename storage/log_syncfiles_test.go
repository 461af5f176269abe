package storage_test

import (
	"testing"

	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// TestSyncFiles checks the asynchronous form of Sync: the files it hands
// out are exactly what durability needs (syncing them makes the log
// survive a power loss; a second call hands out nothing until the next
// write), a segment roll still syncs the sealed segment, and Fail fails
// the log.
func TestSyncFiles(t *testing.T) {
	fsys := memfs.New()
	opts := storage.LogOptions{SegmentSizeBytes: 64 << 10}
	l, _ := openLog(t, fsys, partitionDir, opts)
	var fb flushBuilder
	if err := l.Append(fb.flush(t, 4, 10, 100)); err != nil {
		t.Fatal(err)
	}
	files, err := l.SyncFiles(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("SyncFiles handed out %d files for one written segment (its log and index)", len(files))
	}
	if again, err := l.SyncFiles(nil); err != nil || len(again) != 0 {
		t.Fatalf("second SyncFiles: %d files, %v", len(again), err)
	}
	for _, f := range files {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	// Unsynced: written after the files were handed out.
	if err := l.Append(fb.flush(t, 1, 10, 100)); err != nil {
		t.Fatal(err)
	}
	fsys.Crash()
	recovered, _ := openLog(t, fsys, partitionDir, opts)
	if next := recovered.NextOffset(); next != 40 {
		t.Fatalf("after a power loss the log ends at %d, want the 40 synced messages", next)
	}
	if err := recovered.Close(); err != nil {
		t.Fatal(err)
	}

	// A roll syncs the sealed segment even though SyncFiles counted it
	// synced (its asynchronous sync may still be in flight).
	fsys = memfs.New()
	l, _ = openLog(t, fsys, partitionDir, opts)
	fb = flushBuilder{}
	for l.Stats().Bytes < opts.SegmentSizeBytes { // fill the first segment
		if err := l.Append(fb.flush(t, 1, 10, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.SyncFiles(nil); err != nil { // handed out, never synced
		t.Fatal(err)
	}
	before := fsys.Syncs()
	if err := l.Append(fb.flush(t, 1, 10, 100)); err != nil { // rolls first
		t.Fatal(err)
	}
	if l.Stats().Segments != 2 {
		t.Fatalf("%d segments: the append did not roll", l.Stats().Segments)
	}
	if fsys.Syncs() < before+2 {
		t.Fatalf("rolling synced %d files, want the sealed segment's log and index", fsys.Syncs()-before)
	}
	// After a new segment, SyncFiles makes its directory entry durable.
	files, err = l.SyncFiles(nil)
	if err != nil || len(files) != 2 {
		t.Fatalf("after a roll: %d files, %v", len(files), err)
	}
	if err := l.Fail(storage.ErrCorrupt); err == nil {
		t.Fatal("Fail returned nil")
	}
	if err := l.Append(fb.flushFrom(t, l.NextOffset())); err == nil {
		t.Fatal("a failed log took an append")
	}
	if _, err := l.SyncFiles(nil); err == nil {
		t.Fatal("a failed log handed out files to sync")
	}
}
