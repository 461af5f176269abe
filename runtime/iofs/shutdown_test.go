package iofs

import (
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/runtime/uring"
)

// TestCloseWithCallersInFlight closes the FS while goroutines keep
// appending and syncing: every call either succeeds or fails with
// ErrClosed, none hangs, and what succeeded is on disk.
func TestCloseWithCallersInFlight(t *testing.T) {
	const callers = 8
	fsys := newFS(t, uring.Config{Entries: 4, EventInterval: 2})
	dir := t.TempDir()
	var wg sync.WaitGroup
	written := make([]int64, callers)
	errs := make([]error, callers)
	started := make(chan struct{}, callers)
	for c := 0; c < callers; c++ {
		f, err := fsys.Create(filepath.Join(dir, string(rune('a'+c))))
		if err != nil {
			t.Fatal(err)
		}
		// Files outliving their FS cannot close through it: release the
		// descriptor directly.
		t.Cleanup(func() { _ = unix.Close(f.(*File).fd) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := pattern(300, byte(c))
			for i := 0; ; i++ {
				if i == 5 {
					started <- struct{}{}
				}
				n, err := f.Append(buf)
				written[c] += int64(n)
				if err == nil && i%4 == 0 {
					err = f.Sync()
				}
				if err != nil {
					errs[c] = err
					return
				}
			}
		}()
	}
	for c := 0; c < callers; c++ {
		<-started
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for c := 0; c < callers; c++ {
		if !errors.Is(errs[c], ErrClosed) {
			t.Fatalf("caller %d ended with %v, want ErrClosed", c, errs[c])
		}
		info, err := os.Stat(filepath.Join(dir, string(rune('a'+c))))
		if err != nil || info.Size() != written[c] {
			t.Fatalf("caller %d: %d bytes on disk, %d reported written (%v)", c, info.Size(), written[c], err)
		}
	}
}

// TestAppendVectorPartialWrite lowers RLIMIT_FSIZE so the kernel writes
// only part of a vectored append: the engine resubmits the rest, which
// fails with EFBIG, and the file's size accounts for the partial write.
func TestAppendVectorPartialWrite(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		fsys := newFS(t, uring.Config{Entries: 4})
		f, err := fsys.Create(filepath.Join(t.TempDir(), "limited"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		const limit = 5000
		signal.Ignore(syscall.SIGXFSZ)
		defer signal.Reset(syscall.SIGXFSZ)
		var old unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
			t.Fatal(err)
		}
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: old.Max}); err != nil {
			t.Skipf("cannot lower RLIMIT_FSIZE: %v", err)
		}
		n, err := f.AppendVector([][]byte{pattern(3000, 1), pattern(3000, 2)})
		if rerr := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); rerr != nil {
			t.Fatal(rerr)
		}
		if n != limit || !errors.Is(err, syscall.EFBIG) {
			t.Fatalf("appended %d, %v; want %d and EFBIG", n, err, limit)
		}
		if size, _ := f.Size(); size != limit {
			t.Fatalf("size %d after a partial append, want %d", size, limit)
		}
	})
}
