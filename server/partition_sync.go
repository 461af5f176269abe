package server

import (
	"fmt"
	"time"

	"go.uber.org/zap"
)

// startSync is the group commit's sync, on the owning shard: the files
// the log hands out are fdatasync'ed asynchronously on the shard's ring
// (the shard goes on serving meanwhile; the completions arrive through
// its event loop's poll) or, with the sync engine, one after the other in
// place. finish runs when all are done.
func (p *partitionRuntime) startSync(finish func(error)) {
	p.syncStarted = time.Now()
	p.syncFinish = finish
	files, err := p.log.SyncFiles(p.syncFiles[:0])
	p.syncFiles = files
	if err != nil || len(files) == 0 {
		p.endSync(err)
		return
	}
	if p.async == nil {
		for _, f := range files {
			if err = f.Sync(); err != nil {
				break
			}
		}
		p.endSync(err)
		return
	}
	p.syncPending = len(files)
	for _, f := range files {
		var queued error
		if af, ok := f.(asyncSyncer); ok {
			queued = af.SyncAsync(p.fileSyncedFn)
		} else {
			queued = fmt.Errorf("%w: %T cannot sync asynchronously", errFenced, f)
		}
		if queued != nil {
			p.fileSynced(queued)
		}
	}
}

// asyncSyncer is a file whose fdatasync can be queued on its shard's
// ring (runtime/iofs direct files).
type asyncSyncer interface {
	SyncAsync(done func(error)) error
}

// asyncDrainer is a shard's ring FS (runtime/iofs NewDirect): WaitAsync
// waits for its queued syncs.
type asyncDrainer interface {
	WaitAsync() error
}

// fileSynced records one file's asynchronous fdatasync; the last one ends
// the sync.
func (p *partitionRuntime) fileSynced(err error) {
	if err != nil && p.syncErr == nil {
		p.syncErr = err
	}
	p.syncPending--
	if p.syncPending == 0 {
		err, p.syncErr = p.syncErr, nil
		p.endSync(err)
	}
}

// endSync closes one group-commit sync: a failure fails the log and
// fences the partition (what the sync covered is in an unknown state).
func (p *partitionRuntime) endSync(err error) {
	clear(p.syncFiles)
	p.s.metrics.syncDuration.Observe(time.Since(p.syncStarted).Seconds())
	if err != nil {
		_ = p.log.Fail(err)
		p.fence(err)
	} else {
		p.log.FilesSynced()
	}
	finish := p.syncFinish
	p.syncFinish = nil
	finish(err)
	if err == nil {
		// finish started the next sync unless nobody waits: then the
		// superblock records the frontier at once.
		p.recordFrontier(!p.group.syncing)
	}
}

// drainSyncs waits, on the owning shard, until no group-commit or
// superblock sync is in flight (before the partition's files are purged,
// deleted or closed, or a superblock must be stored in place).
func (p *partitionRuntime) drainSyncs() {
	for p.async != nil && (p.group.syncing || p.sbSyncing) {
		if err := p.async.WaitAsync(); err != nil {
			p.s.log.Error("waiting for a partition's syncs", zap.String("dir", p.dir), zap.Error(err))
			return
		}
	}
}

// reserveOffsets makes sure the n offsets the next send takes lie inside
// the reservation the superblock durably records, before they are handed
// out: a crash then never gives one of them to another message (recovery
// starts after the reservation). When the reservation runs out the
// superblock is stored in place (the send waits for one sync); when less
// than half of it is left, it is extended in the background, so a steady
// stream of sends does not wait.
func (p *partitionRuntime) reserveOffsets(n uint64) error {
	need := p.machine.NextOffset() + n
	if need > p.log.Reserved() {
		if err := p.drainSuperblock(); err != nil { // the other copy must be durable
			return err
		}
		if need > p.log.Reserved() {
			p.s.metrics.reservationStalls.Inc()
			if err := p.log.StoreSuperblock(need + p.reservation); err != nil {
				return fmt.Errorf("reserve offsets up to %d: %w", need+p.reservation, err)
			}
		}
		return nil
	}
	if p.log.Reserved()-need < p.reservation/2 {
		p.storeSuperblockAsync(need + p.reservation)
	}
	return nil
}

// drainSuperblock waits until no superblock copy is syncing, before one
// is stored in place.
func (p *partitionRuntime) drainSuperblock() error {
	p.drainSyncs()
	if p.sbSyncing {
		return fmt.Errorf("partition %s: a superblock sync did not finish", p.dir)
	}
	return nil
}

// recordFrontier stores the superblock in the background when its durable
// frontier trails the log's: at once when idle is set (syncs stopped, a
// segment was sealed), else once superblockLagBytesMax durable bytes wait.
func (p *partitionRuntime) recordFrontier(idle bool) {
	if behind, lag := p.log.SuperblockLag(); behind && (idle || lag >= superblockLagBytesMax) {
		p.storeSuperblockAsync(p.log.Reserved())
	}
}

// storeSuperblockAsync writes the next superblock copy (the durable
// frontier, a reservation up to reserveEnd) and syncs it on the owner's
// ring, or in place with the sync engine. At most one is in flight; a
// request meanwhile is dropped (the reservation check and the frontier
// check run again when it ends).
func (p *partitionRuntime) storeSuperblockAsync(reserveEnd uint64) {
	if p.sbSyncing || p.fenced != nil {
		return
	}
	f, err := p.log.WriteSuperblock(max(reserveEnd, p.log.Reserved()))
	if err != nil {
		p.fence(err)
		return
	}
	af, ok := f.(asyncSyncer)
	if p.async == nil || !ok {
		p.superblockSynced(f.Sync())
		return
	}
	p.sbSyncing = true
	if err := af.SyncAsync(p.superblockSyncedFn); err != nil {
		p.superblockSynced(err)
	}
}

// superblockSynced ends a superblock store begun by storeSuperblockAsync.
func (p *partitionRuntime) superblockSynced(err error) {
	p.sbSyncing = false
	if err := p.log.SuperblockSynced(err); err != nil {
		p.fence(err)
		return
	}
	p.s.metrics.superblockStores.Inc()
	if p.fenced == nil {
		p.recordFrontier(!p.group.syncing)
	}
}
