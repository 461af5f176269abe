package iofs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

func TestFileDataPath(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		fsys := newFS(t, uring.Config{Entries: 16})
		dir := filepath.Join(t.TempDir(), "a", "b")
		if err := fsys.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "seg.log")
		f, err := fsys.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		app := func(p []byte) {
			t.Helper()
			if n, err := f.Append(p); err != nil || n != len(p) {
				t.Fatalf("append %d: %d %v", len(p), n, err)
			}
			want = append(want, p...)
		}
		app(pattern(1000, 1))
		app(nil)
		// A vectored append of more buffers than one writev takes, empty
		// buffers among them.
		buffers := make([][]byte, 2*uring.IovecsMax+3)
		for i := range buffers {
			if i%5 != 0 {
				buffers[i] = pattern(1+i%17, byte(i))
			}
		}
		joined := bytes.Join(buffers, nil)
		if n, err := f.AppendVector(buffers); err != nil || n != len(joined) {
			t.Fatalf("append vector: %d of %d, %v", n, len(joined), err)
		}
		want = append(want, joined...)
		if n, err := f.WriteAt([]byte("xyz"), 10); err != nil || n != 3 {
			t.Fatalf("write at: %d %v", n, err)
		}
		copy(want[10:], "xyz")
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if size, _ := f.Size(); size != int64(len(want)) {
			t.Fatalf("size %d, want %d", size, len(want))
		}
		got := make([]byte, len(want))
		if n, err := f.ReadAt(got, 0); err != nil || n != len(want) || !bytes.Equal(got, want) {
			t.Fatalf("read back %d %v, equal %v", n, err, bytes.Equal(got, want))
		}
		// A read crossing the end returns what is there and io.EOF.
		if n, err := f.ReadAt(got[:100], int64(len(want)-40)); n != 40 || err != io.EOF || !bytes.Equal(got[:40], want[len(want)-40:]) {
			t.Fatalf("read across the end: %d %v", n, err)
		}
		if err := f.(*File).Preallocate(0, 1<<20); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
			t.Fatal(err)
		}
		if size, _ := f.Size(); size != int64(len(want)) {
			t.Fatalf("preallocation changed the size to %d", size)
		}
		if err := f.Truncate(500); err != nil {
			t.Fatal(err)
		}
		want = want[:500]
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.ReadAt(got[:1], 0); !errors.Is(err, ErrClosed) {
			t.Fatalf("read after close: %v", err)
		}
		if on, err := os.ReadFile(path); err != nil || !bytes.Equal(on, want) {
			t.Fatalf("on disk %d bytes, %v", len(on), err)
		}
		// Reopen keeps the contents; Create truncates.
		g, err := fsys.OpenReadWrite(path)
		if err != nil {
			t.Fatal(err)
		}
		if size, _ := g.Size(); size != 500 {
			t.Fatalf("reopened size %d", size)
		}
		if _, err := g.Append([]byte("tail")); err != nil {
			t.Fatal(err)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := fsys.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Append([]byte("no")); !errors.Is(err, unix.EBADF) {
			t.Fatalf("append to a read-only file: %v", err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if info, err := fsys.Stat(path); err != nil || info.Size != 504 {
			t.Fatalf("stat %+v %v", info, err)
		}
		c, err := fsys.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if size, _ := c.Size(); size != 0 {
			t.Fatalf("create kept %d bytes", size)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNamespaceAndErrors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		fsys := newFS(t, uring.Config{Entries: 8})
		dir := t.TempDir()
		_, err := fsys.Open(filepath.Join(dir, "missing"))
		if !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("open missing: %v", err)
		}
		if ok, err := storage.Exists(fsys, filepath.Join(dir, "missing")); ok || err != nil {
			t.Fatalf("exists: %v %v", ok, err)
		}
		for _, name := range []string{"b", "a"} {
			f, err := fsys.Create(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := fsys.Rename(filepath.Join(dir, "b"), filepath.Join(dir, "c")); err != nil {
			t.Fatal(err)
		}
		if err := fsys.SyncDir(dir); err != nil {
			t.Fatal(err)
		}
		entries, err := fsys.ReadDir(dir)
		if err != nil || len(entries) != 2 || entries[0].Name != "a" || entries[1].Name != "c" {
			t.Fatalf("readdir %+v %v", entries, err)
		}
		if err := fsys.Remove(filepath.Join(dir, "a")); err != nil {
			t.Fatal(err)
		}
		if err := fsys.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTinyRingRefused(t *testing.T) {
	newFS(t, uring.Config{Entries: 2}) // skips without io_uring
	if _, err := New(uring.Config{Entries: 1}); !errors.Is(err, uring.ErrConfig) {
		t.Fatalf("one-entry ring: %v", err)
	}
}

func TestClosedFSRefuses(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		fsys := newFS(t, uring.Config{Entries: 8})
		f, err := fsys.Create(filepath.Join(t.TempDir(), "x"))
		if err != nil {
			t.Fatal(err)
		}
		if err := fsys.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := fsys.Create(filepath.Join(t.TempDir(), "y")); !errors.Is(err, ErrClosed) {
			t.Fatalf("create after close: %v", err)
		}
		if _, err := f.Append([]byte("z")); !errors.Is(err, ErrClosed) {
			t.Fatalf("append after FS close: %v", err)
		}
		if err := fsys.Close(); !errors.Is(err, ErrClosed) {
			t.Fatalf("second close: %v", err)
		}
	})
}

// TestConcurrentCallers has many goroutines, each with its own files,
// share one engine (more callers than the event interval, a ring smaller
// than the callers), and checks every byte.
func TestConcurrentCallers(t *testing.T) {
	const callers, rounds = 16, 40
	fsys := newFS(t, uring.Config{Entries: 4, EventInterval: 3})
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- concurrentCaller(fsys, filepath.Join(dir, string(rune('a'+c))), byte(c), rounds)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func concurrentCaller(fsys *FS, path string, seed byte, rounds int) error {
	f, err := fsys.Create(path)
	if err != nil {
		return err
	}
	var want []byte
	for i := 0; i < rounds; i++ {
		p := pattern(100+i*37, seed+byte(i))
		q := pattern(7, seed)
		if _, err := f.AppendVector([][]byte{p, q}); err != nil {
			return err
		}
		want = append(append(want, p...), q...)
		if i%10 == 0 {
			if err := f.Sync(); err != nil {
				return err
			}
		}
		got := make([]byte, len(p))
		if _, err := f.ReadAt(got, int64(len(want)-len(p)-len(q))); err != nil || !bytes.Equal(got, p) {
			return errors.Join(errors.New("read back differs"), err)
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	on, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(on, want) {
		return errors.New(path + ": contents differ")
	}
	return nil
}
