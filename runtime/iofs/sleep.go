package iofs

import "github.com/stratabroker/strata/runtime/uring"

// A NewDirect FS is a shard.Sleeper: the shard's loop sleeps in the ring
// (io_uring_enter waiting for a completion) while operations are in flight,
// and a task sent to the shard wakes it by writing an eventfd whose read
// the ring holds while the loop sleeps.

// Sleep blocks until an operation in flight completes or Wake is called
// (a Wake since the last Sleep returns it at once). Finished asynchronous
// operations' callbacks run before it returns. On an FS made by New it
// returns at once.
func (f *FS) Sleep() {
	if e, ok := f.engine.(*directEngine); ok {
		e.sleep()
	}
}

// Wake interrupts a Sleep, from any goroutine.
func (f *FS) Wake() {
	if e, ok := f.engine.(*directEngine); ok {
		e.wake()
	}
}

// onWake runs when the eventfd read completes (a Wake).
func (e *directEngine) onWake(uring.Completion) { e.waker.complete() }

// sleep waits in the ring for one completion, the wake-up read included.
func (e *directEngine) sleep() {
	if e.closed {
		return
	}
	e.use.enter()
	err := e.waker.arm(e.ring)
	if err == nil {
		err = e.ring.SubmitAndWait(1)
	}
	e.use.leave()
	if err != nil {
		// The binding retries what can be retried; the loop polls again.
		return
	}
	e.runFinished()
}

// wake completes the pending eventfd read (or the next one). Errors
// cannot happen on our eventfd.
func (e *directEngine) wake() { _ = e.waker.signal() }
