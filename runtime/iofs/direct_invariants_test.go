//go:build invariants

package iofs

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/runtime/uring"
)

// TestDirectConcurrentUsePanics: one goroutine's read of an empty FIFO
// blocks inside the direct FS while a second goroutine uses the same FS;
// the invariants build panics in the second. Then writing to the FIFO
// releases the first, whose read completes normally.
func TestDirectConcurrentUsePanics(t *testing.T) {
	fsys := newDirectFS(t, uring.Config{Entries: 4})
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Opened read-write, the FIFO has a writer, so a read waits for data
	// instead of seeing end of file.
	writer, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	reader, err := fsys.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	type readResult struct {
		data []byte
		err  error
	}
	first := make(chan readResult, 1)
	go func() {
		buf := make([]byte, 4)
		_, err := reader.ReadAt(buf, 0) // blocks until the FIFO has data
		first <- readResult{buf, err}
	}()
	// The first goroutine holds the FS once its read has started.
	// The bound only turns a broken check (busy never set) into a failure
	// instead of a hang; a working one needs a handful of yields.
	const yieldsMax = 1 << 24
	use := &fsys.engine.(*directEngine).use
	for yields := 0; !use.busy.Load(); yields++ {
		if yields == yieldsMax {
			t.Fatal("the direct FS never reported the first goroutine's read as running")
		}
		select {
		case got := <-first:
			t.Fatalf("the read of an empty FIFO returned: %v", got.err)
		default:
			runtime.Gosched()
		}
	}
	recovered := func() (message string) {
		defer func() {
			if r := recover(); r != nil {
				message, _ = r.(string)
			}
		}()
		_, _ = fsys.Create(filepath.Join(dir, "second"))
		return ""
	}()
	if !strings.Contains(recovered, "two goroutines") {
		t.Fatalf("concurrent use: recovered %q, want the concurrent-use panic", recovered)
	}
	if _, err := writer.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	got := <-first
	if got.err != nil || !bytes.Equal(got.data, []byte("data")) {
		t.Fatalf("first goroutine's read: %q %v", got.data, got.err)
	}
	// The panic left no trace: the FS serves its owner again.
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fsys.Poll(); n != 0 {
		t.Fatalf("%d in flight", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "second")); !os.IsNotExist(err) {
		t.Fatalf("the refused create happened: %v", err)
	}
}
