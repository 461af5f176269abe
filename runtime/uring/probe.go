package uring

import (
	"fmt"
	"os"
	"strings"
)

// probeEntries sizes the throwaway ring Probe sets up.
const probeEntries = 2

// Probe reports whether io_uring works in this process: it sets up a tiny
// ring, runs a NOP through it and tears it down. The error (wrapping
// ErrUnavailable where the kernel refused) says why not, in one line, for
// the log.
func Probe() error {
	r, err := New(Config{Entries: probeEntries, EventInterval: 1})
	if err != nil {
		return err
	}
	var got *Completion
	if err := r.PrepareNop(0, func(c Completion) { got = &c }); err != nil {
		return fmt.Errorf("probe nop: %w", joinClose(err, r))
	}
	if err := r.SubmitAndWait(1); err != nil {
		return fmt.Errorf("probe nop: %w: %w", ErrUnavailable, joinClose(err, r))
	}
	if got == nil {
		return fmt.Errorf("probe nop did not complete: %w", joinClose(ErrUnavailable, r))
	}
	if err := got.Err(); err != nil {
		return fmt.Errorf("probe nop: %w: %w", ErrUnavailable, joinClose(err, r))
	}
	return r.Close()
}

func joinClose(err error, r *Ring) error {
	if cerr := r.Close(); cerr != nil {
		return fmt.Errorf("%w (close: %v)", err, cerr)
	}
	return err
}

// ioUringDisabledSysctl reads kernel.io_uring_disabled for error messages
// ("?" when it cannot be read, e.g. on kernels without it).
func ioUringDisabledSysctl() string {
	b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
