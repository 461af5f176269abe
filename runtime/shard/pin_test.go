package shard

import (
	"errors"
	"slices"
	"testing"
)

// onLockedThread runs fn on a fresh goroutine and waits; the goroutine
// ends locked to its thread (Pin locks it), so the runtime discards that
// thread and the pin never leaks into other tests.
func onLockedThread(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

func TestPinRestrictsTheThread(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil || len(allowed) == 0 {
		t.Fatalf("AllowedCPUs: %v, %v", allowed, err)
	}
	for _, cpu := range allowed {
		var pinned []int
		var pinErr, readErr error
		onLockedThread(func() {
			pinErr = Pin(cpu)
			pinned, readErr = AllowedCPUs()
		})
		if pinErr != nil || readErr != nil || !slices.Equal(pinned, []int{cpu}) {
			t.Fatalf("Pin(%d): %v; affinity afterwards %v, %v", cpu, pinErr, pinned, readErr)
		}
	}
	// The test goroutine's own thread kept the full set.
	after, err := AllowedCPUs()
	if err != nil || !slices.Equal(after, allowed) {
		t.Fatalf("affinity of an unpinned thread changed: %v, %v", after, err)
	}
}

func TestPinRefusesBadCPUs(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	for _, cpu := range []int{-1, CPUNumberMax + 1} {
		if err := Pin(cpu); !errors.Is(err, ErrAffinity) {
			t.Errorf("Pin(%d) = %v, want ErrAffinity", cpu, err)
		}
	}
	if slices.Contains(allowed, CPUNumberMax) {
		t.Skip("every CPU number is allowed here")
	}
	var pinErr error
	onLockedThread(func() { pinErr = Pin(CPUNumberMax) })
	if !errors.Is(pinErr, ErrAffinity) {
		t.Errorf("Pin(%d) on a CPU outside the allowed set = %v, want ErrAffinity", CPUNumberMax, pinErr)
	}
}
