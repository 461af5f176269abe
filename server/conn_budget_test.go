package server

import (
	"errors"
	"testing"
	"time"

	"github.com/stratabroker/strata/runtime/pool"
)

func TestRequestBudgetWaitsInOrderAndTimesOut(t *testing.T) {
	p, err := pool.New(pool.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b := newRequestBudget(3<<20, p)
	far := time.Now().Add(time.Minute)
	first, err := b.lend(1<<20+1, far, nil) // a 1.5 MiB class
	if err != nil || first.charged != 1536<<10 || len(first.data) != 1<<20+1 {
		t.Fatalf("first: charged %d, %d bytes, %v", first.charged, len(first.data), err)
	}
	second, err := b.lend(1<<20, far, nil)
	if err != nil || b.inUseBytes() != 2560<<10 {
		t.Fatalf("second: %v, in use %d", err, b.inUseBytes())
	}
	// 1 MiB more does not fit: the reader waits, and gives up at its
	// deadline without being charged.
	if _, err := b.lend(1<<20, time.Now().Add(20*time.Millisecond), nil); !errors.Is(err, errBudgetTimeout) {
		t.Fatalf("over the budget: %v, want errBudgetTimeout", err)
	}
	// A closed connection stops the wait too.
	done := make(chan struct{})
	close(done)
	if _, err := b.lend(1<<20, far, done); !errors.Is(err, errConnClosing) {
		t.Fatalf("closed connection: %v", err)
	}
	// Waiters are served in order when the budget comes back: a large one
	// first blocks a small one behind it.
	large, small := make(chan budgetBuffer, 1), make(chan budgetBuffer, 1)
	go func() {
		buffer, _ := b.lend(2<<20, far, nil)
		large <- buffer
	}()
	for b.waitingCount() != 1 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		buffer, _ := b.lend(4096, far, nil)
		small <- buffer
	}()
	for b.waitingCount() != 2 {
		time.Sleep(time.Millisecond)
	}
	b.giveBack(&second)
	select {
	case <-small:
		t.Fatal("a later small request overtook the waiting large one")
	case <-time.After(20 * time.Millisecond):
	}
	b.giveBack(&first)
	l, s := <-large, <-small
	if b.inUseBytes() != 2<<20+4096 {
		t.Fatalf("in use %d after the waiters were served", b.inUseBytes())
	}
	b.giveBack(&l)
	b.giveBack(&s)
	if stats := p.Stats(); b.inUseBytes() != 0 || stats.BytesInUse != 0 || b.waits.Load() != 4 {
		t.Fatalf("after everything was given back: budget %d, pool lent %d, waits %d", b.inUseBytes(), stats.BytesInUse, b.waits.Load())
	}
}

func TestRequestBudgetWithoutPool(t *testing.T) {
	b := newRequestBudget(1<<20, nil)
	buffer, err := b.lend(5000, time.Now().Add(time.Minute), nil)
	if err != nil || buffer.charged != 5000 || len(buffer.data) != 5000 {
		t.Fatalf("plain buffer: %+v %v", buffer.charged, err)
	}
	b.giveBack(&buffer)
	if b.inUseBytes() != 0 || b.plainReleasedBytes.Load() != 5000 {
		t.Fatalf("plain buffer given back: in use %d, released %d", b.inUseBytes(), b.plainReleasedBytes.Load())
	}
}
