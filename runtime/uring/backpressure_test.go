package uring

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"
)

// TestRingFullWaitsAndDropsNothing submits far more operations than the
// ring holds without ever calling Submit: every Prepare that finds no room
// must submit and wait, and every operation must complete exactly once.
func TestRingFullWaitsAndDropsNothing(t *testing.T) {
	const entries, ops, blockBytes = 8, 500, 64
	r := newRing(t, Config{Entries: entries})
	fd, path := tempFile(t, "full")
	want := pattern(ops*blockBytes, 5)
	completions := make([]int, ops)
	for i := 0; i < ops; i++ {
		block := want[i*blockBytes : (i+1)*blockBytes]
		err := r.PrepareWrite(fd, block, int64(i*blockBytes), 0, func(c Completion) {
			if c.Res != blockBytes {
				t.Errorf("write %d: res %d", i, c.Res)
			}
			completions[i]++
		})
		if err != nil {
			t.Fatalf("prepare %d: %v", i, err)
		}
		if r.InFlight() > r.Capacity() {
			t.Fatalf("%d in flight exceeds capacity %d", r.InFlight(), r.Capacity())
		}
	}
	if err := r.Drain(); err != nil {
		t.Fatal(err)
	}
	for i, c := range completions {
		if c != 1 {
			t.Fatalf("operation %d completed %d times", i, c)
		}
	}
	s := r.Stats()
	if s.FullWaits == 0 || s.Completed != ops || s.Submitted != ops || s.InFlightMax > entries {
		t.Fatalf("stats %+v", s)
	}
	if on, _ := os.ReadFile(path); !bytes.Equal(on, want) {
		t.Fatal("file contents differ")
	}
}

// TestLinkedWriteFsync runs write -> fdatasync as a chain, and checks that
// a failing head cancels the rest of its chain.
func TestLinkedWriteFsync(t *testing.T) {
	r := newRing(t, Config{Entries: 4})
	fd, path := tempFile(t, "linked")
	var order []string
	var results []Completion
	record := func(name string) Callback {
		return func(c Completion) { order = append(order, name); results = append(results, c) }
	}
	data := pattern(3000, 4)
	for round := 0; round < 10; round++ {
		order, results = order[:0], results[:0]
		if err := r.Reserve(2); err != nil {
			t.Fatal(err)
		}
		if err := r.PrepareWrite(fd, data, int64(round*len(data)), FlagLink, record("write")); err != nil {
			t.Fatal(err)
		}
		if err := r.PrepareFsync(fd, true, 0, record("fsync")); err != nil {
			t.Fatal(err)
		}
		if r.Queued() != 2 {
			t.Fatalf("%d queued, want the whole chain", r.Queued())
		}
		if err := r.Drain(); err != nil {
			t.Fatal(err)
		}
		if len(order) != 2 || order[0] != "write" || order[1] != "fsync" || results[0].Res != int32(len(data)) || results[1].Res != 0 {
			t.Fatalf("round %d: order %v results %+v", round, order, results)
		}
	}
	if info, err := os.Stat(path); err != nil || info.Size() != 10*int64(len(data)) {
		t.Fatalf("size %v %v", info, err)
	}

	// A failing write cancels the fsync linked after it.
	order, results = order[:0], results[:0]
	if err := r.Reserve(2); err != nil {
		t.Fatal(err)
	}
	if err := r.PrepareWrite(-1, data, 0, FlagLink, record("write")); err != nil {
		t.Fatal(err)
	}
	if err := r.PrepareFsync(fd, true, 0, record("fsync")); err != nil {
		t.Fatal(err)
	}
	if err := r.Drain(); err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || !errors.Is(results[0].Err(), syscall.EBADF) || !errors.Is(results[1].Err(), syscall.ECANCELED) {
		t.Fatalf("failed chain: order %v results %+v", order, results)
	}
}
