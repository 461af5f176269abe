package uring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// newRing sets up a ring for a test, skipping the test with the probe's
// reason where io_uring is unavailable.
func newRing(t *testing.T, cfg Config) *Ring {
	t.Helper()
	if err := Probe(); err != nil {
		if errors.Is(err, ErrUnavailable) {
			t.Skipf("io_uring unavailable: %v", err)
		}
		t.Fatalf("probe: %v", err)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("new ring: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("close ring: %v", err)
		}
	})
	return r
}

// tempFile opens a fresh file in t.TempDir() with a plain open.
func tempFile(t *testing.T, name string) (int, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	return fd, path
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func run(t *testing.T, r *Ring, prep func(Callback) error) int32 {
	t.Helper()
	res, err := r.Run(prep)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestProbeAndDefaults(t *testing.T) {
	r := newRing(t, Config{})
	if got := r.Config(); got != DefaultConfig() {
		t.Fatalf("config %+v, want defaults %+v", got, DefaultConfig())
	}
	if r.Capacity() != EntriesDefault {
		t.Fatalf("capacity %d, want %d", r.Capacity(), EntriesDefault)
	}
}

func TestNewRoundsEntries(t *testing.T) {
	r := newRing(t, Config{Entries: 5})
	if r.Capacity() != 8 {
		t.Fatalf("capacity %d, want 8", r.Capacity())
	}
	if _, err := New(Config{Entries: EntriesMax + 1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("oversized ring: %v", err)
	}
}

func TestReadWriteAndShortRead(t *testing.T) {
	r := newRing(t, Config{Entries: 8})
	fd, path := tempFile(t, "rw")
	data := pattern(10000, 1)
	if n := run(t, r, func(cb Callback) error { return r.PrepareWrite(fd, data, 0, 0, cb) }); n != int32(len(data)) {
		t.Fatalf("wrote %d", n)
	}
	if on, _ := os.ReadFile(path); !bytes.Equal(on, data) {
		t.Fatal("file contents differ from the write")
	}
	got := make([]byte, 4000)
	if n := run(t, r, func(cb Callback) error { return r.PrepareRead(fd, got, 3000, 0, cb) }); n != 4000 || !bytes.Equal(got, data[3000:7000]) {
		t.Fatalf("read %d bytes at 3000, match %v", n, bytes.Equal(got, data[3000:7000]))
	}
	// A read crossing the end of the file is short; one at the end is 0.
	if n := run(t, r, func(cb Callback) error { return r.PrepareRead(fd, got, 8000, 0, cb) }); n != 2000 || !bytes.Equal(got[:n], data[8000:]) {
		t.Fatalf("read past EOF returned %d, want 2000", n)
	}
	if n := run(t, r, func(cb Callback) error { return r.PrepareRead(fd, got, 10000, 0, cb) }); n != 0 {
		t.Fatalf("read at EOF returned %d", n)
	}
}

func TestReadvWritev(t *testing.T) {
	r := newRing(t, Config{Entries: 8})
	fd, _ := tempFile(t, "vec")
	parts := [][]byte{pattern(100, 1), nil, pattern(4096, 2), pattern(1, 3)}
	iovs := Iovecs(nil, parts)
	if len(iovs) != 3 {
		t.Fatalf("%d iovecs, empty buffer not skipped", len(iovs))
	}
	want := bytes.Join(parts, nil)
	if n := run(t, r, func(cb Callback) error { return r.PrepareWritev(fd, iovs, 10, 0, cb) }); n != int32(len(want)) {
		t.Fatalf("writev wrote %d", n)
	}
	a, b := make([]byte, 50), make([]byte, len(want)-50+20)
	riovs := Iovecs(nil, [][]byte{a, b})
	if n := run(t, r, func(cb Callback) error { return r.PrepareReadv(fd, riovs, 10, 0, cb) }); n != int32(len(want)) {
		t.Fatalf("readv read %d, want %d (short at EOF)", n, len(want))
	}
	if !bytes.Equal(append(a, b[:len(want)-50]...), want) {
		t.Fatal("readv contents differ")
	}
	if err := r.PrepareWritev(fd, nil, 0, 0, nil); !errors.Is(err, ErrConfig) {
		t.Fatalf("empty writev: %v", err)
	}
}

func TestFsyncBothModes(t *testing.T) {
	r := newRing(t, Config{Entries: 8})
	fd, _ := tempFile(t, "sync")
	run(t, r, func(cb Callback) error { return r.PrepareWrite(fd, pattern(512, 9), 0, 0, cb) })
	for _, dataOnly := range []bool{true, false} {
		if n := run(t, r, func(cb Callback) error { return r.PrepareFsync(fd, dataOnly, 0, cb) }); n != 0 {
			t.Fatalf("fsync(dataOnly=%v) = %d", dataOnly, n)
		}
	}
}

func TestOpenatClose(t *testing.T) {
	r := newRing(t, Config{Entries: 8})
	path := filepath.Join(t.TempDir(), "opened")
	fd := run(t, r, func(cb Callback) error {
		return r.PrepareOpenat(unix.AT_FDCWD, path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600, 0, cb)
	})
	if fd < 0 {
		t.Fatalf("openat fd %d", fd)
	}
	run(t, r, func(cb Callback) error { return r.PrepareWrite(int(fd), []byte("hello"), 0, 0, cb) })
	if n := run(t, r, func(cb Callback) error { return r.PrepareClose(int(fd), 0, cb) }); n != 0 {
		t.Fatalf("close = %d", n)
	}
	if on, err := os.ReadFile(path); err != nil || string(on) != "hello" {
		t.Fatalf("file holds %q, %v", on, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", info.Mode(), err)
	}
	// The descriptor is gone: closing it again is EBADF.
	if _, err := r.Run(func(cb Callback) error { return r.PrepareClose(int(fd), 0, cb) }); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("second close: %v", err)
	}
	_, err = r.Run(func(cb Callback) error {
		return r.PrepareOpenat(unix.AT_FDCWD, filepath.Join(t.TempDir(), "missing"), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, cb)
	})
	if !errors.Is(err, syscall.ENOENT) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("open of a missing file: %v", err)
	}
}

func TestFallocate(t *testing.T) {
	r := newRing(t, Config{Entries: 8})
	fd, _ := tempFile(t, "alloc")
	if n := run(t, r, func(cb Callback) error { return r.PrepareFallocate(fd, 0, 0, 1<<20, 0, cb) }); n != 0 {
		t.Fatalf("fallocate = %d", n)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size != 1<<20 {
		t.Fatalf("size after fallocate %d, %v", st.Size, err)
	}
	_, err := r.Run(func(cb Callback) error {
		return r.PrepareFallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 1<<20, 1<<20, 0, cb)
	})
	if errors.Is(err, syscall.EOPNOTSUPP) {
		t.Logf("KEEP_SIZE unsupported on this file system: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Fstat(fd, &st); err != nil || st.Size != 1<<20 || st.Blocks*512 < 2<<20 {
		t.Fatalf("KEEP_SIZE: size %d blocks %d, %v", st.Size, st.Blocks, err)
	}
}

func TestErrorsAreErrnos(t *testing.T) {
	r := newRing(t, Config{Entries: 8})
	fd, _ := tempFile(t, "closed")
	dup, err := unix.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Close(dup); err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(func(cb Callback) error { return r.PrepareRead(dup, make([]byte, 10), 0, 0, cb) })
	if !errors.Is(err, syscall.EBADF) {
		t.Fatalf("read on a closed fd: %v", err)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno != syscall.EBADF {
		t.Fatalf("error %v does not unwrap to the errno", err)
	}
	if _, err := r.Run(func(cb Callback) error { return r.PrepareWrite(-1, []byte("x"), 0, 0, cb) }); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("write on fd -1: %v", err)
	}
}

func TestClosedRingRefuses(t *testing.T) {
	r := newRing(t, Config{Entries: 2})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.PrepareNop(0, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("prepare on a closed ring: %v", err)
	}
	if _, err := r.Submit(); !errors.Is(err, ErrClosed) {
		t.Fatalf("submit on a closed ring: %v", err)
	}
}
