package iofs

import (
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

// benchFileBytesMax caps a benchmark file: once past it the file is
// truncated (timer stopped), as if a new segment started.
const benchFileBytesMax = 64 << 20

// benchEngines are the IO engines the append benchmarks compare: the
// pread/pwrite engine, the uring engine behind a submitter goroutine (New)
// and the uring engine driven by the caller (NewDirect).
var benchEngines = []struct {
	name string
	fs   func(b *testing.B) storage.FS
}{
	{"sync", func(*testing.B) storage.FS { return storage.OSFS{} }},
	{"uring-goroutine", func(b *testing.B) storage.FS { return newFS(b, uring.Config{}) }},
	{"uring-direct", func(b *testing.B) storage.FS { return newDirectFS(b, uring.Config{}) }},
}

// BenchmarkSegmentAppend appends to a segment-like file through each
// engine, with and without an fdatasync after every write. b.SetBytes
// makes the output report MB/s.
func BenchmarkSegmentAppend(b *testing.B) {
	runAppendBenchmarks(b, benchAppend)
}

// runAppendBenchmarks runs bench as sub-benchmarks over every write size
// (1 KiB, 1 MiB), without and with an fdatasync after each write, and
// every engine: "{size}/{nosync|fdatasync}/{engine}".
func runAppendBenchmarks(b *testing.B, bench func(b *testing.B, fsys storage.FS, bytes int, sync bool)) {
	sizes := []struct {
		name  string
		bytes int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}}
	for _, size := range sizes {
		for _, sync := range []bool{false, true} {
			for _, engine := range benchEngines {
				name := size.name + "/nosync/" + engine.name
				if sync {
					name = size.name + "/fdatasync/" + engine.name
				}
				b.Run(name, func(b *testing.B) {
					bench(b, engine.fs(b), size.bytes, sync)
				})
			}
		}
	}
}

// BenchmarkSegmentAppendParallel has GOMAXPROCS*parallelism goroutines
// append 1 KiB with an fdatasync each, every goroutine to its own file
// (many partitions): through one shared engine ("sync", "uring-goroutine",
// which batches their requests into shared io_uring_enter calls), or with
// a direct FS per goroutine ("uring-direct", one ring per shard).
func BenchmarkSegmentAppendParallel(b *testing.B) {
	const parallelism = 4
	for _, engine := range []string{"sync", "uring-goroutine", "uring-direct"} {
		b.Run("1KiB/fdatasync/"+engine, func(b *testing.B) {
			var shared storage.FS = storage.OSFS{}
			switch engine {
			case "uring-goroutine":
				shared = newFS(b, uring.Config{})
			case "uring-direct":
				newDirectFS(b, uring.Config{}) // skips without io_uring
			}
			dir := b.TempDir()
			var next atomic.Int64
			buf := pattern(1<<10, 3)
			b.SetBytes(int64(len(buf)))
			b.SetParallelism(parallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				fsys := shared
				if engine == "uring-direct" {
					direct, err := NewDirect(uring.Config{})
					if err != nil {
						b.Error(err)
						return
					}
					defer func() {
						if err := direct.Close(); err != nil {
							b.Error(err)
						}
					}()
					fsys = direct
				}
				f, err := fsys.Create(filepath.Join(dir, strconv.FormatInt(next.Add(1), 10)))
				if err != nil {
					b.Error(err)
					return
				}
				defer f.Close()
				for pb.Next() {
					if _, err := f.Append(buf); err != nil {
						b.Error(err)
						return
					}
					if err := f.Sync(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func benchAppend(b *testing.B, fsys storage.FS, size int, sync bool) {
	f, err := fsys.Create(filepath.Join(b.TempDir(), "00000000000000000000.log"))
	if err != nil {
		b.Fatal(err)
	}
	buf := pattern(size, 1)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n, err := f.Append(buf); err != nil || n != size {
			b.Fatalf("append: %d %v", n, err)
		}
		if sync {
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		if s, _ := f.Size(); s >= benchFileBytesMax {
			b.StopTimer()
			if err := f.Truncate(0); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// TestDataPathAllocations guards the hot path: appends, vectored appends,
// reads and syncs through the engine allocate nothing per call.
func TestDataPathAllocations(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		if raceEnabled {
			t.Skip("sync.Pool drops items under the race detector")
		}
		fsys := newFS(t, uring.Config{Entries: 8})
		f, err := fsys.Create(filepath.Join(t.TempDir(), "a"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := pattern(512, 2)
		buffers := [][]byte{buf[:100], buf[100:]}
		read := make([]byte, 512)
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := f.Append(buf); err != nil {
				t.Fatal(err)
			}
			if _, err := f.AppendVector(buffers); err != nil {
				t.Fatal(err)
			}
			if _, err := f.ReadAt(read, 0); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Fatalf("%v allocations per append+appendvector+read", allocs)
		}
	})
}
