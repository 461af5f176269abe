package uring

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkRingAppend appends through a ring owned by the benchmark
// goroutine, as a shard would use it (no hand-off to another goroutine),
// optionally linking an fdatasync after each write; pwrite is the
// baseline. Reports MB/s.
func BenchmarkRingAppend(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		for _, sync := range []bool{false, true} {
			name := map[int]string{1 << 10: "1KiB", 1 << 20: "1MiB"}[size] + map[bool]string{false: "/nosync", true: "/fdatasync"}[sync]
			b.Run(name+"/ring", func(b *testing.B) { benchRing(b, size, sync) })
			b.Run(name+"/pwrite", func(b *testing.B) { benchPwrite(b, size, sync) })
		}
	}
}

const benchFileBytesMax = 64 << 20

func benchFile(b *testing.B) int {
	fd, err := unix.Open(filepath.Join(b.TempDir(), "seg"), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = unix.Close(fd) })
	return fd
}

func benchRing(b *testing.B, size int, sync bool) {
	r, err := New(Config{Entries: 64})
	if err != nil {
		b.Skipf("io_uring unavailable: %v", err)
	}
	defer r.Close()
	fd := benchFile(b)
	buf := pattern(size, 1)
	var failed error
	check := func(c Completion) {
		if err := c.Err(); err != nil && failed == nil {
			failed = err
		}
	}
	off := int64(0)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if sync {
			if err := r.Reserve(2); err != nil {
				b.Fatal(err)
			}
			if err := r.PrepareWrite(fd, buf, off, FlagLink, check); err != nil {
				b.Fatal(err)
			}
			if err := r.PrepareFsync(fd, true, 0, check); err != nil {
				b.Fatal(err)
			}
		} else if err := r.PrepareWrite(fd, buf, off, 0, check); err != nil {
			b.Fatal(err)
		}
		if err := r.Drain(); err != nil {
			b.Fatal(err)
		}
		if failed != nil {
			b.Fatal(failed)
		}
		off += int64(size)
		if off >= benchFileBytesMax {
			b.StopTimer()
			if err := unix.Ftruncate(fd, 0); err != nil {
				b.Fatal(err)
			}
			off = 0
			b.StartTimer()
		}
	}
}

func benchPwrite(b *testing.B, size int, sync bool) {
	fd := benchFile(b)
	buf := pattern(size, 1)
	off := int64(0)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n, err := unix.Pwrite(fd, buf, off); err != nil || n != size {
			b.Fatalf("pwrite %d %v", n, err)
		}
		if sync {
			if err := unix.Fdatasync(fd); err != nil {
				b.Fatal(err)
			}
		}
		off += int64(size)
		if off >= benchFileBytesMax {
			b.StopTimer()
			if err := unix.Ftruncate(fd, 0); err != nil {
				b.Fatal(err)
			}
			off = 0
			b.StartTimer()
		}
	}
}
