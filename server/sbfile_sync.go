package server

import "fmt"

// sbFlushYieldsMax bounds how many times a queued superblock sync lets
// the shard's other queued tasks run first (each time behind all of
// them), so that a busy shard still syncs.
const sbFlushYieldsMax = 8

// superblockSyncer coalesces the superblock syncs of a shard's groups: a
// vsr.Storage Sync that must cover a superblock slot write joins the next
// fdatasync of the node's superblock file on this shard, which runs once
// for every group that asked meanwhile (a view change of many groups: a
// few syncs per shard and round, not one per group and step). It is a
// group commit: at most one sync in flight (on the shard's ring when it
// has one, else in place); the requests that came after it started wait
// for the next, which starts when it ends. A sync that is not waiting for
// one in flight starts in a task queued behind those on the shard's
// inbox, which, while the shard has more tasks queued (the other groups'
// messages of the same round), lets them go first up to sbFlushYieldsMax
// times; the shard's replica plane tick starts it at once. An idle shard
// therefore syncs at once: no sync waits for a timer (a group's
// descriptor checkpoints are taken one at a time, so a superblock made
// durable later makes its checkpoints trail: server/group's afterInput).
// A request's completion runs on the shard, never inside the call that
// made it (submit's callers hand completions to their host loop).
//
// Only the owning shard's goroutine touches it.
type superblockSyncer struct {
	sh *superblockShard
	// pending wait for the next sync; inflight for the running one
	// (Invariant: inflight is empty unless running).
	pending, inflight []func(error)
	// running: a sync is in flight; scheduled: a flush task is queued on
	// the shard.
	running, scheduled bool
	// yields counts the times the queued flush let the shard's other
	// tasks go first (at most sbFlushYieldsMax).
	yields   int
	flushFn  func()
	syncedFn func(error)
}

func (c *superblockSyncer) init(sh *superblockShard) {
	c.sh = sh
	c.flushFn = c.flush
	c.syncedFn = c.synced
}

// submit asks for a sync of the file that starts after this call: done
// runs with its outcome.
func (c *superblockSyncer) submit(done func(error)) {
	c.sh.store.syncRequests.Add(1)
	c.pending = append(c.pending, done)
	c.schedule()
}

// schedule queues the flush task behind the tasks already on the shard's
// inbox (the other groups' messages of the same round), unless a sync is
// in flight (its end schedules the next) or a flush is queued.
func (c *superblockSyncer) schedule() {
	if c.running || c.scheduled || len(c.pending) == 0 {
		return
	}
	c.scheduled = true
	if err := c.sh.owner.Submit(c.flushFn); err != nil {
		// The inbox is full or the shard stops: sync now.
		c.flush()
	}
}

// tick is the shard's replica plane tick: a sync whose flush task still
// waits behind the shard's other tasks starts now.
func (c *superblockSyncer) tick() { c.flush() }

// flush starts one sync for every pending request.
func (c *superblockSyncer) flush() {
	c.scheduled = false
	if c.running || len(c.pending) == 0 {
		return
	}
	if c.yields < sbFlushYieldsMax && c.sh.owner.QueueDepth() > 0 {
		// The shard has more work queued (the other groups' messages
		// of this round): they go first and join this sync.
		c.yields++
		c.scheduled = true
		if c.sh.owner.Submit(c.flushFn) == nil {
			return
		}
		c.scheduled = false
	}
	c.yields = 0
	c.running = true
	c.inflight, c.pending = c.pending, c.inflight[:0]
	c.sh.store.syncs.Add(1)
	f, err := c.sh.handle()
	if err != nil {
		c.synced(err)
		return
	}
	if af, ok := f.(asyncSyncer); ok {
		if _, ring := c.sh.fs.(asyncDrainer); ring {
			if err := af.SyncAsync(c.syncedFn); err == nil {
				return
			}
		}
	}
	c.synced(f.Sync())
}

// synced ends the running sync: every request it covered completes, and
// the next sync is scheduled for those that came meanwhile.
func (c *superblockSyncer) synced(err error) {
	if err != nil {
		err = fmt.Errorf("sync %s: %w", c.sh.store.name, err)
	}
	c.running = false
	done := c.inflight
	c.inflight = nil
	for i, d := range done {
		done[i] = nil
		d(err)
	}
	if c.inflight == nil {
		c.inflight = done[:0]
	}
	c.schedule()
}
