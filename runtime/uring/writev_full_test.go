package uring

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWritevFullResubmitsPartialWrites writes 40 KiB through a pipe whose
// buffer holds one page: the kernel's non-blocking first attempt writes at
// most a page and reports a short count, so WritevFull has to resubmit
// the rest from the middle of a buffer, in order.
func TestWritevFullResubmitsPartialWrites(t *testing.T) {
	r := newRing(t, Config{Entries: 8})
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, 4096); err != nil {
		t.Fatal(err)
	}
	reader := os.NewFile(uintptr(p[0]), "pipe-read")
	writeFD := p[1]
	defer reader.Close()
	parts := [][]byte{pattern(10000, 1), pattern(3, 2), pattern(30000, 3), pattern(1000, 4)}
	want := bytes.Join(parts, nil)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(reader)
		got <- b
	}()
	n, err := r.WritevFull(writeFD, Iovecs(nil, parts), -1)
	if cerr := unix.Close(writeFD); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil || n != len(want) {
		t.Fatalf("WritevFull wrote %d of %d: %v", n, len(want), err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("pipe carried %d bytes, differing from the %d written", len(b), len(want))
	}
	if r.Stats().Resubmissions == 0 {
		t.Fatal("no partial write was resubmitted")
	}
	for i := range parts {
		if !bytes.Equal(parts[i], bytes.Join(parts, nil)[offsetOf(parts, i):offsetOf(parts, i)+len(parts[i])]) {
			t.Fatal("WritevFull modified the caller's buffers")
		}
	}
}

func offsetOf(parts [][]byte, i int) int {
	n := 0
	for _, p := range parts[:i] {
		n += len(p)
	}
	return n
}

// TestWritevFullChunks writes more buffers than one writev takes.
func TestWritevFullChunks(t *testing.T) {
	r := newRing(t, Config{Entries: 4})
	fd, path := tempFile(t, "chunks")
	parts := make([][]byte, 2*IovecsMax+17)
	for i := range parts {
		parts[i] = pattern(1+i%13, byte(i))
	}
	want := bytes.Join(parts, nil)
	n, err := r.WritevFull(fd, Iovecs(nil, parts), 5)
	if err != nil || n != len(want) {
		t.Fatalf("wrote %d of %d: %v", n, len(want), err)
	}
	on, _ := os.ReadFile(path)
	if len(on) != 5+len(want) || !bytes.Equal(on[5:], want) {
		t.Fatal("file contents differ")
	}
}

// TestWritevFullStopsAtFileSizeLimit lowers RLIMIT_FSIZE so that the
// kernel writes only part of a vectored write; the resubmission of the rest
// then fails with EFBIG, which WritevFull reports with the partial count.
func TestWritevFullStopsAtFileSizeLimit(t *testing.T) {
	r := newRing(t, Config{Entries: 4})
	fd, path := tempFile(t, "limited")
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
	parts := [][]byte{pattern(3000, 1), pattern(3000, 2), pattern(3000, 3)}
	n, err := r.WritevFull(fd, Iovecs(nil, parts), 0)
	if rerr := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if n != limit || !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("wrote %d, err %v; want %d and EFBIG", n, err, limit)
	}
	if r.Stats().Resubmissions != 1 {
		t.Fatalf("resubmissions %d, want 1", r.Stats().Resubmissions)
	}
	on, _ := os.ReadFile(path)
	if !bytes.Equal(on, bytes.Join(parts, nil)[:limit]) {
		t.Fatal("file contents differ")
	}
}

func TestAdvanceIovecs(t *testing.T) {
	parts := [][]byte{pattern(3, 1), pattern(5, 2), pattern(2, 3)}
	all := bytes.Join(parts, nil)
	for skip := 0; skip <= len(all); skip++ {
		iovs := AdvanceIovecs(Iovecs(nil, parts), skip)
		if IovecsLen(iovs) != len(all)-skip {
			t.Fatalf("skip %d: %d bytes left", skip, IovecsLen(iovs))
		}
		var rest []byte
		for _, v := range iovs {
			rest = append(rest, unsafeBytes(v)...)
		}
		if !bytes.Equal(rest, all[skip:]) {
			t.Fatalf("skip %d: remainder differs", skip)
		}
	}
}
