// Package storage holds Strata's on-disk formats and the code that reads
// and writes them: partition logs (segments of stamped batches with sparse
// indexes), partition superblocks, consumer offset files and the metadata
// journal with its snapshot and superblock (DESIGN.md decisions 7, 8, 10;
// PROTOCOL.md §6.8).
//
// Every file access goes through the FS and File interfaces, so the same
// code runs on the real disk (OSFS) and on the in-memory, fault-injecting
// twin in storage/memfs. Nothing here panics on file contents: damage is
// either repaired and reported (a torn tail) or returned as an error that
// names the file and byte position (corruption that cannot be repaired
// locally).
//
// None of the types here is safe for concurrent use; each partition's
// storage belongs to the one goroutine (shard) that owns the partition.
package storage

import (
	"errors"
	"fmt"
	"io/fs"
)

// ErrNotExist is returned (wrapped) by an FS for a missing file or
// directory. OSFS returns the os errors, which also match it.
var ErrNotExist = fs.ErrNotExist

// FS is the file system the storage code runs on. Paths are slash
// separated; implementations are OSFS (production) and memfs.FS (tests and
// simulation). Namespace changes (create, rename, remove) become durable
// only after SyncDir of their directory.
type FS interface {
	// Create opens path for reading and writing, creating it empty or
	// truncating it.
	Create(path string) (File, error)
	// OpenReadWrite opens path for reading and writing, creating it if
	// missing and keeping its contents.
	OpenReadWrite(path string) (File, error)
	// Open opens an existing path read-only.
	Open(path string) (File, error)
	// MkdirAll creates path and any missing parents.
	MkdirAll(path string) error
	// Remove deletes one file or empty directory.
	Remove(path string) error
	// RemoveAll deletes path and everything under it; a missing path is
	// not an error.
	RemoveAll(path string) error
	// Rename atomically replaces newPath with oldPath; a directory moves
	// with everything under it, to a newPath that does not exist.
	Rename(oldPath, newPath string) error
	// ReadDir returns the names of the entries in path, sorted.
	ReadDir(path string) ([]DirEntry, error)
	// Stat describes path.
	Stat(path string) (FileInfo, error)
	// SyncDir makes the namespace changes inside directory path durable.
	SyncDir(path string) error
}

// File is an open file. Writes land in a volatile cache until Sync.
type File interface {
	// ReadAt reads len(p) bytes at off; fewer bytes come with an error
	// (io.EOF at the end of the file).
	ReadAt(p []byte, off int64) (int, error)
	// WriteAt writes p at off, extending the file as needed.
	WriteAt(p []byte, off int64) (int, error)
	// Append writes p at the end of the file and returns the bytes written.
	Append(p []byte) (int, error)
	// AppendVector writes the buffers back to back at the end of the file
	// in as few system calls as possible.
	AppendVector(buffers [][]byte) (int, error)
	// Truncate sets the file size.
	Truncate(size int64) error
	// Sync makes the file's data durable (fdatasync).
	Sync() error
	// Size returns the current size, unsynced writes included.
	Size() (int64, error)
	// Close releases the file. It does not sync.
	Close() error
}

// Preallocator is implemented by files that can reserve disk blocks for
// a range without changing the file's size (fallocate with
// FALLOC_FL_KEEP_SIZE), so later appends do not pay first-touch costs.
type Preallocator interface {
	Preallocate(off, length int64) error
}

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	Name  string
	IsDir bool
}

// FileInfo describes a file or directory.
type FileInfo struct {
	Size  int64
	IsDir bool
}

// Exists reports whether path exists on fsys.
func Exists(fsys FS, path string) (bool, error) {
	_, err := fsys.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	return false, err
}

// readFull reads the whole file at path.
func readFull(fsys FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	buf, err := readAll(f)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return buf, f.Close()
}

// writeFull creates (or truncates) the file at path, writes data at its
// start, syncs it when sync is set, and closes it. Errors name path.
func writeFull(fsys FS, path string, data []byte, sync bool) error {
	f, err := fsys.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", path, err), f.Close())
	}
	if sync {
		if err := f.Sync(); err != nil {
			return errors.Join(fmt.Errorf("sync %s: %w", path, err), f.Close())
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}
