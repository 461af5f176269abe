package shard

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSleeper is an IO engine with a settable number of operations in
// flight; Sleep blocks until Wake.
type fakeSleeper struct {
	inFlight atomic.Int32
	sleeps   atomic.Int32
	woken    chan struct{}
}

func newFakeSleeper() *fakeSleeper { return &fakeSleeper{woken: make(chan struct{}, 1)} }

func (f *fakeSleeper) Poll() int { return int(f.inFlight.Load()) }

func (f *fakeSleeper) Sleep() {
	f.sleeps.Add(1)
	<-f.woken
}

func (f *fakeSleeper) Wake() {
	select {
	case f.woken <- struct{}{}:
	default:
	}
}

// waitFor spins until cond holds (bounded, no sleeps).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 50_000_000 {
			t.Fatalf("never: %s", what)
		}
		runtime.Gosched()
	}
}

// TestLoopSleepsInTheEngine checks that a loop with operations in flight
// sleeps in its Sleeper and that every task sent meanwhile wakes it: none
// is left waiting in the inbox of a sleeping loop (each Call returns).
func TestLoopSleepsInTheEngine(t *testing.T) {
	for _, unlocked := range []bool{true, false} {
		engine := newFakeSleeper()
		engine.inFlight.Store(1)
		s := startShard(t, Config{ID: 1, Unlocked: unlocked, Poller: engine})
		waitFor(t, "the loop sleeps in the engine", func() bool { return engine.sleeps.Load() > 0 })
		for i := 0; i < 2000; i++ {
			ran := false
			if err := s.Call(func() { ran = true }); err != nil || !ran {
				t.Fatalf("call %d: %v, ran %v", i, err, ran)
			}
			if i%3 == 0 {
				if err := s.Submit(func() {}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if engine.sleeps.Load() < 2 {
			t.Fatalf("the loop slept %d times in the engine", engine.sleeps.Load())
		}
		// Stop waits for what is in flight, then returns.
		stopped := make(chan struct{})
		go func() { s.Stop(); close(stopped) }()
		select {
		case <-stopped:
			t.Fatal("Stop returned with an operation in flight")
		case <-time.After(10 * time.Millisecond):
		}
		engine.inFlight.Store(0)
		engine.Wake()
		<-stopped
	}
}

// TestLoopWithTimersPolls checks that a loop with a timer pending does not
// sleep in the engine (the engine would not wake it for the timer): it
// polls, and the timer fires.
func TestLoopWithTimersPolls(t *testing.T) {
	engine := newFakeSleeper()
	engine.inFlight.Store(1)
	s := startShard(t, Config{ID: 2, Unlocked: true, Poller: engine})
	waitFor(t, "the loop sleeps in the engine", func() bool { return engine.sleeps.Load() > 0 })
	var fired atomic.Int32
	if _, err := s.Every(time.Millisecond, func() { fired.Add(1) }); err != nil {
		t.Fatal(err)
	}
	// Registering the timer woke the loop; from now on it polls.
	waitFor(t, "the timer fires", func() bool { return fired.Load() >= 3 })
	if n := engine.sleeps.Load(); n != 1 {
		t.Fatalf("the loop slept %d times in the engine with a timer pending", n)
	}
	engine.inFlight.Store(0)
	engine.Wake()
}
