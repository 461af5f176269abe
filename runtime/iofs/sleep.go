package iofs

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/runtime/uring"
)

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

// armWake keeps a read of the wake-up eventfd in flight.
func (e *directEngine) armWake() error {
	if e.wakeArmed {
		return nil
	}
	if err := e.ring.PrepareRead(e.wakeFD, e.wakeBuf[:], -1, 0, e.onWakeFn); err != nil {
		return fmt.Errorf("arm wake-up read: %w", err)
	}
	e.wakeArmed = true
	return nil
}

// onWake runs when the eventfd read completes (a Wake).
func (e *directEngine) onWake(uring.Completion) { e.wakeArmed = false }

// sleep waits in the ring for one completion, the wake-up read included.
func (e *directEngine) sleep() {
	if e.closed {
		return
	}
	e.use.enter()
	err := e.armWake()
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

// wake completes the pending eventfd read (or the next one).
func (e *directEngine) wake() {
	one := [8]byte{1}
	for {
		_, err := unix.Write(e.wakeFD, one[:])
		if err != unix.EINTR {
			// EAGAIN: the counter is saturated, a wake is pending anyway.
			return
		}
	}
}

// retireWake completes and reaps the wake-up read before the ring closes
// (closing waits for everything in flight).
func (e *directEngine) retireWake() error {
	if !e.wakeArmed {
		return nil
	}
	e.wake()
	for e.wakeArmed {
		if err := e.ring.SubmitAndWait(1); err != nil {
			return fmt.Errorf("retire the wake-up read: %w", err)
		}
	}
	return nil
}
