package iofs

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

// TestSameAsOSFS applies one seeded random sequence of file operations to
// the uring FS and to storage.OSFS and requires the same results and the
// same bytes on disk.
func TestSameAsOSFS(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		const seed, steps = 20261130, 400
		fsys := newFS(t, uring.Config{Entries: 8})
		dir := t.TempDir()
		engines := []storage.FS{fsys, storage.OSFS{}}
		files := make([]storage.File, len(engines))
		paths := make([]string, len(engines))
		for i, e := range engines {
			paths[i] = filepath.Join(dir, []string{"uring", "sync"}[i])
			f, err := e.Create(paths[i])
			if err != nil {
				t.Fatal(err)
			}
			files[i] = f
		}
		rng := rand.New(rand.NewSource(seed))
		for step := 0; step < steps; step++ {
			op := rng.Intn(6)
			size, _ := files[1].Size()
			var results [2]string
			data := pattern(rng.Intn(3000), byte(step))
			off := rng.Int63n(size + 2000)
			buffers := make([][]byte, rng.Intn(6))
			for i := range buffers {
				buffers[i] = pattern(rng.Intn(700), byte(step+i))
			}
			readLen := rng.Intn(4000)
			for i, f := range files {
				var n int
				var err error
				var read []byte
				switch op {
				case 0:
					n, err = f.Append(data)
				case 1:
					n, err = f.WriteAt(data, off)
				case 2:
					n, err = f.AppendVector(buffers)
				case 3:
					read = make([]byte, readLen)
					n, err = f.ReadAt(read, off)
					read = read[:n]
				case 4:
					err = f.Truncate(off / 2)
				case 5:
					err = f.Sync()
				}
				s, serr := f.Size()
				results[i] = describe(op, n, err, read, s, serr)
			}
			if results[0] != results[1] {
				t.Fatalf("seed=%d step %d op %d: uring %s, sync %s", seed, step, op, results[0], results[1])
			}
		}
		for _, f := range files {
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
		a, errA := os.ReadFile(paths[0])
		b, errB := os.ReadFile(paths[1])
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("seed=%d: files differ (%d and %d bytes; %v %v)", seed, len(a), len(b), errA, errB)
		}
	})
}

func describe(op, n int, err error, read []byte, size int64, sizeErr error) string {
	kind := "nil"
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		kind = "EOF"
	default:
		kind = "error"
	}
	return fmt.Sprintf("op %d n=%d err=%s size=%d sizeErr=%v read=%x", op, n, kind, size, sizeErr != nil, sha256.Sum256(read))
}
