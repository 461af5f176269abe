package iofs

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/runtime/uring"
)

// wakeRead lets any goroutine end a wait in io_uring_enter: the ring holds
// a read of an eventfd in flight, and a write to the eventfd completes it.
// Both engines use one: the loop engine keeps it armed while its loop runs
// (wake), a direct engine arms it when its shard sleeps (sleep.go). Only
// the goroutine that drives the ring calls arm, complete, others and
// retire; signal may be called from any goroutine.
type wakeRead struct {
	fd  int
	buf [8]byte
	// armed: the read is in flight (it counts in the ring's InFlight).
	armed bool
	// onDone is the read's callback, bound once; it must call complete.
	onDone uring.Callback
}

// init opens the eventfd. The eventfd blocks: its read is taken by the
// ring's poll, and a write would block only on a saturated counter.
func (w *wakeRead) init(onDone uring.Callback) error {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	w.fd, w.onDone = fd, onDone
	return nil
}

// arm queues the read on ring unless it is already in flight.
func (w *wakeRead) arm(ring *uring.Ring) error {
	if w.armed {
		return nil
	}
	if err := ring.PrepareRead(w.fd, w.buf[:], -1, 0, w.onDone); err != nil {
		return fmt.Errorf("arm wake-up read: %w", err)
	}
	w.armed = true
	return nil
}

// complete records that the read finished; onDone calls it.
func (w *wakeRead) complete() { w.armed = false }

// signal completes the read in flight (or the next one armed).
func (w *wakeRead) signal() error {
	one := [8]byte{1}
	for {
		_, err := unix.Write(w.fd, one[:])
		if err != unix.EINTR {
			return err
		}
	}
}

// others is the number of operations in flight on ring besides the read.
func (w *wakeRead) others(ring *uring.Ring) int {
	n := ring.InFlight()
	if w.armed {
		n--
	}
	return n
}

// retire completes and reaps the read (onDone must not arm it again), so
// the ring can close: closing waits for everything in flight. On an error
// the read may still be in flight: the caller leaves the ring to process
// exit.
func (w *wakeRead) retire(ring *uring.Ring) error {
	if !w.armed {
		return nil
	}
	if err := w.signal(); err != nil {
		return fmt.Errorf("wake for shutdown: %w", err)
	}
	for w.armed {
		if err := ring.SubmitAndWait(1); err != nil {
			return fmt.Errorf("retire the wake-up read: %w", err)
		}
	}
	return nil
}

// close retires the read and closes ring and the eventfd. When the read
// cannot be retired it returns that error and closes neither.
func (w *wakeRead) close(ring *uring.Ring) error {
	if err := w.retire(ring); err != nil {
		return err
	}
	return errors.Join(ring.Close(), unix.Close(w.fd))
}
