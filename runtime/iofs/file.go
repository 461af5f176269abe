package iofs

import (
	"fmt"
	"io"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

// transferBytesMax is the most bytes one read or write request asks for;
// larger calls are split (the kernel caps a transfer near 2 GiB anyway).
const transferBytesMax = 1 << 30

// File is a storage.File over a descriptor the ring opened; its reads,
// writes, appends, syncs, preallocation and close go through the ring.
// Like every storage.File it has one owner at a time.
type File struct {
	fs   *FS
	fd   int // -1 once closed
	path string
	size int64 // Invariant: the file's size (unsynced writes included)
	iovs []unix.Iovec
}

var _ storage.File = (*File)(nil)

func (f *File) pathError(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.path, Err: err}
}

// pathErrorAt is pathError for a path captured earlier (the file may be
// closed by the time an asynchronous operation finishes).
func (f *File) pathErrorAt(path, op string, err error) error {
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// transfer runs one read or write request of at most transferBytesMax.
func (f *File) transfer(kind opKind, p []byte, off int64) (int, error) {
	e := f.fs.engine
	req := e.get()
	req.kind, req.fd, req.buf, req.off = kind, f.fd, p[:min(len(p), transferBytesMax)], off
	n, err := e.do(req)
	e.put(req)
	return int(n), err
}

// ReadAt implements storage.File: it reads until p is full, returning
// io.EOF with the bytes read if the file ends first.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if f.fd < 0 {
		return 0, f.pathError("read", ErrClosed)
	}
	done := 0
	for done < len(p) {
		n, err := f.transfer(kindRead, p[done:], off+int64(done))
		if err != nil {
			return done, f.pathError("read", err)
		}
		if n == 0 {
			return done, io.EOF
		}
		done += n
	}
	return done, nil
}

// WriteAt implements storage.File, resubmitting partial writes.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if f.fd < 0 {
		return 0, f.pathError("write", ErrClosed)
	}
	done := 0
	for done < len(p) {
		n, err := f.transfer(kindWrite, p[done:], off+int64(done))
		f.grow(off + int64(done+n))
		if err != nil {
			return done, f.pathError("write", err)
		}
		if n == 0 {
			return done, f.pathError("write", io.ErrShortWrite)
		}
		done += n
	}
	return done, nil
}

func (f *File) grow(end int64) {
	if end > f.size {
		f.size = end
	}
}

// Append implements storage.File.
func (f *File) Append(p []byte) (int, error) { return f.WriteAt(p, f.size) }

// AppendVector implements storage.File: one writev per chunk of at most
// uring.IovecsMax buffers, the rest of a partial write resubmitted.
func (f *File) AppendVector(buffers [][]byte) (int, error) {
	if f.fd < 0 {
		return 0, f.pathError("writev", ErrClosed)
	}
	f.iovs = uring.Iovecs(f.iovs, buffers)
	// Drop the references to the caller's buffers when done.
	defer clear(f.iovs[:cap(f.iovs)])
	iovs := f.iovs
	total := 0
	e := f.fs.engine
	for len(iovs) > 0 {
		chunk := iovs[:min(len(iovs), uring.IovecsMax)]
		req := e.get()
		req.kind, req.fd, req.iovs, req.off = kindWritev, f.fd, chunk, f.size
		n, err := e.do(req)
		e.put(req)
		f.size += int64(n)
		total += int(n)
		if err != nil {
			return total, f.pathError("writev", err)
		}
		if n == 0 {
			return total, f.pathError("writev", io.ErrShortWrite)
		}
		iovs = uring.AdvanceIovecs(iovs, int(n))
	}
	return total, nil
}

// Truncate implements storage.File (ftruncate, a plain system call).
func (f *File) Truncate(size int64) error {
	if f.fd < 0 {
		return f.pathError("truncate", ErrClosed)
	}
	if err := unix.Ftruncate(f.fd, size); err != nil {
		return f.pathError("truncate", err)
	}
	f.size = size
	return nil
}

// Sync implements storage.File with fdatasync through the ring.
func (f *File) Sync() error { return f.simple(kindDataSync, "fdatasync", 0, 0, 0) }

// Preallocate reserves disk blocks for [off, off+length) without changing
// the file's size (fallocate with FALLOC_FL_KEEP_SIZE), so later appends
// there do not pay for block allocation. It is not part of storage.File;
// reach it with a type assertion.
func (f *File) Preallocate(off, length int64) error {
	if off < 0 || length <= 0 {
		return f.pathError("fallocate", fmt.Errorf("offset %d length %d: %w", off, length, uring.ErrConfig))
	}
	return f.simple(kindFallocate, "fallocate", unix.FALLOC_FL_KEEP_SIZE, off, length)
}

// simple runs a request whose only result is success or an errno.
func (f *File) simple(kind opKind, op string, mode uint32, off, length int64) error {
	if f.fd < 0 {
		return f.pathError(op, ErrClosed)
	}
	e := f.fs.engine
	req := e.get()
	req.kind, req.fd, req.mode, req.off, req.length = kind, f.fd, mode, off, length
	_, err := e.do(req)
	e.put(req)
	if err != nil {
		return f.pathError(op, err)
	}
	return nil
}

// Size implements storage.File.
func (f *File) Size() (int64, error) { return f.size, nil }

// Close implements storage.File; it closes the descriptor through the
// ring and does not sync.
func (f *File) Close() error {
	err := f.simple(kindClose, "close", 0, 0, 0)
	f.fd = -1
	return err
}
