package storage_test

import (
	"bytes"
	"errors"
	"path"
	"testing"

	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// errCrashed is what crashFS answers from the power loss on.
var errCrashed = errors.New("crashed")

// crashFS is a memfs that loses power (memfs.Crash) at its left-th
// mutating operation (a namespace change, a write or a sync) and fails
// everything after it.
type crashFS struct {
	*memfs.FS
	left    int
	crashed bool
}

func (c *crashFS) step() error {
	if c.crashed {
		return errCrashed
	}
	if c.left == 0 {
		c.crashed = true
		c.FS.Crash()
		return errCrashed
	}
	c.left--
	return nil
}

func (c *crashFS) wrap(f storage.File, err error) (storage.File, error) {
	if err != nil {
		return nil, err
	}
	return &crashFile{File: f, fs: c}, nil
}

func (c *crashFS) Create(p string) (storage.File, error) {
	if err := c.step(); err != nil {
		return nil, err
	}
	return c.wrap(c.FS.Create(p))
}

func (c *crashFS) OpenReadWrite(p string) (storage.File, error) {
	if err := c.step(); err != nil {
		return nil, err
	}
	return c.wrap(c.FS.OpenReadWrite(p))
}

func (c *crashFS) Open(p string) (storage.File, error) {
	if c.crashed {
		return nil, errCrashed
	}
	return c.wrap(c.FS.Open(p))
}

func (c *crashFS) MkdirAll(p string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.MkdirAll(p)
}

func (c *crashFS) Remove(p string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.Remove(p)
}

func (c *crashFS) RemoveAll(p string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.RemoveAll(p)
}

func (c *crashFS) Rename(from, to string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.Rename(from, to)
}

func (c *crashFS) SyncDir(p string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.SyncDir(p)
}

func (c *crashFS) ReadDir(p string) ([]storage.DirEntry, error) {
	if c.crashed {
		return nil, errCrashed
	}
	return c.FS.ReadDir(p)
}

func (c *crashFS) Stat(p string) (storage.FileInfo, error) {
	if c.crashed {
		return storage.FileInfo{}, errCrashed
	}
	return c.FS.Stat(p)
}

type crashFile struct {
	storage.File
	fs *crashFS
}

func (f *crashFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.step(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *crashFile) Sync() error {
	if err := f.fs.step(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *crashFile) ReadAt(p []byte, off int64) (int, error) {
	if f.fs.crashed {
		return 0, errCrashed
	}
	return f.File.ReadAt(p, off)
}

// openWithSuperblock opens dir's log with its stored superblock.
func openWithSuperblock(t *testing.T, fsys storage.FS, dir string, opts storage.LogOptions) (*storage.Log, storage.PartitionSuperblock) {
	t.Helper()
	sb, report, err := storage.LoadPartitionSuperblock(fsys, dir)
	if err != nil || !report.Found {
		t.Fatalf("load the superblock of %s: %+v, %v", dir, report, err)
	}
	opts.Superblock = &sb
	l, _, err := storage.OpenLog(fsys, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l, sb
}

// readAllRecords reads every stored record of l.
func readAllRecords(t *testing.T, l *storage.Log) []byte {
	t.Helper()
	var out []byte
	for next := l.Stats().FirstOffset; next < l.NextOffset(); {
		recs, n, err := l.Read(nil, next, 1000, 1<<20)
		if err != nil {
			t.Fatalf("read at %d: %v", next, err)
		}
		if n == 0 {
			break
		}
		out = append(out, recs...)
		next += uint64(n)
	}
	return out
}

// TestSegmentTransferInstallIsCrashAtomic stages a source log's segment
// files (SegmentFiles, ReadSegmentFile) in a destination partition that
// holds another log, commits and installs them, and loses power at every
// mutating operation of the staging, the commit and the install in turn.
// After each crash the next open (FinishSegmentInstall, then OpenLog)
// finds the old log or the new one whole, never a mixture, and no staging
// or ready directory is left.
func TestSegmentTransferInstallIsCrashAtomic(t *testing.T) {
	const dir = partitionDir
	const flags, newGeneration = 77, 3
	opts := storage.LogOptions{SegmentSizeBytes: 2000, IndexIntervalBytes: 300}

	src := memfs.New()
	if err := src.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.CreatePartitionSuperblock(src, dir, storage.PartitionSuperblock{Flags: flags, PurgeGeneration: newGeneration}); err != nil {
		t.Fatal(err)
	}
	source, _ := openWithSuperblock(t, src, dir, opts)
	var fb flushBuilder
	for i := 0; i < 12; i++ {
		if err := source.Append(fb.flush(t, 2, 3, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := source.Sync(); err != nil {
		t.Fatal(err)
	}
	end := source.NextOffset()
	files, err := source.SegmentFiles(0, end)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("the source log has %d files, want several segments", len(files))
	}
	want := readAllRecords(t, source)

	// The destination's own log: other messages, another generation.
	oldDst := func() (*memfs.FS, []byte) {
		dst := memfs.New()
		if err := dst.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := dst.SyncDir(path.Dir(dir)); err != nil {
			t.Fatal(err)
		}
		if _, err := storage.CreatePartitionSuperblock(dst, dir, storage.PartitionSuperblock{Flags: flags}); err != nil {
			t.Fatal(err)
		}
		l, _ := openWithSuperblock(t, dst, dir, opts)
		var old flushBuilder
		for i := 0; i < 3; i++ {
			if err := l.Append(old.flush(t, 1, 2, 40)); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := l.StoreSuperblock(l.Reserved()); err != nil {
			t.Fatal(err)
		}
		records := readAllRecords(t, l)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		return dst, records
	}

	transfer := func(fsys storage.FS) error {
		staging := path.Join(dir, storage.TransferStagingDir)
		if err := fsys.MkdirAll(staging); err != nil {
			return err
		}
		buf := make([]byte, 512) // chunks, never a whole file
		for _, f := range files {
			out, err := fsys.Create(path.Join(staging, f.Name))
			if err != nil {
				return err
			}
			for at := int64(0); at < f.Size; {
				n, err := source.ReadSegmentFile(f.Name, at, buf[:min(int64(len(buf)), f.Size-at)])
				if err != nil {
					t.Fatal(err)
				}
				if _, err := out.WriteAt(buf[:n], at); err != nil {
					return err
				}
				at += int64(n)
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
		if err := storage.CommitStagedSegments(fsys, dir, newGeneration, 0, end, flags); err != nil {
			return err
		}
		_, err := storage.FinishSegmentInstall(fsys, dir)
		return err
	}

	olds, news := 0, 0
	for crashAt := 0; ; crashAt++ {
		dst, old := oldDst()
		cfs := &crashFS{FS: dst, left: crashAt}
		err := transfer(cfs)
		if err != nil && !errors.Is(err, errCrashed) {
			t.Fatalf("crash at %d: %v", crashAt, err)
		}
		if _, err := storage.FinishSegmentInstall(dst, dir); err != nil {
			t.Fatalf("crash at %d: finish: %v", crashAt, err)
		}
		for _, d := range []string{storage.TransferStagingDir, storage.TransferReadyDir} {
			if ok, _ := storage.Exists(dst, path.Join(dir, d)); ok {
				t.Fatalf("crash at %d: %s left after the open", crashAt, d)
			}
		}
		l, sb := openWithSuperblock(t, dst, dir, opts)
		if c := l.Fenced(); c != nil {
			t.Fatalf("crash at %d: the log is fenced: %+v", crashAt, c)
		}
		got := readAllRecords(t, l)
		switch {
		case bytes.Equal(got, old) && sb.PurgeGeneration == 0:
			olds++
		case bytes.Equal(got, want) && sb.PurgeGeneration == newGeneration && l.NextOffset() == end && sb.DurableOffset == end:
			news++
			// The installed log takes appends at its end.
			next := fb
			if err := l.Append(next.flush(t, 1, 1, 10)); err != nil {
				t.Fatalf("crash at %d: append after the install: %v", crashAt, err)
			}
		default:
			t.Fatalf("crash at %d: a mixture: %d bytes of records (old %d, new %d), generation %d, next offset %d",
				crashAt, len(got), len(old), len(want), sb.PurgeGeneration, l.NextOffset())
		}
		_ = l.Close()
		if !cfs.crashed {
			break // the whole transfer ran
		}
		if crashAt > 1000 {
			t.Fatal("the transfer never completes")
		}
	}
	t.Logf("%d crash points: %d left the old log, %d the new one", olds+news, olds, news)
	if olds == 0 || news < 2 {
		t.Fatalf("crash points: %d old, %d new", olds, news)
	}
}

// TestSegmentFilesRefuseWhatTheLogDoesNotHold: a range beyond the log's
// end, inside a batch, or of a fenced log is not served.
func TestSegmentFilesRefuseWhatTheLogDoesNotHold(t *testing.T) {
	fsys := memfs.New()
	l, _, err := storage.OpenLog(fsys, partitionDir, storage.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var fb flushBuilder
	if err := l.Append(fb.flush(t, 2, 4, 20)); err != nil {
		t.Fatal(err)
	}
	if !l.Holds(0, 8) || l.Holds(0, 9) || l.Holds(1, 0) {
		t.Fatal("Holds is wrong")
	}
	if _, err := l.SegmentFiles(0, 9); !errors.Is(err, storage.ErrNotHeld) {
		t.Fatalf("beyond the end: %v", err)
	}
	if _, err := l.SegmentFiles(0, 2); !errors.Is(err, storage.ErrNotHeld) {
		t.Fatalf("inside a batch: %v", err)
	}
	files, err := l.SegmentFiles(0, 4)
	if err != nil || len(files) != 2 {
		t.Fatalf("the first batch: %+v, %v", files, err)
	}
	if _, err := l.ReadSegmentFile("../x.log", 0, make([]byte, 4)); err == nil {
		t.Fatal("a name that is not a segment's was read")
	}
}
