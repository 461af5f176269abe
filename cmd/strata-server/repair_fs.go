package main

import (
	"errors"

	"github.com/stratabroker/strata/storage"
)

// dryRunFS is the file system of `repair` without --confirm: reads go to
// the disk, every change (writes, truncates, creates, renames, removes) is
// dropped, so recovery code can run over real files to say what it would
// do without doing it. A file a change would create reads as empty.
type dryRunFS struct {
	disk storage.FS
}

// errDryRunMissing is returned when a dry run opens a file that does not
// exist read-only.
var errDryRunMissing = errors.New("dry run: file does not exist")

func (d dryRunFS) open(path string) (storage.File, error) {
	f, err := d.disk.Open(path)
	if errors.Is(err, storage.ErrNotExist) {
		return &dryRunFile{}, nil
	}
	if err != nil {
		return nil, err
	}
	size, err := f.Size()
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return &dryRunFile{disk: f, size: size}, nil
}

func (d dryRunFS) Create(string) (storage.File, error)             { return &dryRunFile{}, nil }
func (d dryRunFS) OpenReadWrite(path string) (storage.File, error) { return d.open(path) }
func (d dryRunFS) Open(path string) (storage.File, error) {
	f, err := d.disk.Open(path)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, errors.Join(errDryRunMissing, err)
	}
	return f, err
}
func (d dryRunFS) MkdirAll(string) error                           { return nil }
func (d dryRunFS) Remove(string) error                             { return nil }
func (d dryRunFS) RemoveAll(string) error                          { return nil }
func (d dryRunFS) Rename(string, string) error                     { return nil }
func (d dryRunFS) ReadDir(path string) ([]storage.DirEntry, error) { return d.disk.ReadDir(path) }
func (d dryRunFS) Stat(path string) (storage.FileInfo, error)      { return d.disk.Stat(path) }
func (d dryRunFS) SyncDir(string) error                            { return nil }

// dryRunFile reads a disk file (or nothing) and drops every change, only
// keeping track of the size the changes would give it.
type dryRunFile struct {
	disk storage.File // nil for a file the dry run would create
	size int64
}

func (f *dryRunFile) ReadAt(p []byte, off int64) (int, error) {
	if f.disk == nil {
		return 0, errDryRunMissing
	}
	return f.disk.ReadAt(p, off)
}

func (f *dryRunFile) WriteAt(p []byte, off int64) (int, error) {
	f.size = max(f.size, off+int64(len(p)))
	return len(p), nil
}

func (f *dryRunFile) Append(p []byte) (int, error) {
	f.size += int64(len(p))
	return len(p), nil
}

func (f *dryRunFile) AppendVector(buffers [][]byte) (int, error) {
	n := 0
	for _, b := range buffers {
		n += len(b)
	}
	f.size += int64(n)
	return n, nil
}

func (f *dryRunFile) Truncate(size int64) error { f.size = size; return nil }
func (f *dryRunFile) Sync() error               { return nil }
func (f *dryRunFile) Size() (int64, error)      { return f.size, nil }

func (f *dryRunFile) Close() error {
	if f.disk == nil {
		return nil
	}
	return f.disk.Close()
}
