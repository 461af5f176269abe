package server

import (
	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/storage"
)

// onShardFS is a storage.FS whose every operation, and every operation on
// the files it opens, runs as a task on one shard, through that shard's IO
// engine. The metadata journal uses it so that its IO happens on shard 0
// (the metadata shard) whichever goroutine holds the metadata writer's
// lock. Callers are goroutines, never tasks of the same shard (a shard
// cannot wait for itself).
type onShardFS struct {
	sh *shard.Shard
	fs storage.FS
}

var _ storage.FS = onShardFS{}

// do runs fn on the shard and returns its error (or the shard's, when it
// has stopped).
func (f onShardFS) do(fn func() error) error {
	var err error
	if callErr := f.sh.Call(func() { err = fn() }); callErr != nil {
		return callErr
	}
	return err
}

// open runs an open on the shard and wraps the file.
func (f onShardFS) open(open func() (storage.File, error)) (storage.File, error) {
	var file storage.File
	err := f.do(func() (err error) {
		file, err = open()
		return err
	})
	if err != nil {
		return nil, err
	}
	return onShardFile{sh: f.sh, f: file}, nil
}

// Create implements storage.FS.
func (f onShardFS) Create(path string) (storage.File, error) {
	return f.open(func() (storage.File, error) { return f.fs.Create(path) })
}

// OpenReadWrite implements storage.FS.
func (f onShardFS) OpenReadWrite(path string) (storage.File, error) {
	return f.open(func() (storage.File, error) { return f.fs.OpenReadWrite(path) })
}

// Open implements storage.FS.
func (f onShardFS) Open(path string) (storage.File, error) {
	return f.open(func() (storage.File, error) { return f.fs.Open(path) })
}

// MkdirAll implements storage.FS.
func (f onShardFS) MkdirAll(path string) error {
	return f.do(func() error { return f.fs.MkdirAll(path) })
}

// Remove implements storage.FS.
func (f onShardFS) Remove(path string) error { return f.do(func() error { return f.fs.Remove(path) }) }

// RemoveAll implements storage.FS.
func (f onShardFS) RemoveAll(path string) error {
	return f.do(func() error { return f.fs.RemoveAll(path) })
}

// Rename implements storage.FS.
func (f onShardFS) Rename(oldPath, newPath string) error {
	return f.do(func() error { return f.fs.Rename(oldPath, newPath) })
}

// ReadDir implements storage.FS.
func (f onShardFS) ReadDir(path string) (entries []storage.DirEntry, err error) {
	err = f.do(func() (err error) {
		entries, err = f.fs.ReadDir(path)
		return err
	})
	return entries, err
}

// Stat implements storage.FS.
func (f onShardFS) Stat(path string) (info storage.FileInfo, err error) {
	err = f.do(func() (err error) {
		info, err = f.fs.Stat(path)
		return err
	})
	return info, err
}

// SyncDir implements storage.FS.
func (f onShardFS) SyncDir(path string) error {
	return f.do(func() error { return f.fs.SyncDir(path) })
}

// onShardFile is a file of an onShardFS: its operations run on the shard.
type onShardFile struct {
	sh *shard.Shard
	f  storage.File
}

var _ storage.File = onShardFile{}

func (f onShardFile) transfer(fn func() (int, error)) (n int, err error) {
	if callErr := f.sh.Call(func() { n, err = fn() }); callErr != nil {
		return 0, callErr
	}
	return n, err
}

func (f onShardFile) do(fn func() error) error {
	return onShardFS{sh: f.sh}.do(fn)
}

// ReadAt implements storage.File.
func (f onShardFile) ReadAt(p []byte, off int64) (int, error) {
	return f.transfer(func() (int, error) { return f.f.ReadAt(p, off) })
}

// WriteAt implements storage.File.
func (f onShardFile) WriteAt(p []byte, off int64) (int, error) {
	return f.transfer(func() (int, error) { return f.f.WriteAt(p, off) })
}

// Append implements storage.File.
func (f onShardFile) Append(p []byte) (int, error) {
	return f.transfer(func() (int, error) { return f.f.Append(p) })
}

// AppendVector implements storage.File.
func (f onShardFile) AppendVector(buffers [][]byte) (int, error) {
	return f.transfer(func() (int, error) { return f.f.AppendVector(buffers) })
}

// Truncate implements storage.File.
func (f onShardFile) Truncate(size int64) error {
	return f.do(func() error { return f.f.Truncate(size) })
}

// Sync implements storage.File.
func (f onShardFile) Sync() error { return f.do(f.f.Sync) }

// Size implements storage.File.
func (f onShardFile) Size() (size int64, err error) {
	err = f.do(func() (err error) {
		size, err = f.f.Size()
		return err
	})
	return size, err
}

// Close implements storage.File.
func (f onShardFile) Close() error { return f.do(f.f.Close) }
