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
	}
	finish := p.syncFinish
	p.syncFinish = nil
	finish(err)
}

// drainSyncs waits, on the owning shard, until no group-commit sync is in
// flight (before the partition's files are purged, deleted or closed).
func (p *partitionRuntime) drainSyncs() {
	for p.async != nil && p.group.syncing {
		if err := p.async.WaitAsync(); err != nil {
			p.s.log.Error("waiting for a partition's syncs", zap.String("dir", p.dir), zap.Error(err))
			return
		}
	}
}
