package server

// groupCommit makes appended data durable with shared syncs (group
// commit). It is confined to the partition's owning shard, like the rest
// of the partition, so it needs no lock: appends take a ticket, waiters
// register a callback for their ticket, and one sync at a time covers
// every write made before it started. When it ends, the waiters it covers
// are answered and, if others remain, the next sync starts at once, so
// writes that arrive while a sync runs share the following one.
//
// A failed sync is sticky: the data it covered is in an unknown state, so
// every later wait fails too and the owner fences the partition.
type groupCommit struct {
	// startSync begins a sync of everything written so far and calls
	// finish on the shard when it ends: later (an asynchronous sync on
	// the shard's ring) or before returning (a synchronous one).
	startSync func(finish func(error))
	finishFn  func(error) // g.finish, bound once

	// Invariant: synced <= target <= written; target is meaningful while
	// syncing.
	written, synced, target uint64
	syncing                 bool
	err                     error
	waiters                 []commitWaiter
}

// commitWaiter is one append waiting to be durable.
type commitWaiter struct {
	ticket uint64
	// done is called with the outcome, on the shard; it must not block.
	done func(error)
}

// newGroupCommit returns a group commit over startSync.
func newGroupCommit(startSync func(finish func(error))) *groupCommit {
	g := &groupCommit{startSync: startSync}
	g.finishFn = g.finish
	return g
}

// wrote records a completed write and returns the ticket to wait for.
func (g *groupCommit) wrote() uint64 {
	g.written++
	return g.written
}

// wait arranges for done to be called with nil once every write up to
// ticket is durable (or with the sticky error), starting a sync if none is
// running. done runs on the shard (at once when the outcome is known); it
// must not block nor call back into the group commit.
func (g *groupCommit) wait(ticket uint64, done func(error)) {
	switch {
	case g.err != nil:
		done(g.err)
		return
	case ticket <= g.synced:
		done(nil)
		return
	}
	g.waiters = append(g.waiters, commitWaiter{ticket: ticket, done: done})
	if !g.syncing {
		g.start()
	}
}

// start begins a sync of every write so far.
func (g *groupCommit) start() {
	g.syncing, g.target = true, g.written
	g.startSync(g.finishFn)
}

// finish ends the running sync: answers the waiters it covered (all of
// them, with the error, if it failed) and starts the next sync if some are
// still waiting.
func (g *groupCommit) finish(err error) {
	g.syncing = false
	if err != nil && g.err == nil {
		g.err = err
	}
	if g.err == nil {
		g.synced = g.target
	}
	keep := g.waiters[:0]
	for _, w := range g.waiters {
		switch {
		case g.err != nil:
			w.done(g.err)
		case w.ticket <= g.synced:
			w.done(nil)
		default:
			keep = append(keep, w)
		}
	}
	clear(g.waiters[len(keep):])
	g.waiters = keep
	if len(g.waiters) > 0 && g.err == nil {
		g.start()
	}
}
