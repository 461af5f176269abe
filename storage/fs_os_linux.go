//go:build linux

package storage

import (
	"golang.org/x/sys/unix"
)

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
		n, err := unix.Pwritev(int(o.f.Fd()), buffers, off)
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
