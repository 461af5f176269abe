package iofs

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

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
	// async counts asynchronous operations in flight (SyncAsync);
	// finished holds those done whose callbacks have not run yet, spare
	// is the other half of that double buffer.
	async           int
	finished, spare []asyncDone
	// The wake-up eventfd (sleep.go): its read is in flight while
	// wakeArmed, into wakeBuf.
	wakeFD    int
	wakeBuf   [8]byte
	wakeArmed bool
	onWakeFn  uring.Callback
	// use catches overlapping operations in the invariants build.
	use useCheck
}

// newDirectEngine sets up a ring for the calling goroutine to drive.
func newDirectEngine(cfg uring.Config) (*directEngine, error) {
	ring, err := uring.New(cfg)
	if err != nil {
		return nil, err
	}
	wakeFD, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("eventfd: %w", err), ring.Close())
	}
	e := &directEngine{ring: ring, wakeFD: wakeFD}
	e.req.callback = e.req.completeInPlace
	e.onWakeFn = e.onWake
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
		if err := e.ring.SubmitAndWait(1); err != nil {
			// As in the loop engine: the binding retries what can be
			// retried, and with our operation in flight (its buffer
			// pinned by the ring) there is no safe way on.
			panic(fmt.Sprintf("iofs: io_uring_enter failed with %d operations in flight: %v", e.ring.InFlight(), err))
		}
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
func (e *directEngine) inFlight() int {
	n := e.ring.InFlight()
	if e.wakeArmed {
		n--
	}
	return n
}

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
	retireErr := e.retireWake()
	if retireErr != nil {
		// The read cannot complete: closing the ring would wait for it
		// forever. Leave the ring to process exit.
		return errors.Join(waitErr, retireErr)
	}
	return errors.Join(waitErr, e.ring.Close(), unix.Close(e.wakeFD))
}
