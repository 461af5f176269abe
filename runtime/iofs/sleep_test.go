package iofs

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stratabroker/strata/runtime/uring"
)

// TestSleepAndWake checks the Sleeper side of a direct FS: Sleep returns
// when a queued fdatasync completes (having run its callback) or when
// another goroutine calls Wake, a Wake before Sleep is not lost, and the
// wake-up read never counts as an operation in flight.
func TestSleepAndWake(t *testing.T) {
	fsys := newDirectFS(t, uring.DefaultConfig())
	file, err := fsys.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := file.Append(pattern(8192, 5)); err != nil {
		t.Fatal(err)
	}
	synced := false
	if err := file.(*File).SyncAsync(func(err error) { synced = err == nil }); err != nil {
		t.Fatal(err)
	}
	for !synced {
		fsys.Sleep() // returns on the sync's completion, callback run
	}
	if n := fsys.Poll(); n != 0 {
		t.Fatalf("%d operations in flight after the sync (the wake-up read counted?)", n)
	}

	// Nothing in flight: Sleep waits for a Wake from another goroutine.
	woke := make(chan struct{})
	go func() {
		time.Sleep(5 * time.Millisecond)
		fsys.Wake()
		close(woke)
	}()
	fsys.Sleep()
	<-woke
	// A Wake that comes before the Sleep makes it return at once.
	fsys.Wake()
	fsys.Sleep()
	if n := fsys.Poll(); n != 0 {
		t.Fatalf("%d operations in flight", n)
	}
	// Close retires the armed wake-up read (it would otherwise wait for it
	// forever).
	done := make(chan error, 1)
	go func() { done <- errorsJoinClose(file, fsys) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung on the wake-up read")
	}
}

func errorsJoinClose(file interface{ Close() error }, fsys *FS) error {
	if err := file.Close(); err != nil {
		return err
	}
	return fsys.Close()
}
