//go:build linux

package storage

import (
	"math/bits"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iovec is the kernel's struct iovec.
type iovec = unix.Iovec

// pwritev writes buffers at off with one pwritev(2), building the iovecs
// in o.iovs so that a write allocates nothing (unix.Pwritev allocates a
// fresh list on every call).
func (o *osFile) pwritev(buffers [][]byte, off int64) (int, error) {
	o.iovs = o.iovs[:0]
	for _, b := range buffers {
		if len(b) == 0 {
			continue
		}
		v := iovec{Base: &b[0]}
		v.SetLen(len(b))
		o.iovs = append(o.iovs, v)
	}
	if len(o.iovs) == 0 {
		return 0, nil
	}
	// The offset as the kernel's pos_l/pos_h pair (pos_h is 0 on 64-bit).
	lo, hi := uintptr(off), uintptr(uint64(off)>>(bits.UintSize-1)>>1)
	n, _, errno := syscall.Syscall6(unix.SYS_PWRITEV, o.f.Fd(), uintptr(unsafe.Pointer(&o.iovs[0])), uintptr(len(o.iovs)), lo, hi, 0)
	runtime.KeepAlive(buffers)
	clear(o.iovs) // keep no reference to the caller's buffers
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// dataSync is fdatasync(2).
func (o *osFile) dataSync() error {
	for {
		err := unix.Fdatasync(int(o.f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// writeVector writes buffers at off with pwritev(2), resubmitting partial
// writes until everything is written or an error occurs.
func (o *osFile) writeVector(buffers [][]byte, off int64) (int, error) {
	total := 0
	for {
		for len(buffers) > 0 && len(buffers[0]) == 0 {
			buffers = buffers[1:]
		}
		if len(buffers) == 0 {
			return total, nil
		}
		n, err := o.pwritev(buffers, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		if n == 0 {
			return total, unix.EIO
		}
		total += n
		off += int64(n)
		for n > 0 && len(buffers) > 0 {
			if n >= len(buffers[0]) {
				n -= len(buffers[0])
				buffers = buffers[1:]
				continue
			}
			// A partial buffer: write its remainder on its own, then go on.
			rest := buffers[0][n:]
			m, err := o.f.WriteAt(rest, off)
			total += m
			off += int64(m)
			if err != nil {
				return total, err
			}
			buffers = buffers[1:]
			n = 0
		}
	}
}

// Preallocate reserves blocks for [off, off+length) without changing the
// file size (fallocate with FALLOC_FL_KEEP_SIZE).
func (o *osFile) Preallocate(off, length int64) error {
	for {
		err := unix.Fallocate(int(o.f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, length)
		if err != unix.EINTR {
			return err
		}
	}
}
