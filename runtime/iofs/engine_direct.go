package iofs

import (
	"errors"

	"github.com/stratabroker/strata/runtime/uring"
)

// directEngine drives its ring from the calling goroutine: do prepares the
// operation, submits it and waits for its completion in place. It has no
// lock and no goroutine; one goroutine at a time may use it (NewDirect).
// Every operation waits for its own completion before returning, so
// between calls only asynchronous syncs (async.go) and the wake-up read of
// a sleeping shard (sleep.go) are in flight.
type directEngine struct {
	ring *uring.Ring
	// req is the engine's only request: one operation runs at a time.
	req    request
	closed bool
	// finished holds the asynchronous operations (SyncAsync) done whose
	// callbacks have not run yet, spare is the other half of that double
	// buffer. Those still in flight are inFlight() between operations.
	finished, spare []asyncDone
	// waker's read is in flight while a shard sleeps (sleep.go).
	waker wakeRead
	// use catches overlapping operations in the invariants build.
	use useCheck
}

// newDirectEngine sets up a ring for the calling goroutine to drive.
func newDirectEngine(cfg uring.Config) (*directEngine, error) {
	ring, err := uring.New(cfg)
	if err != nil {
		return nil, err
	}
	e := &directEngine{ring: ring}
	if err := e.waker.init(e.onWake); err != nil {
		return nil, errors.Join(err, ring.Close())
	}
	e.req.callback = e.req.completeInPlace
	return e, nil
}

// completeInPlace runs inside the waiting goroutine's SubmitAndWait.
func (r *request) completeInPlace(c uring.Completion) {
	r.res = c.Res
	r.finished = true
}

// get starts an operation: the request stays the caller's until put.
func (e *directEngine) get() *request {
	e.use.enter()
	return &e.req
}

// put ends the operation get started.
func (e *directEngine) put(r *request) {
	r.clear()
	e.use.leave()
}

// do prepares req, submits it and waits until its callback has run.
func (e *directEngine) do(req *request) (int32, error) {
	if e.closed {
		return 0, ErrClosed
	}
	req.finished = false
	if err := prepareRequest(e.ring, req); err != nil {
		return 0, err
	}
	for !req.finished {
		mustEnter(e.ring, e.ring.SubmitAndWait(1))
	}
	return req.result()
}

// poll reaps without a system call, then runs the callbacks of finished
// asynchronous operations (outside any operation, so they may start new
// ones) and returns what is still in flight.
func (e *directEngine) poll() int {
	if e.closed {
		return 0
	}
	e.use.enter()
	e.ring.Reap()
	e.use.leave()
	e.runFinished()
	return e.inFlight()
}

// inFlight counts the operations in flight, the wake-up read excluded.
func (e *directEngine) inFlight() int { return e.waker.others(e.ring) }

// close waits for asynchronous operations in flight, runs their
// callbacks, and closes the ring.
func (e *directEngine) close() error {
	if e.closed {
		return ErrClosed
	}
	waitErr := e.waitAsync()
	e.use.enter()
	defer e.use.leave()
	e.closed = true
	return errors.Join(waitErr, e.waker.close(e.ring))
}
