package server

import "sync"

// groupSync coalesces syncs of one file set (group commit): writers take a
// ticket after their write and wait until a sync that started after the
// write has completed. Concurrent waiters share one sync call. A failed
// sync is sticky: the data it covered is in an unknown state, so every
// later wait fails too and the owner must fence the partition.
type groupSync struct {
	sync func() error

	mu   sync.Mutex
	cond *sync.Cond
	// Invariant: synced <= written.
	written uint64
	synced  uint64
	syncing bool
	err     error
}

// newGroupSync returns a group commit over syncFn.
func newGroupSync(syncFn func() error) *groupSync {
	g := &groupSync{sync: syncFn}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// wrote records a completed write and returns the ticket to wait for.
func (g *groupSync) wrote() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.written++
	return g.written
}

// wait blocks until every write up to ticket is durable, running the sync
// itself when no other waiter is.
func (g *groupSync) wait(ticket uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.synced < ticket && g.err == nil {
		if g.syncing {
			g.cond.Wait()
			continue
		}
		g.syncing = true
		target := g.written
		g.mu.Unlock()
		err := g.sync()
		g.mu.Lock()
		g.syncing = false
		if err != nil {
			g.err = err
		} else {
			g.synced = target
		}
		g.cond.Broadcast()
	}
	return g.err
}
