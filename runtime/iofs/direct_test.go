package iofs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

// TestDirectOneEntryRing: the direct engine keeps no wake-up read in
// flight, so a one-entry ring (refused by New) runs every operation.
func TestDirectOneEntryRing(t *testing.T) {
	fsys := newDirectFS(t, uring.Config{Entries: 1})
	f, err := fsys.Create(filepath.Join(t.TempDir(), "one"))
	if err != nil {
		t.Fatal(err)
	}
	buffers := [][]byte{pattern(10, 1), pattern(20, 2)}
	if n, err := f.AppendVector(buffers); err != nil || n != 30 {
		t.Fatalf("append vector: %d %v", n, err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 30)
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, bytes.Join(buffers, nil)) {
		t.Fatalf("read back %x, %v", got, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPoll: a direct FS waits for each operation in place, so Poll finds
// nothing in flight between calls; the goroutine engine reaps by itself
// and reports 0; a closed direct FS reports 0 too.
func TestPoll(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		fsys := newFS(t, uring.Config{Entries: 4})
		if n := fsys.Poll(); n != 0 {
			t.Fatalf("fresh FS: %d in flight", n)
		}
		f, err := fsys.Create(filepath.Join(t.TempDir(), "p"))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if _, err := f.Append(pattern(100, byte(i))); err != nil {
				t.Fatal(err)
			}
			if n := fsys.Poll(); n != 0 {
				t.Fatalf("after append %d: %d in flight", i, n)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Close(); err != nil {
			t.Fatal(err)
		}
		if n := fsys.Poll(); n != 0 {
			t.Fatalf("closed FS: %d in flight", n)
		}
	})
}

// TestDirectRingStats: a direct FS submits each operation with the
// caller's own io_uring_enter, one per operation.
func TestDirectRingStats(t *testing.T) {
	fsys := newDirectFS(t, uring.Config{Entries: 8})
	f, err := fsys.Create(filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	ring := fsys.engine.(*directEngine).ring
	before := ring.Stats()
	const appends = 10
	for i := 0; i < appends; i++ {
		if _, err := f.Append(pattern(64, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	after := ring.Stats()
	if got := after.Submitted - before.Submitted; got != appends {
		t.Fatalf("%d submissions for %d appends", got, appends)
	}
	if got := after.Completed - before.Completed; got != appends {
		t.Fatalf("%d completions for %d appends", got, appends)
	}
	if got := after.Enters - before.Enters; got != appends {
		t.Fatalf("%d io_uring_enter calls for %d appends", got, appends)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestErrorsAreGoErrors: failures the kernel reports in a CQE come back as
// *fs.PathError wrapping the errno, on both engines.
func TestErrorsAreGoErrors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		fsys := newFS(t, uring.Config{Entries: 4})
		dir := t.TempDir()
		if _, err := fsys.Open(filepath.Join(dir, "missing")); !errors.Is(err, storage.ErrNotExist) || !isPathError(err, "open") {
			t.Fatalf("open missing: %v", err)
		}
		path := filepath.Join(dir, "f")
		w, err := fsys.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append([]byte("0123456789")); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		// Operations on a closed File fail before reaching the ring.
		if _, err := w.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrClosed) || !isPathError(err, "read") {
			t.Fatalf("read of a closed file: %v", err)
		}
		if _, err := w.AppendVector([][]byte{{1}}); !errors.Is(err, ErrClosed) {
			t.Fatalf("writev to a closed file: %v", err)
		}
		if err := w.Sync(); !errors.Is(err, ErrClosed) {
			t.Fatalf("sync of a closed file: %v", err)
		}
		// A read-only file refuses every kind of write.
		r, err := fsys.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.WriteAt([]byte("x"), 0); !errors.Is(err, unix.EBADF) || !isPathError(err, "write") {
			t.Fatalf("write to a read-only file: %v", err)
		}
		if _, err := r.AppendVector([][]byte{[]byte("x"), []byte("y")}); !errors.Is(err, unix.EBADF) || !isPathError(err, "writev") {
			t.Fatalf("writev to a read-only file: %v", err)
		}
		if size, _ := r.Size(); size != 10 {
			t.Fatalf("failed writes changed the size to %d", size)
		}
		// A descriptor closed behind the File's back: the ring reports
		// EBADF for the read.
		if err := unix.Close(r.(*File).fd); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadAt(make([]byte, 4), 0); !errors.Is(err, unix.EBADF) || !isPathError(err, "read") {
			t.Fatalf("read of a closed descriptor: %v", err)
		}
		if err := r.Close(); !errors.Is(err, unix.EBADF) {
			t.Fatalf("close of a closed descriptor: %v", err)
		}
		// Reading a directory fails with EISDIR.
		d, err := fsys.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.ReadAt(make([]byte, 4), 0); !errors.Is(err, unix.EISDIR) {
			t.Fatalf("read of a directory: %v", err)
		}
		if err := d.(*File).Preallocate(0, 0); !errors.Is(err, uring.ErrConfig) {
			t.Fatalf("zero-length preallocation: %v", err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		// The engine still works after all those failures.
		if on, err := os.ReadFile(path); err != nil || string(on) != "0123456789" {
			t.Fatalf("on disk %q %v", on, err)
		}
	})
}

func isPathError(err error, op string) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == op
}

// TestAppendVectorManyBuffersShortWrite: a vectored append of more than
// uring.IovecsMax buffers, cut short by RLIMIT_FSIZE inside its second
// writev, reports the bytes written and EFBIG, and the file holds exactly
// those bytes.
func TestAppendVectorManyBuffersShortWrite(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		fsys := newFS(t, uring.Config{Entries: 4})
		path := filepath.Join(t.TempDir(), "limited")
		f, err := fsys.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		const bufferBytes = 10
		buffers := make([][]byte, 3*uring.IovecsMax)
		for i := range buffers {
			buffers[i] = pattern(bufferBytes, byte(i))
		}
		// The limit falls inside the second chunk, mid-buffer.
		const limit = (uring.IovecsMax+100)*bufferBytes + 3
		signal.Ignore(syscall.SIGXFSZ)
		defer signal.Reset(syscall.SIGXFSZ)
		var old unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
			t.Fatal(err)
		}
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: old.Max}); err != nil {
			t.Skipf("cannot lower RLIMIT_FSIZE: %v", err)
		}
		n, err := f.AppendVector(buffers)
		if rerr := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); rerr != nil {
			t.Fatal(rerr)
		}
		if n != limit || !errors.Is(err, syscall.EFBIG) {
			t.Fatalf("appended %d, %v; want %d and EFBIG", n, err, limit)
		}
		if size, _ := f.Size(); size != limit {
			t.Fatalf("size %d, want %d", size, limit)
		}
		on, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(on, bytes.Join(buffers, nil)[:limit]) {
			t.Fatalf("on disk %d bytes (%v), want the first %d appended", len(on), err, limit)
		}
	})
}

// TestDirectHandOff: a direct FS may move between goroutines when a
// channel orders their use (as shard tasks are ordered); in the
// invariants build this must not trip the concurrent-use check.
func TestDirectHandOff(t *testing.T) {
	fsys := newDirectFS(t, uring.Config{Entries: 4})
	path := filepath.Join(t.TempDir(), "h")
	f, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const turns = 6
	baton := make(chan error)
	var want []byte
	for turn := 0; turn < turns; turn++ {
		p := pattern(50, byte(turn))
		want = append(want, p...)
		go func() {
			_, err := f.Append(p)
			if err == nil && fsys.Poll() != 0 {
				err = errors.New("operations in flight between calls")
			}
			baton <- err
		}()
		if err := <-baton; err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if on, err := os.ReadFile(path); err != nil || !bytes.Equal(on, want) {
		t.Fatalf("on disk %d bytes, %v", len(on), err)
	}
}
