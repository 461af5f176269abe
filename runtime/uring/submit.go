package uring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// enter is io_uring_enter(2) without a signal mask.
func (r *Ring) enter(toSubmit, minComplete, flags uint32) (int, error) {
	r.stats.Enters++
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), uintptr(flags), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// sqFree is the number of SQ slots we may fill without overwriting SQEs
// the kernel has not consumed yet.
func (r *Ring) sqFree() int {
	// Acquire: the kernel's head store follows its reads of the SQEs.
	return len(r.sqes) - int(r.sqeTail-atomic.LoadUint32(r.sqHead))
}

// Reserve makes room for n more operations, submitting what is queued and
// waiting for completions as needed. Call it before preparing a linked
// chain of n operations so that no wait (which submits) splits the chain.
func (r *Ring) Reserve(n int) error {
	if r.closed {
		return ErrClosed
	}
	if n < 1 || n > r.pending.capacity() {
		return fmt.Errorf("reserve %d of a %d-entry ring: %w", n, r.pending.capacity(), ErrConfig)
	}
	waited := false
	for r.sqFree() < n || len(r.pending.free) < n {
		if !waited {
			r.stats.FullWaits++
			waited = true
		}
		if r.sqFree() < n {
			if _, err := r.Submit(); err != nil {
				return err
			}
			continue
		}
		if err := r.SubmitAndWait(1); err != nil {
			return err
		}
	}
	return nil
}

// prepare claims an SQE and a pending slot for opcode, waiting for room,
// and fills the fields common to every operation. The caller fills the
// rest and stores its pins in the returned slot.
func (r *Ring) prepare(opcode uint8, fd int, flags SQEFlags, cb Callback) (*sqe, *pendingOp, error) {
	if err := r.Reserve(1); err != nil {
		return nil, nil, err
	}
	index, op := r.pending.take()
	op.callback = cb
	op.opcode = opcode
	e := &r.sqes[r.sqeTail&r.sqMask]
	*e = sqe{opcode: opcode, flags: uint8(flags), fd: int32(fd), userData: uint64(index)}
	r.sqeTail++
	return e, op, nil
}

// Queued is the number of prepared operations not yet submitted.
func (r *Ring) Queued() int { return int(r.sqeTail - r.published) }

// publish makes every prepared SQE visible to the kernel.
func (r *Ring) publish() uint32 {
	n := r.sqeTail - r.published
	// Release: the SQE stores above happen before the kernel can see the
	// new tail (atomic stores are sequentially consistent in Go).
	atomic.StoreUint32(r.sqTail, r.sqeTail)
	r.published = r.sqeTail
	return n
}

// Submit hands every prepared operation to the kernel with as few
// io_uring_enter calls as it takes (normally one) and returns how many it
// submitted. It does not wait for completions but reaps any already there.
func (r *Ring) Submit() (int, error) {
	return r.submit(0)
}

// SubmitAndWait submits what is queued, waits until at least minComplete
// completions are available, and reaps them all, running callbacks.
func (r *Ring) SubmitAndWait(minComplete int) error {
	if minComplete > r.pending.used {
		return fmt.Errorf("wait for %d completions with %d in flight: %w", minComplete, r.pending.used, ErrConfig)
	}
	_, err := r.submit(uint32(minComplete))
	return err
}

// submit publishes and submits queued SQEs and, when minComplete > 0,
// waits for that many completions; then it reaps.
func (r *Ring) submit(minComplete uint32) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	toSubmit := r.publish()
	total := 0
	for {
		if toSubmit == 0 && minComplete == 0 {
			break
		}
		flags := uint32(0)
		if minComplete > 0 {
			flags = enterGetEvents
			// Completions already in the CQ count toward the wait.
			if ready := r.cqReady(); ready >= minComplete {
				minComplete = 0
				flags = 0
				if toSubmit == 0 {
					break
				}
			}
		}
		n, err := r.enter(toSubmit, minComplete, flags)
		switch err {
		case nil:
		case unix.EINTR:
			continue
		case unix.EAGAIN, unix.EBUSY:
			// The kernel is short of request memory or holds overflowed
			// completions: make room by reaping, or wait for one.
			if r.Reap() > 0 {
				continue
			}
			if r.pending.used > int(toSubmit) {
				if _, werr := r.enter(0, 1, enterGetEvents); werr != nil && werr != unix.EINTR {
					return total, fmt.Errorf("io_uring_enter wait: %w", werr)
				}
				r.Reap()
				continue
			}
			return total, fmt.Errorf("io_uring_enter: %w", err)
		default:
			return total, fmt.Errorf("io_uring_enter: %w", err)
		}
		if n == 0 && toSubmit > 0 {
			return total, fmt.Errorf("io_uring_enter consumed none of %d SQEs: %w", toSubmit, unix.EIO)
		}
		if n == int(toSubmit) {
			// Everything went in, so the kernel also did the wait asked
			// for; a partial submission skips the wait and we try again.
			minComplete = 0
		}
		r.stats.Submitted += uint64(n)
		total += n
		toSubmit -= uint32(n)
	}
	r.Reap()
	if r.pending.used > r.stats.InFlightMax {
		r.stats.InFlightMax = r.pending.used
	}
	return total, nil
}

// cqReady is the number of CQEs waiting to be reaped.
func (r *Ring) cqReady() uint32 {
	return atomic.LoadUint32(r.cqTail) - atomic.LoadUint32(r.cqHead)
}

// Reap runs the callback of every completion in the CQ, without a system
// call, and returns how many it ran.
func (r *Ring) Reap() int {
	count := 0
	for {
		head := atomic.LoadUint32(r.cqHead)
		// Acquire: the kernel wrote the CQEs below tail before storing it.
		if head == atomic.LoadUint32(r.cqTail) {
			return count
		}
		c := r.cqes[head&r.cqMask]
		// Release: we have copied the CQE out, the kernel may reuse it.
		// Stored before the callback runs, so a callback may reap too.
		atomic.StoreUint32(r.cqHead, head+1)
		r.stats.Completed++
		count++
		cb, opcode, ok := r.pending.release(c.userData)
		if !ok {
			// A CQE for no operation of ours would be a kernel or binding
			// bug; there is no caller to report it to.
			panic(fmt.Sprintf("uring: completion for unknown user_data %d", c.userData))
		}
		if cb != nil {
			cb(Completion{Res: c.res, Flags: c.flags, Opcode: opcode})
		}
	}
}

// addr is the address of b's first byte as an SQE field (0 when empty).
func addr(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&b[0])))
}
