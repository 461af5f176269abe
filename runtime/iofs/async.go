package iofs

import (
	"errors"
	"fmt"

	"github.com/stratabroker/strata/runtime/uring"
)

// ErrNotDirect is returned by the asynchronous operations of an FS that
// New made: only a NewDirect FS has a goroutine that polls its ring.
var ErrNotDirect = errors.New("iofs: asynchronous operations need a NewDirect FS")

// asyncDone is one finished asynchronous operation waiting for its
// callback.
type asyncDone struct {
	done func(error)
	err  error
}

// SyncAsync queues an fdatasync of the file on a NewDirect FS's ring and
// returns at once. done runs later with the outcome, on the goroutine that
// owns the FS, from Poll or WaitAsync: never from inside another operation
// of the FS, so it may start new ones (and may not assume anything about
// when, between the caller's operations, it runs). Syncs queued after
// writes cover those writes. On an FS made by New it returns ErrNotDirect.
func (f *File) SyncAsync(done func(error)) error {
	if f.fd < 0 {
		return f.pathError("fdatasync", ErrClosed)
	}
	e, ok := f.fs.engine.(*directEngine)
	if !ok {
		return f.pathError("fdatasync", ErrNotDirect)
	}
	return e.syncAsync(f, done)
}

// WaitAsync waits until every asynchronous operation of a NewDirect FS
// has finished and its callback has run (callbacks may queue more; those
// are waited for too). It returns ErrNotDirect on an FS made by New.
func (f *FS) WaitAsync() error {
	e, ok := f.engine.(*directEngine)
	if !ok {
		return ErrNotDirect
	}
	return e.waitAsync()
}

// syncAsync prepares the fdatasync and submits it without waiting.
func (e *directEngine) syncAsync(f *File, done func(error)) error {
	if done == nil {
		panic("iofs: SyncAsync without a callback")
	}
	e.use.enter()
	defer e.use.leave()
	if e.closed {
		return f.pathError("fdatasync", ErrClosed)
	}
	path := f.path
	err := e.ring.PrepareFsync(f.fd, true, 0, func(c uring.Completion) {
		var err error
		if c.Res < 0 {
			err = f.pathErrorAt(path, "fdatasync", c.Err())
		}
		// Reaped inside some operation's wait or in poll: only record it;
		// callbacks run once the FS is between operations.
		e.finished = append(e.finished, asyncDone{done: done, err: err})
	})
	if err != nil {
		return f.pathError("fdatasync", err)
	}
	if _, err := e.ring.Submit(); err != nil {
		// The operation is queued (and in flight): a later submit or wait
		// takes it; report the failure to submit it now.
		return f.pathError("fdatasync", fmt.Errorf("submit: %w", err))
	}
	return nil
}

// runFinished runs the callbacks of finished asynchronous operations. The
// caller holds no operation (callbacks may start new ones).
func (e *directEngine) runFinished() {
	for len(e.finished) > 0 {
		batch := e.finished
		e.finished = e.spare[:0]
		for i := range batch {
			batch[i].done(batch[i].err)
			batch[i] = asyncDone{}
		}
		e.spare = batch[:0]
	}
}

// waitAsync blocks until no asynchronous operation is in flight, running
// callbacks as they finish.
func (e *directEngine) waitAsync() error {
	for {
		e.runFinished()
		inFlight := e.inFlight() // between operations: only asynchronous ones
		if inFlight == 0 {
			return nil
		}
		e.use.enter()
		err := e.ring.SubmitAndWait(1)
		e.use.leave()
		if err != nil {
			return fmt.Errorf("wait for %d asynchronous operations: %w", inFlight, err)
		}
	}
}
