package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// iovecBuffersMax bounds the buffers handed to one vectored write
// (DESIGN.md decision 10: chunks of up to 1024 buffers).
const iovecBuffersMax = 1024

// OSFS is the production FS over the os package. Data syncs use fdatasync
// where the platform has it.
type OSFS struct{}

var _ FS = OSFS{}

// Create implements FS.
func (OSFS) Create(path string) (File, error) {
	return openOSFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC)
}

// OpenReadWrite implements FS.
func (OSFS) OpenReadWrite(path string) (File, error) {
	return openOSFile(path, os.O_RDWR|os.O_CREATE)
}

// Open implements FS.
func (OSFS) Open(path string) (File, error) { return openOSFile(path, os.O_RDONLY) }

// MkdirAll implements FS.
func (OSFS) MkdirAll(path string) error { return os.MkdirAll(path, 0o755) }

// Remove implements FS.
func (OSFS) Remove(path string) error { return os.Remove(path) }

// RemoveAll implements FS.
func (OSFS) RemoveAll(path string) error { return os.RemoveAll(path) }

// Rename implements FS.
func (OSFS) Rename(oldPath, newPath string) error { return os.Rename(oldPath, newPath) }

// ReadDir implements FS.
func (OSFS) ReadDir(path string) ([]DirEntry, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, DirEntry{Name: e.Name(), IsDir: e.IsDir()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Stat implements FS.
func (OSFS) Stat(path string) (FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Size: info.Size(), IsDir: info.IsDir()}, nil
}

// SyncDir implements FS by fsyncing the directory.
func (OSFS) SyncDir(path string) error {
	d, err := os.Open(filepath.Clean(path))
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		return errors.Join(fmt.Errorf("sync directory %s: %w", path, err), d.Close())
	}
	return d.Close()
}

// osFile is an os.File that tracks its size so appends are positional
// writes (pwrite) at the end. Invariant: size = the file's size.
type osFile struct {
	f    *os.File
	size int64
	// iovs is the reusable iovec list of vectored writes (Linux).
	iovs []iovec
}

func openOSFile(path string, flag int) (*osFile, error) {
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return &osFile{f: f, size: info.Size()}, nil
}

func (o *osFile) ReadAt(p []byte, off int64) (int, error) { return o.f.ReadAt(p, off) }

func (o *osFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := o.f.WriteAt(p, off)
	if end := off + int64(n); end > o.size {
		o.size = end
	}
	return n, err
}

func (o *osFile) Append(p []byte) (int, error) { return o.WriteAt(p, o.size) }

func (o *osFile) AppendVector(buffers [][]byte) (int, error) {
	total := 0
	for len(buffers) > 0 {
		chunk := buffers[:min(len(buffers), iovecBuffersMax)]
		buffers = buffers[len(chunk):]
		n, err := o.writeVector(chunk, o.size)
		o.size += int64(n)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (o *osFile) Truncate(size int64) error {
	if err := o.f.Truncate(size); err != nil {
		return err
	}
	o.size = size
	return nil
}

func (o *osFile) Sync() error { return o.dataSync() }

func (o *osFile) Size() (int64, error) { return o.size, nil }

func (o *osFile) Close() error { return o.f.Close() }
