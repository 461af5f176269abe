package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"testing"

	"pgregory.net/rapid"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// splitFlush returns the batch records of a flush, each copied into a
// buffer of its own, as the partition state machine holds them.
func splitFlush(flush []byte) [][]byte {
	var out [][]byte
	for pos := 0; pos < len(flush); {
		n := int(wire.BatchView(flush[pos:]).BatchLength())
		out = append(out, bytes.Clone(flush[pos:pos+n]))
		pos += n
	}
	return out
}

// failer is what the helpers need of *testing.T and *rapid.T.
type failer interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// dirImage returns the contents of every file in dir by name.
func dirImage(t failer, fsys storage.FS, dir string) map[string][]byte {
	t.Helper()
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	image := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		f, err := fsys.Open(path.Join(dir, e.Name))
		if err != nil {
			t.Fatal(err)
		}
		size, err := f.Size()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, size)
		if size > 0 {
			if _, err := f.ReadAt(buf, 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		image[e.Name] = buf
	}
	return image
}

// sameImages fails unless the two directory images are byte-identical.
func sameImages(t failer, want, got map[string][]byte) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%d files, want %d", len(got), len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Fatalf("file %s missing", name)
		}
		if !bytes.Equal(w, g) {
			t.Fatalf("file %s differs: %d bytes, want %d", name, len(g), len(w))
		}
	}
}

// TestLogAppendBatchesMatchesAppend checks, on random flushes and segment
// sizes, that AppendBatches of separate batches leaves the same files,
// counters, syncs and read results as Append of their concatenation.
func TestLogAppendBatchesMatchesAppend(t *testing.T) {
	vectorChunks := 0 // segment chunks of more than 1024 batches
	rapid.Check(t, func(rt *rapid.T) {
		segmentSize := rapid.OneOf(rapid.Int64Range(1, 6000), rapid.Int64Range(400_000, 3_000_000)).Draw(rt, "segmentSize")
		opts := storage.LogOptions{SegmentSizeBytes: segmentSize}
		gatherFS, vectorFS := memfs.New(), memfs.New()
		gathered, _, err := storage.OpenLog(gatherFS, partitionDir, opts)
		if err != nil {
			rt.Fatal(err)
		}
		vectored, _, err := storage.OpenLog(vectorFS, partitionDir, opts)
		if err != nil {
			rt.Fatal(err)
		}
		var fb flushBuilder
		var timestamps []uint64
		calls := rapid.IntRange(1, 4).Draw(rt, "calls")
		for call := 0; call < calls; call++ {
			count := rapid.OneOf(rapid.IntRange(1, 30), rapid.IntRange(1025, 2100)).Draw(rt, "batches")
			perBatch := rapid.IntRange(1, 4).Draw(rt, "perBatch")
			payload := rapid.IntRange(8, 400).Draw(rt, "payload")
			var flush []byte
			for b := 0; b < count; b++ {
				// Vary sizes within the call without a draw per batch.
				flush = append(flush, fb.flush(t, 1, 1+(b+perBatch)%4, 8+(b*37+payload)%400)...)
				timestamps = append(timestamps, fb.timestamp)
			}
			if count > 1024 && segmentSize > 400_000 {
				vectorChunks++
			}
			errGathered := gathered.Append(flush)
			errVectored := vectored.AppendBatches(splitFlush(flush))
			if errGathered != nil || errVectored != nil {
				rt.Fatalf("call %d: Append %v, AppendBatches %v", call, errGathered, errVectored)
			}
			if gathered.Stats() != vectored.Stats() {
				rt.Fatalf("stats %+v, want %+v", vectored.Stats(), gathered.Stats())
			}
		}
		sameImages(rt, dirImage(rt, gatherFS, partitionDir), dirImage(rt, vectorFS, partitionDir))
		if gatherFS.Syncs() != vectorFS.Syncs() {
			rt.Fatalf("%d syncs, want %d", vectorFS.Syncs(), gatherFS.Syncs())
		}
		next := fb.next
		var want, got []byte
		for i := 0; i < 8; i++ {
			from := rapid.Uint64Range(0, next).Draw(rt, "from")
			count := rapid.Uint32Range(1, 3000).Draw(rt, "count")
			maxBytes := rapid.IntRange(0, 100_000).Draw(rt, "maxBytes")
			var wantN, gotN uint32
			var wantErr, gotErr error
			want, wantN, wantErr = gathered.Read(want[:0], from, count, maxBytes)
			got, gotN, gotErr = vectored.Read(got[:0], from, count, maxBytes)
			if wantErr != nil || gotErr != nil || wantN != gotN || !bytes.Equal(want, got) {
				rt.Fatalf("read %d+%d/%d: %d messages %v, want %d %v", from, count, maxBytes, gotN, gotErr, wantN, wantErr)
			}
			ts := timestamps[rapid.IntRange(0, len(timestamps)-1).Draw(rt, "timestamp")] - uint64(rapid.IntRange(0, 1).Draw(rt, "before"))
			wantOffset, wantFound, wantErr := gathered.FindByTimestamp(ts)
			gotOffset, gotFound, gotErr := vectored.FindByTimestamp(ts)
			if wantErr != nil || gotErr != nil || wantOffset != gotOffset || wantFound != gotFound {
				rt.Fatalf("timestamp %d: %d %v %v, want %d %v %v", ts, gotOffset, gotFound, gotErr, wantOffset, wantFound, wantErr)
			}
		}
		records, n, err := vectored.Read(nil, 0, ^uint32(0), 0)
		if err != nil || uint64(n) != next {
			rt.Fatalf("full read: %d of %d messages: %v", n, next, err)
		}
		expectRange(t, offsetsOf(t, records), 0, next)
		if err := errors.Join(gathered.Close(), vectored.Close()); err != nil {
			rt.Fatal(err)
		}
		// Both logs reopen with every index intact: writes space their
		// entries as recovery expects, however large the flushes.
		gatherReport := reopenUnchanged(rt, gatherFS, opts, next)
		vectorReport := reopenUnchanged(rt, vectorFS, opts, next)
		if len(gatherReport.IndexesRebuilt) != 0 || len(vectorReport.IndexesRebuilt) != 0 {
			rt.Fatalf("reopen rebuilt indexes %v (AppendBatches) and %v (Append)", vectorReport.IndexesRebuilt, gatherReport.IndexesRebuilt)
		}
		sameImages(rt, dirImage(rt, gatherFS, partitionDir), dirImage(rt, vectorFS, partitionDir))
	})
	if vectorChunks == 0 {
		t.Fatal("no segment took more than 1024 batches in one call")
	}
}

