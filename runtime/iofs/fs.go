package iofs

import (
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

// fileMode is the permission of files the FS creates (as storage.OSFS).
const fileMode = 0o644

// FS is a storage.FS whose file data goes through io_uring. An FS from New
// is safe for concurrent use and each File it opens has one owner at a
// time; an FS from NewDirect, and every File it opens, belongs to one
// goroutine at a time (see NewDirect).
type FS struct {
	engine engine
	meta   storage.OSFS // namespace operations: plain system calls
}

var _ storage.FS = (*FS)(nil)

// New sets up a ring sized by cfg and its submitter goroutine. Close the
// FS to stop them once every file is closed. The error wraps
// uring.ErrUnavailable when the kernel refuses io_uring.
func New(cfg uring.Config) (*FS, error) {
	e, err := newLoopEngine(cfg)
	if err != nil {
		return nil, err
	}
	return &FS{engine: e}, nil
}

// NewDirect sets up a ring sized by cfg with no goroutine behind it: every
// operation of the FS and of the files it opens is prepared, submitted and
// waited for by the calling goroutine itself (one io_uring_enter, no
// hand-off), as a shard's event loop drives its own ring.
//
// NOT SAFE FOR CONCURRENT USE. Exactly one goroutine at a time (in the
// broker, the tasks of one shard) may call the FS, including Poll and
// Close, and every File it opened; handing it to another goroutine needs a
// happens-before edge (a channel, a shard task). Namespace calls (mkdir,
// rename, stat...) are plain system calls and exempt. Built with
// -tags invariants, two operations overlapping in time panic; release
// builds do not check.
//
// The error wraps uring.ErrUnavailable when the kernel refuses io_uring.
// Close the FS after every file.
func NewDirect(cfg uring.Config) (*FS, error) {
	e, err := newDirectEngine(cfg)
	if err != nil {
		return nil, err
	}
	return &FS{engine: e}, nil
}

// Close waits for operations in flight, then tears down the ring. Calls
// after Close fail with ErrClosed, File.Close included: close every file
// first, or its descriptor stays open until the process exits.
func (f *FS) Close() error { return f.engine.close() }

// Poll makes the FS a shard.Poller: for a NewDirect FS it reaps finished
// operations without blocking and returns how many are still in flight
// (0 between calls, since each operation is waited for in place); for a
// New FS, whose goroutine reaps, it returns 0. On a direct FS it is one
// more operation of the owning goroutine.
func (f *FS) Poll() int { return f.engine.poll() }

// Create implements storage.FS.
func (f *FS) Create(path string) (storage.File, error) {
	return f.open(path, unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC)
}

// OpenReadWrite implements storage.FS.
func (f *FS) OpenReadWrite(path string) (storage.File, error) {
	return f.open(path, unix.O_RDWR|unix.O_CREAT)
}

// Open implements storage.FS.
func (f *FS) Open(path string) (storage.File, error) { return f.open(path, unix.O_RDONLY) }

// open runs openat through the ring and reads the size with fstat.
func (f *FS) open(path string, flags int) (*File, error) {
	req := f.engine.get()
	req.kind, req.path, req.openFlags, req.mode = kindOpen, path, flags|unix.O_CLOEXEC, fileMode
	fd, err := f.engine.do(req)
	f.engine.put(req)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(fd), &st); err != nil {
		_ = unix.Close(int(fd)) // the stat error is the one to report
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return &File{fs: f, fd: int(fd), path: path, size: st.Size}, nil
}

// MkdirAll implements storage.FS.
func (f *FS) MkdirAll(path string) error { return f.meta.MkdirAll(path) }

// Remove implements storage.FS.
func (f *FS) Remove(path string) error { return f.meta.Remove(path) }

// RemoveAll implements storage.FS.
func (f *FS) RemoveAll(path string) error { return f.meta.RemoveAll(path) }

// Rename implements storage.FS.
func (f *FS) Rename(oldPath, newPath string) error { return f.meta.Rename(oldPath, newPath) }

// ReadDir implements storage.FS.
func (f *FS) ReadDir(path string) ([]storage.DirEntry, error) { return f.meta.ReadDir(path) }

// Stat implements storage.FS.
func (f *FS) Stat(path string) (storage.FileInfo, error) { return f.meta.Stat(path) }

// SyncDir implements storage.FS.
func (f *FS) SyncDir(path string) error { return f.meta.SyncDir(path) }
