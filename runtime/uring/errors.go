package uring

import (
	"errors"
	"fmt"
	"syscall"
)

// Sentinel errors of the package; match them with errors.Is.
var (
	// ErrUnavailable: io_uring cannot be used in this process (kernel too
	// old, disabled by sysctl, refused by seccomp).
	ErrUnavailable = errors.New("uring: io_uring unavailable")
	// ErrConfig: a configuration value is out of range or unparsable.
	ErrConfig = errors.New("uring: bad configuration")
	// ErrClosed: the ring has been closed.
	ErrClosed = errors.New("uring: ring closed")
	// ErrShortWrite: a write made no progress (the kernel reported 0 bytes).
	ErrShortWrite = errors.New("uring: write made no progress")
)

// opNames names opcodes in errors.
var opNames = map[uint8]string{
	opNop: "nop", opReadv: "readv", opWritev: "writev", opFsync: "fsync",
	opFallocate: "fallocate", opOpenat: "openat", opClose: "close",
	opRead: "read", opWrite: "write",
}

// Completion is what the kernel reported for one operation.
type Completion struct {
	// Res is the CQE result: bytes transferred, a new descriptor, 0, or a
	// negated errno.
	Res int32
	// Flags are the CQE flags.
	Flags uint32
	// Opcode names the operation, for error messages.
	Opcode uint8
}

// Err returns nil for a non-negative result and otherwise the errno,
// wrapped so that errors.Is(err, syscall.EBADF) and similar work.
func (c Completion) Err() error {
	if c.Res >= 0 {
		return nil
	}
	return fmt.Errorf("uring %s: %w", opNames[c.Opcode], syscall.Errno(-c.Res))
}