// reopenUnchanged reopens the log at partitionDir and fails unless
// recovery kept every message and found no damage.
func reopenUnchanged(t failer, fsys storage.FS, opts storage.LogOptions, next uint64) storage.RecoveryReport {
	t.Helper()
	l, report, err := storage.OpenLog(fsys, partitionDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Truncations) > 0 || report.Corruption != nil || l.NextOffset() != next {
		t.Fatalf("reopen: %+v, next offset %d of %d", report, l.NextOffset(), next)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return report
}

// TestLogAppendBatchesMatchesAppendOnDisk is the differential check on
// real files: a call of 3000 batches that rolls segments and writes
// segment chunks of more than 1024 batches, then small calls.
func TestLogAppendBatchesMatchesAppendOnDisk(t *testing.T) {
	gatherDir, vectorDir := t.TempDir(), t.TempDir()
	opts := storage.LogOptions{SegmentSizeBytes: 700 << 10}
	gathered, _ := openLog(t, storage.OSFS{}, gatherDir, opts)
	vectored, _ := openLog(t, storage.OSFS{}, vectorDir, opts)
	var fb flushBuilder
	for _, c := range []struct{ batches, perBatch, payload int }{{3000, 2, 100}, {1, 1, 8}, {7, 3, 900}, {2048, 1, 30}} {
		flush := fb.flush(t, c.batches, c.perBatch, c.payload)
		if err := gathered.Append(flush); err != nil {
			t.Fatal(err)
		}
		if err := vectored.AppendBatches(splitFlush(flush)); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(gathered.Sync(), vectored.Sync()); err != nil {
		t.Fatal(err)
	}
	if s := vectored.Stats(); s != gathered.Stats() || s.Segments < 3 {
		t.Fatalf("stats %+v, want %+v (and a few segments)", s, gathered.Stats())
	}
	sameImages(t, dirImage(t, storage.OSFS{}, gatherDir), dirImage(t, storage.OSFS{}, vectorDir))
	expectRange(t, readAll(t, vectored, 0), 0, fb.next)
	for _, l := range []*storage.Log{gathered, vectored} {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	gatherReopened, gatherReport := openLog(t, storage.OSFS{}, gatherDir, opts)
	vectorReopened, vectorReport := openLog(t, storage.OSFS{}, vectorDir, opts)
	for _, report := range []storage.RecoveryReport{gatherReport, vectorReport} {
		if len(report.Truncations) > 0 || report.Corruption != nil || len(report.IndexesRebuilt) != len(gatherReport.IndexesRebuilt) {
			t.Fatalf("reopen: %+v, after Append %+v", report, gatherReport)
		}
	}
	if vectorReopened.Stats() != gatherReopened.Stats() {
		t.Fatalf("stats after reopen %+v, want %+v", vectorReopened.Stats(), gatherReopened.Stats())
	}
	sameImages(t, dirImage(t, storage.OSFS{}, gatherDir), dirImage(t, storage.OSFS{}, vectorDir))
	expectRange(t, readAll(t, vectorReopened, 0), 0, fb.next)
}

// TestLogAppendBatchesRejectsBadInput checks that invalid batch lists are
// refused with ErrBadAppend and leave the files and counters untouched.
func TestLogAppendBatchesRejectsBadInput(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{SegmentSizeBytes: 2048})
	var fb flushBuilder
	if err := l.AppendBatches(splitFlush(fb.flush(t, 5, 2, 300))); err != nil {
		t.Fatal(err)
	}
	before, stats := dirImage(t, fsys, partitionDir), l.Stats()
	good := splitFlush(fb.flush(t, 3, 2, 50)) // offsets 10, 12, 14
	twoInOne := append(bytes.Clone(good[0]), good[1]...)
	bad := fb.flushFrom(t, 12)
	bad[len(bad)-1] ^= 0xff // checksum mismatch, caught by full validation
	cases := []struct {
		name    string
		batches [][]byte
	}{
		{"nil", nil},
		{"no batches", [][]byte{}},
		{"empty buffer", [][]byte{good[0], {}}},
		{"gap", [][]byte{good[0], good[2]}},
		{"not at the log's end", [][]byte{good[1], good[2]}},
		{"repeated", [][]byte{good[0], good[0]}},
		{"short", [][]byte{good[0], good[1][:len(good[1])-1]}},
		{"header only", [][]byte{good[0][:wire.BatchHeaderSize]}},
		{"trailing byte", [][]byte{append(bytes.Clone(good[0]), 0)}},
		{"two batches in one buffer", [][]byte{twoInOne, good[2]}},
		{"bad last batch", [][]byte{good[0], good[1], good[2], bad}},
	}
	if invariantsOn {
		cases = append(cases, struct {
			name    string
			batches [][]byte
		}{"corrupt content", [][]byte{good[0], bad}})
	}
	for _, c := range cases {
		if err := l.AppendBatches(c.batches); !errors.Is(err, storage.ErrBadAppend) {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	sameImages(t, before, dirImage(t, fsys, partitionDir))
	if l.Stats() != stats {
		t.Fatalf("stats %+v after rejected appends, want %+v", l.Stats(), stats)
	}
	// The log is still usable.
	if err := l.AppendBatches(good); err != nil {
		t.Fatal(err)
	}
	expectRange(t, readAll(t, l, 0), 0, 16)
}

// shortFS wraps memfs so that the next append to a `.log` file writes
// only its first keep bytes and reports that count without an error, as a
// short write on a full disk would.
type shortFS struct {
	*memfs.FS
	keep int // -1: writes are whole
}

func (s *shortFS) Create(p string) (storage.File, error) {
	f, err := s.FS.Create(p)
	return &shortFile{File: f, fs: s, log: path.Ext(p) == ".log"}, err
}

func (s *shortFS) OpenReadWrite(p string) (storage.File, error) {
	f, err := s.FS.OpenReadWrite(p)
	return &shortFile{File: f, fs: s, log: path.Ext(p) == ".log"}, err
}

type shortFile struct {
	storage.File
	fs  *shortFS
	log bool
}

func (f *shortFile) Append(p []byte) (int, error) {
	return f.AppendVector([][]byte{p})
}

func (f *shortFile) AppendVector(buffers [][]byte) (int, error) {
	if !f.log || f.fs.keep < 0 {
		return f.File.AppendVector(buffers)
	}
	joined := bytes.Join(buffers, nil)
	keep := min(f.fs.keep, len(joined))
	f.fs.keep = -1
	return f.File.Append(joined[:keep])
}

// TestLogAppendBatchesShortWriteFailsLog checks that a short vectored
// write fails the log exactly as a short write fails Append: the same
// error, a sticky failure, and the same recovery at reopen.
func TestLogAppendBatchesShortWriteFailsLog(t *testing.T) {
	opts := storage.LogOptions{SegmentSizeBytes: 1 << 20}
	var fb flushBuilder
	first := fb.flush(t, 3, 2, 100)
	second := fb.flush(t, 40, 2, 100)
	keep := len(second)/2 + 7 // inside a batch
	images := make([]map[string][]byte, 2)
	reports := make([]storage.RecoveryReport, 2)
	for i, vectored := range []bool{false, true} {
		fsys := &shortFS{FS: memfs.New(), keep: -1}
		l, _ := openLog(t, fsys, partitionDir, opts)
		appendFlush := func(flush []byte) error {
			if vectored {
				return l.AppendBatches(splitFlush(flush))
			}
			return l.Append(flush)
		}
		if err := appendFlush(first); err != nil {
			t.Fatal(err)
		}
		fsys.keep = keep
		if err := appendFlush(second); !errors.Is(err, storage.ErrLogFailed) {
			t.Fatalf("vectored=%v: short write: %v", vectored, err)
		}
		if err := appendFlush(fb.flushFrom(t, 6)); !errors.Is(err, storage.ErrLogFailed) {
			t.Fatalf("vectored=%v: append after a short write: %v", vectored, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		reopened, report := openLog(t, fsys, partitionDir, opts)
		if len(report.Truncations) != 1 || report.Corruption != nil {
			t.Fatalf("vectored=%v: reopen report %+v", vectored, report)
		}
		// Whole batches before the cut survive; the torn one is dropped.
		expectRange(t, readAll(t, reopened, 0), 0, 6+wholeMessages(second[:keep]))
		images[i], reports[i] = dirImage(t, fsys, partitionDir), report
	}
	sameImages(t, images[0], images[1])
	if fmt.Sprint(reports[0]) != fmt.Sprint(reports[1]) {
		t.Fatalf("recovery after AppendBatches %+v, after Append %+v", reports[1], reports[0])
	}
}

// wholeMessages counts the messages of the whole batch records at the
// start of b.
func wholeMessages(b []byte) uint64 {
	messages := uint64(0)
	for pos := 0; len(b)-pos >= wire.BatchHeaderSize; {
		v := wire.BatchView(b[pos:])
		if uint64(len(b)-pos) < v.BatchLength() {
			break
		}
		messages += uint64(v.MessageCount())
		pos += int(v.BatchLength())
	}
	return messages
}

// TestLogAppendBatchesWriteErrorFailsLog checks that an injected write
// error fails the log and that the failure is sticky.
func TestLogAppendBatchesWriteErrorFailsLog(t *testing.T) {
	fsys := memfs.New()
	l, _ := openLog(t, fsys, partitionDir, storage.LogOptions{})
	var fb flushBuilder
	if err := l.AppendBatches(splitFlush(fb.flush(t, 2, 2, 50))); err != nil {
		t.Fatal(err)
	}
	fsys.InjectWriteError(firstLog)
	if err := l.AppendBatches(splitFlush(fb.flush(t, 3, 2, 50))); !errors.Is(err, storage.ErrLogFailed) {
		t.Fatalf("append on a failing disk: %v", err)
	}
	fsys.ClearFaults()
	if err := l.AppendBatches(splitFlush(fb.flushFrom(t, 4))); !errors.Is(err, storage.ErrLogFailed) {
		t.Fatalf("append after a failure: %v", err)
	}
}

// discardFS wraps memfs so that file appends are counted, not stored:
// what is left allocating is the Log itself.
type discardFS struct{ *memfs.FS }

func (d discardFS) Create(p string) (storage.File, error) {
	f, err := d.FS.Create(p)
	return discardFile{File: f}, err
}

func (d discardFS) OpenReadWrite(p string) (storage.File, error) {
	f, err := d.FS.OpenReadWrite(p)
	return discardFile{File: f}, err
}

type discardFile struct{ storage.File }

func (discardFile) Append(p []byte) (int, error) { return len(p), nil }

func (discardFile) AppendVector(buffers [][]byte) (int, error) {
	n := 0
	for _, b := range buffers {
		n += len(b)
	}
	return n, nil
}

// TestLogAppendBatchesAllocatesNothingPerBatch checks that, once warm and
// without a roll, a flush of 1000 batches allocates no more than one of
// 10 batches, and neither allocates at all (the in-memory index grows one
// entry per flush, amortised below one allocation per run).
func TestLogAppendBatchesAllocatesNothingPerBatch(t *testing.T) {
	allocs := func(count int) float64 {
		l, _ := openLog(t, discardFS{memfs.New()}, partitionDir, storage.LogOptions{})
		var fb flushBuilder
		batches := splitFlush(fb.flush(t, count, 1, 64))
		next := uint64(0)
		return testing.AllocsPerRun(100, func() {
			for _, b := range batches {
				if err := wire.StampBatch(b, 7, next, 1000+next); err != nil {
					t.Fatal(err)
				}
				next++
			}
			if err := l.AppendBatches(batches); err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := allocs(10), allocs(1000)
	if few != many || many > 0 {
		t.Fatalf("AppendBatches allocates %.2f times for 10 batches, %.2f for 1000", few, many)
	}
}
