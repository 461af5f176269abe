package storage_test

import (
	"testing"

	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// FuzzLogOpen writes arbitrary bytes after a valid prefix of batches in a
// segment (and arbitrary index bytes), then checks that recovery never
// panics, keeps the valid prefix, and leaves a log whose every message
// reads back and which accepts an append unless it is fenced.
func FuzzLogOpen(f *testing.F) {
	var fb flushBuilder
	f.Add(uint8(2), fb.flush(f, 1, 2, 20), []byte{})
	f.Add(uint8(0), []byte("garbage after nothing"), []byte{1, 2, 3})
	f.Add(uint8(3), []byte{}, make([]byte, 48))
	f.Fuzz(func(t *testing.T, prefixBatches uint8, tail []byte, index []byte) {
		fsys := memfs.New()
		if err := fsys.MkdirAll("/p"); err != nil {
			t.Fatal(err)
		}
		var fb flushBuilder
		prefix := fb.flush(t, int(prefixBatches%4), 2, 30)
		write := func(name string, data []byte) {
			file, err := fsys.Create("/p/" + name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := file.WriteAt(data, 0); err != nil {
				t.Fatal(err)
			}
			if err := file.Close(); err != nil {
				t.Fatal(err)
			}
		}
		write(storage.SegmentLogName(0), append(prefix, tail...))
		write(storage.SegmentIndexName(0), index)
		l, report, err := storage.OpenLog(fsys, "/p", storage.LogOptions{})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		stats := l.Stats()
		if stats.NextOffset < fb.next {
			t.Fatalf("recovery lost the valid prefix: next %d < %d (%+v)", stats.NextOffset, fb.next, report)
		}
		records, n, err := l.Read(nil, 0, ^uint32(0), 0)
		if err != nil || uint64(n) != stats.NextOffset {
			t.Fatalf("read back %d of %d: %v", n, stats.NextOffset, err)
		}
		expectRange(t, offsetsOf(t, records), 0, stats.NextOffset)
		if l.Fenced() == nil {
			if err := l.Append(fb.flushFrom(t, stats.NextOffset)); err != nil {
				t.Fatalf("append after recovery: %v", err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzLogOpenWithSuperblock is FuzzLogOpen for a log kept with its
// partition superblock, whose durable frontier, count and reservation come
// from the input: recovery never panics, never cuts anything when it
// fences, keeps everything below the frontier when it does not, starts
// the next message at or after the reservation, and serves increasing
// offsets.
func FuzzLogOpenWithSuperblock(f *testing.F) {
	var fb flushBuilder
	good := fb.flush(f, 1, 2, 20)
	f.Add(uint8(2), good[:len(good)-3], []byte{}, uint64(4), uint64(4), uint64(40))
	f.Add(uint8(3), []byte{}, make([]byte, 48), uint64(2), uint64(2), uint64(0))
	f.Add(uint8(1), []byte("torn"), []byte{}, uint64(1), uint64(9), uint64(3))
	f.Fuzz(func(t *testing.T, prefixBatches uint8, tail []byte, index []byte, durable, messages, reserved uint64) {
		fsys := memfs.New()
		if err := fsys.MkdirAll("/p"); err != nil {
			t.Fatal(err)
		}
		var fb flushBuilder
		prefix := fb.flush(t, int(prefixBatches%4), 2, 30)
		write := func(name string, data []byte) {
			file, err := fsys.Create("/p/" + name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := file.WriteAt(data, 0); err != nil {
				t.Fatal(err)
			}
			if err := file.Close(); err != nil {
				t.Fatal(err)
			}
		}
		logName := "/p/" + storage.SegmentLogName(0)
		write(storage.SegmentLogName(0), append(prefix, tail...))
		write(storage.SegmentIndexName(0), index)
		before, _ := fsys.ReadFile(logName)
		sb := storage.PartitionSuperblock{Version: storage.PartitionSuperblockVersion, Sequence: 2,
			DurableOffset: durable % 16, DurableMessages: messages % 16, ReservedOffset: reserved % 64}
		l, report, err := storage.OpenLog(fsys, "/p", storage.LogOptions{Superblock: &sb})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		after, _ := fsys.ReadFile(logName)
		if c := l.Fenced(); c != nil {
			if len(report.Truncations) != 0 || report.Skip != nil || string(before) != string(after) {
				t.Fatalf("a fenced log was changed: %+v", report)
			}
		} else {
			end := l.NextOffset()
			if report.Skip != nil {
				end = report.Skip.From
			}
			if end < sb.DurableOffset || l.NextOffset() < sb.ReservedOffset || end < fb.next {
				t.Fatalf("recovered to %d (next %d), superblock %+v, valid prefix %d (%+v)", end, l.NextOffset(), sb, fb.next, report)
			}
		}
		records, _, err := l.Read(nil, 0, ^uint32(0), 0)
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		offsets := offsetsOf(t, records)
		for i := 1; i < len(offsets); i++ {
			if offsets[i] <= offsets[i-1] {
				t.Fatalf("offsets %v", offsets)
			}
		}
		if l.Fenced() == nil {
			if err := l.Append(fb.flushFrom(t, l.NextOffset())); err != nil {
				t.Fatalf("append after recovery: %v", err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
