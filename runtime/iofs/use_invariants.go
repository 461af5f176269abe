//go:build invariants

package iofs

import "sync/atomic"

// useCheck catches a NewDirect FS used by two goroutines at once: every
// operation holds busy from get to put, and finding it already held means
// a second operation overlaps the first.
type useCheck struct {
	busy atomic.Bool
}

func (c *useCheck) enter() {
	if !c.busy.CompareAndSwap(false, true) {
		panic("iofs: a direct FS (NewDirect) or one of its files was used by two goroutines at once; it belongs to one goroutine (one shard) at a time")
	}
}

func (c *useCheck) leave() { c.busy.Store(false) }
