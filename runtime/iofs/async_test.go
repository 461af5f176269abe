package iofs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stratabroker/strata/runtime/uring"
)

// TestSyncAsync queues fdatasyncs on a direct FS: callbacks run only
// between operations (from Poll, WaitAsync or Close), exactly once, may
// queue more work, and report failures.
func TestSyncAsync(t *testing.T) {
	fsys := newDirectFS(t, uring.DefaultConfig())
	path := filepath.Join(t.TempDir(), "f")
	file, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f := file.(*File)
	if _, err := f.Append(pattern(4096, 3)); err != nil {
		t.Fatal(err)
	}
	calls := 0
	var chained error
	if err := f.SyncAsync(func(err error) {
		calls++
		if err != nil {
			t.Errorf("fdatasync: %v", err)
		}
		// A callback may start new operations, even asynchronous ones.
		if _, err := f.Append(pattern(10, 1)); err != nil {
			t.Errorf("append from a callback: %v", err)
		}
		chained = f.SyncAsync(func(err error) { calls += 10 })
	}); err != nil {
		t.Fatal(err)
	}
	// A synchronous operation reaps the sync without running its callback.
	if _, err := f.ReadAt(make([]byte, 16), 0); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Fatalf("callback ran inside another operation (%d calls)", calls)
	}
	// Poll runs the callback once the fdatasync is done.
	for i := 0; calls == 0; i++ {
		fsys.Poll()
		if i == 1_000_000 {
			t.Fatal("Poll never ran the callback")
		}
		runtime.Gosched()
	}
	if err := fsys.WaitAsync(); err != nil || chained != nil {
		t.Fatalf("wait: %v, chained sync: %v", err, chained)
	}
	if calls != 11 {
		t.Fatalf("callbacks ran %d (want 1 + 10)", calls)
	}
	if size, _ := f.Size(); size != 4106 {
		t.Fatalf("size %d", size)
	}

	// A failed fdatasync (a character device cannot be synced) reaches
	// the callback as an error naming the file.
	null, err := fsys.OpenReadWrite(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	var nullErr error
	if err := null.(*File).SyncAsync(func(err error) { nullErr = err }); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WaitAsync(); err != nil {
		t.Fatal(err)
	}
	if nullErr == nil {
		t.Fatal("fdatasync of /dev/null reported no error")
	}
	t.Logf("fdatasync of %s: %v", os.DevNull, nullErr)

	// Close waits for queued syncs and runs their callbacks.
	closed := false
	if err := f.SyncAsync(func(error) { closed = true }); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Close(), null.Close(), fsys.Close()); err != nil {
		t.Fatal(err)
	}
	if !closed {
		t.Fatal("Close dropped a queued sync's callback")
	}
	if err := f.SyncAsync(func(error) {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("SyncAsync on a closed file: %v", err)
	}
}

// TestSyncAsyncNeedsDirect checks that an FS made by New refuses
// asynchronous operations.
func TestSyncAsyncNeedsDirect(t *testing.T) {
	fsys := newFS(t, uring.DefaultConfig())
	file, err := fsys.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if err := file.(*File).SyncAsync(func(error) {}); !errors.Is(err, ErrNotDirect) {
		t.Fatalf("SyncAsync on a goroutine-engine FS: %v", err)
	}
	if err := fsys.WaitAsync(); !errors.Is(err, ErrNotDirect) {
		t.Fatalf("WaitAsync on a goroutine-engine FS: %v", err)
	}
}
