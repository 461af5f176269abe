package server

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestGroupSyncCoalesces(t *testing.T) {
	var syncs atomic.Int64
	release := make(chan struct{})
	first := true
	var firstMu sync.Mutex
	g := newGroupSync(func() error {
		syncs.Add(1)
		firstMu.Lock()
		block := first
		first = false
		firstMu.Unlock()
		if block {
			<-release
		}
		return nil
	})
	// The first waiter starts a sync and blocks inside it.
	t0 := g.wrote()
	done0 := make(chan error)
	go func() { done0 <- g.wait(t0) }()
	for syncs.Load() == 0 {
		// wait until the first sync is running
	}
	// Many writes land while that sync runs; they need a later sync.
	const writers = 16
	var wg sync.WaitGroup
	tickets := make([]uint64, writers)
	for i := range tickets {
		tickets[i] = g.wrote()
	}
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(ticket uint64) {
			defer wg.Done()
			errs <- g.wait(ticket)
		}(tickets[i])
	}
	close(release)
	if err := <-done0; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// One sync for the first write, and the 16 later writes share at most
	// a couple more (exactly one unless a waiter raced ahead of the rest).
	if n := syncs.Load(); n < 2 || n > 1+writers {
		t.Fatalf("syncs = %d", n)
	}
	if g.synced != g.written {
		t.Fatalf("synced %d written %d", g.synced, g.written)
	}
}

func TestGroupSyncErrorIsSticky(t *testing.T) {
	boom := errors.New("disk on fire")
	g := newGroupSync(func() error { return boom })
	if err := g.wait(g.wrote()); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if err := g.wait(g.wrote()); !errors.Is(err, boom) {
		t.Fatalf("second wait got %v", err)
	}
}

func TestGroupSyncNoWriteNoSync(t *testing.T) {
	calls := 0
	g := newGroupSync(func() error { calls++; return nil })
	if err := g.wait(0); err != nil || calls != 0 {
		t.Fatalf("err %v calls %d", err, calls)
	}
}
