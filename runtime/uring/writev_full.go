package uring

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// WritevFull writes every byte of iovs at off (off -1: at the file
// position, for pipes and sockets) in chunks of at most IovecsMax buffers,
// resubmitting the rest after each partial write, and returns the bytes
// written. It consumes iovs: their contents are advanced in place. It runs
// other operations' callbacks while it waits, on the calling (owning)
// goroutine.
func (r *Ring) WritevFull(fd int, iovs []unix.Iovec, off int64) (int, error) {
	total := 0
	for len(iovs) > 0 {
		chunk := iovs[:min(len(iovs), IovecsMax)]
		want := IovecsLen(chunk)
		res, err := r.Run(func(cb Callback) error { return r.PrepareWritev(fd, chunk, off, 0, cb) })
		if err == nil && res == 0 && want > 0 {
			err = fmt.Errorf("writev of %d bytes at %d: %w", want, off, ErrShortWrite)
		}
		if err != nil {
			runtime.KeepAlive(iovs)
			return total, err
		}
		total += int(res)
		if off >= 0 {
			off += int64(res)
		}
		if int(res) < want {
			r.stats.Resubmissions++
		}
		iovs = AdvanceIovecs(iovs, int(res))
	}
	// The kernel is done with the iovecs (their CQEs are reaped); keep them
	// reachable until here all the same, as the rule for waiting helpers.
	runtime.KeepAlive(iovs)
	return total, nil
}

// Run prepares one operation with prep (which must call exactly one
// Prepare method with the callback it is given), submits it and waits for
// its completion, running other callbacks meanwhile. It returns the result
// or the completion's error.
func (r *Ring) Run(prep func(Callback) error) (int32, error) {
	var done bool
	var got Completion
	if err := prep(func(c Completion) { got, done = c, true }); err != nil {
		return 0, err
	}
	for !done {
		if err := r.SubmitAndWait(1); err != nil {
			return 0, err
		}
	}
	return got.Res, got.Err()
}
