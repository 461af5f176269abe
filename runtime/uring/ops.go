package uring

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// IovecsMax is the most buffers one readv or writev takes (the kernel's
// UIO_MAXIOV; DESIGN.md decision 10 chunks vectored writes at this size).
const IovecsMax = 1024

// rwBytesMax is the most bytes one read or write asks for; the kernel
// caps a single transfer at MAX_RW_COUNT (2 GiB less a page) anyway.
const rwBytesMax = 1 << 30

// Each Prepare method queues one operation; it runs once submitted (by
// Submit, SubmitAndWait, or a later Prepare that has to wait for room) and
// cb receives its completion. flags adds IOSQE flags (FlagLink for a
// chain). The buffers passed in must not be touched until cb has run; the
// ring holds references to them until then.

// PrepareNop queues an operation that does nothing.
func (r *Ring) PrepareNop(flags SQEFlags, cb Callback) error {
	_, _, err := r.prepare(opNop, -1, flags, cb)
	return err
}

// PrepareRead queues pread(fd, buf, off); off -1 reads at the file
// position. A result shorter than len(buf) is a short read (end of file).
func (r *Ring) PrepareRead(fd int, buf []byte, off int64, flags SQEFlags, cb Callback) error {
	return r.prepareRW(opRead, fd, buf, off, flags, cb)
}

// PrepareWrite queues pwrite(fd, buf, off); off -1 writes at the file
// position.
func (r *Ring) PrepareWrite(fd int, buf []byte, off int64, flags SQEFlags, cb Callback) error {
	return r.prepareRW(opWrite, fd, buf, off, flags, cb)
}

func (r *Ring) prepareRW(opcode uint8, fd int, buf []byte, off int64, flags SQEFlags, cb Callback) error {
	if len(buf) > rwBytesMax {
		return fmt.Errorf("%s of %d bytes exceeds %d: %w", opNames[opcode], len(buf), rwBytesMax, ErrConfig)
	}
	e, op, err := r.prepare(opcode, fd, flags, cb)
	if err != nil {
		return err
	}
	op.buf = buf
	e.addr = addr(buf)
	e.len = uint32(len(buf))
	e.off = uint64(off)
	return nil
}

// PrepareReadv queues preadv(fd, iovs, off).
func (r *Ring) PrepareReadv(fd int, iovs []unix.Iovec, off int64, flags SQEFlags, cb Callback) error {
	return r.prepareVector(opReadv, fd, iovs, off, flags, cb)
}

// PrepareWritev queues pwritev(fd, iovs, off). The kernel may write fewer
// bytes than asked; WritevFull resubmits the rest.
func (r *Ring) PrepareWritev(fd int, iovs []unix.Iovec, off int64, flags SQEFlags, cb Callback) error {
	return r.prepareVector(opWritev, fd, iovs, off, flags, cb)
}

func (r *Ring) prepareVector(opcode uint8, fd int, iovs []unix.Iovec, off int64, flags SQEFlags, cb Callback) error {
	if len(iovs) == 0 || len(iovs) > IovecsMax {
		return fmt.Errorf("%s of %d buffers not in [1, %d]: %w", opNames[opcode], len(iovs), IovecsMax, ErrConfig)
	}
	e, op, err := r.prepare(opcode, fd, flags, cb)
	if err != nil {
		return err
	}
	op.iovs = iovs
	e.addr = iovecAddr(iovs)
	e.len = uint32(len(iovs))
	e.off = uint64(off)
	return nil
}

// PrepareFsync queues fsync(fd), or fdatasync(fd) when dataOnly is set.
func (r *Ring) PrepareFsync(fd int, dataOnly bool, flags SQEFlags, cb Callback) error {
	e, _, err := r.prepare(opFsync, fd, flags, cb)
	if err != nil {
		return err
	}
	if dataOnly {
		e.opFlags = fsyncDataSync
	}
	return nil
}

// PrepareOpenat queues openat(dirfd, path, openFlags, mode); the result is
// the new descriptor. Use unix.AT_FDCWD as dirfd for paths relative to the
// working directory. Add unix.O_CLOEXEC to openFlags as with any open.
func (r *Ring) PrepareOpenat(dirfd int, path string, openFlags int, mode uint32, flags SQEFlags, cb Callback) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return fmt.Errorf("openat %q: %w", path, err)
	}
	e, op, err := r.prepare(opOpenat, dirfd, flags, cb)
	if err != nil {
		return err
	}
	op.path = p
	e.addr = pointerAddr(p)
	e.len = mode
	e.opFlags = uint32(openFlags)
	return nil
}

// PrepareClose queues close(fd).
func (r *Ring) PrepareClose(fd int, flags SQEFlags, cb Callback) error {
	_, _, err := r.prepare(opClose, fd, flags, cb)
	return err
}

// PrepareFallocate queues fallocate(fd, mode, off, length); mode 0
// allocates and extends the file, unix.FALLOC_FL_KEEP_SIZE allocates
// without changing its size.
func (r *Ring) PrepareFallocate(fd int, mode uint32, off, length int64, flags SQEFlags, cb Callback) error {
	if off < 0 || length <= 0 {
		return fmt.Errorf("fallocate offset %d length %d: %w", off, length, ErrConfig)
	}
	e, _, err := r.prepare(opFallocate, fd, flags, cb)
	if err != nil {
		return err
	}
	// The fallocate SQE carries the length in addr and the mode in len.
	e.off = uint64(off)
	e.addr = uint64(length)
	e.len = mode
	return nil
}

// Iovecs fills dst (reusing its storage) with one iovec per non-empty
// buffer and returns it. The iovecs point into the buffers, so holding the
// iovecs keeps the buffers alive.
func Iovecs(dst []unix.Iovec, buffers [][]byte) []unix.Iovec {
	dst = dst[:0]
	for _, b := range buffers {
		if len(b) == 0 {
			continue
		}
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		dst = append(dst, v)
	}
	return dst
}

// AdvanceIovecs drops the first n bytes from iovs, in place, after a
// partial vectored transfer of n bytes, and returns the remainder.
func AdvanceIovecs(iovs []unix.Iovec, n int) []unix.Iovec {
	for n > 0 && len(iovs) > 0 {
		l := int(iovs[0].Len)
		if n < l {
			iovs[0] = advanceIovec(iovs[0], n)
			return iovs
		}
		n -= l
		iovs = iovs[1:]
	}
	return iovs
}

// IovecsLen is the total byte count of iovs.
func IovecsLen(iovs []unix.Iovec) int {
	total := 0
	for i := range iovs {
		total += int(iovs[i].Len)
	}
	return total
}
