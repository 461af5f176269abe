package server

import (
	"errors"
	"testing"
)

// manualSync is a startSync whose syncs end when the test says.
type manualSync struct {
	started int
	finish  func(error)
}

func (m *manualSync) start(finish func(error)) {
	m.started++
	m.finish = finish
}

// sendTo is a group-commit waiter that hands the outcome to ch (which
// has room for it).
func sendTo(ch chan error) func(error) { return func(err error) { ch <- err } }

func answered(t *testing.T, ch chan error) (error, bool) {
	t.Helper()
	select {
	case err := <-ch:
		return err, true
	default:
		return nil, false
	}
}

// TestGroupCommitShares checks that writes made while a sync runs share
// the next one, that a waiter is answered only once a sync that started
// after its write ends, and that nothing syncs without a waiter.
func TestGroupCommitShares(t *testing.T) {
	m := &manualSync{}
	g := newGroupCommit(m.start)
	first := make(chan error, 1)
	g.wait(g.wrote(), sendTo(first))
	if m.started != 1 {
		t.Fatalf("%d syncs started for one waiter", m.started)
	}
	// 16 writes land while the first sync runs.
	later := make([]chan error, 16)
	for i := range later {
		later[i] = make(chan error, 1)
		g.wait(g.wrote(), sendTo(later[i]))
	}
	if m.started != 1 {
		t.Fatalf("%d syncs running at once", m.started)
	}
	m.finish(nil)
	if err, ok := answered(t, first); !ok || err != nil {
		t.Fatalf("first waiter: %v %v", err, ok)
	}
	for _, ch := range later {
		if _, ok := answered(t, ch); ok {
			t.Fatal("a write made during the sync was answered by it")
		}
	}
	if m.started != 2 {
		t.Fatalf("the later writes did not start one shared sync (%d started)", m.started)
	}
	m.finish(nil)
	for _, ch := range later {
		if err, ok := answered(t, ch); !ok || err != nil {
			t.Fatalf("later waiter: %v %v", err, ok)
		}
	}
	if m.started != 2 || g.synced != g.written || len(g.waiters) != 0 {
		t.Fatalf("started %d synced %d written %d waiters %d", m.started, g.synced, g.written, len(g.waiters))
	}
	// A ticket already covered is answered at once, without a sync.
	again := make(chan error, 1)
	g.wait(g.synced, sendTo(again))
	if err, ok := answered(t, again); !ok || err != nil || m.started != 2 {
		t.Fatalf("covered ticket: %v %v, %d syncs", err, ok, m.started)
	}
}

// TestGroupCommitErrorIsSticky checks that a failed sync fails every
// waiter, then and later, and starts no more syncs.
func TestGroupCommitErrorIsSticky(t *testing.T) {
	boom := errors.New("disk on fire")
	m := &manualSync{}
	g := newGroupCommit(m.start)
	a, b := make(chan error, 1), make(chan error, 1)
	g.wait(g.wrote(), sendTo(a))
	g.wait(g.wrote(), sendTo(b))
	m.finish(boom)
	for _, ch := range []chan error{a, b} {
		if err, ok := answered(t, ch); !ok || !errors.Is(err, boom) {
			t.Fatalf("waiter: %v %v", err, ok)
		}
	}
	c := make(chan error, 1)
	g.wait(g.wrote(), sendTo(c))
	if err, ok := answered(t, c); !ok || !errors.Is(err, boom) || m.started != 1 {
		t.Fatalf("after the failure: %v %v, %d syncs", err, ok, m.started)
	}
}

// TestGroupCommitSynchronousSync checks a sync that ends before startSync
// returns (the sync engine's path).
func TestGroupCommitSynchronousSync(t *testing.T) {
	syncs := 0
	g := newGroupCommit(func(finish func(error)) { syncs++; finish(nil) })
	for i := 0; i < 3; i++ {
		done := make(chan error, 1)
		g.wait(g.wrote(), sendTo(done))
		if err, ok := answered(t, done); !ok || err != nil {
			t.Fatalf("write %d: %v %v", i, err, ok)
		}
	}
	if syncs != 3 {
		t.Fatalf("%d syncs for 3 sequential waits", syncs)
	}
}
