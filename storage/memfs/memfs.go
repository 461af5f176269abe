// Package memfs is an in-memory storage.FS with fault injection, the twin
// of storage.OSFS for tests and the simulator.
//
// Each file keeps two images: the durable one (what survives a power loss)
// and the current one (durable plus every write and truncate since the
// last Sync). Crash drops the unsynced changes of every file; CrashTorn
// additionally keeps a sector-aligned prefix of the last unsynced write of
// one file, as a power loss in the middle of a write would.
//
// File names (create, rename, remove) become durable only when SyncDir
// runs on their directory: a crash restores the names of every directory
// to its last SyncDir, so a created file that was never made durable in
// its directory vanishes, an unsynced rename is undone and an unsynced
// remove is revived. Directories themselves (MkdirAll) are durable at
// once. Read and write errors can be injected. Handles opened before a
// crash fail with ErrStaleHandle, as the process that held them is gone.
//
// An FS is not safe for concurrent use.
package memfs

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/stratabroker/strata/storage"
)

// SectorSize is the unit at which CrashTorn cuts a torn write.
const SectorSize = 512

// Sentinel errors of the in-memory file system.
var (
	// ErrInjected is returned by reads that hit an injected fault.
	ErrInjected = errors.New("memfs: injected read error")
	// ErrInjectedWrite is returned by writes, truncates and syncs of a
	// path with an injected write fault.
	ErrInjectedWrite = errors.New("memfs: injected write error")
	// ErrStaleHandle is returned by a handle opened before a crash.
	ErrStaleHandle = errors.New("memfs: file handle from before a crash")
	// ErrReadOnly is returned when writing through a read-only handle.
	ErrReadOnly = errors.New("memfs: file opened read-only")
	// ErrExist is returned when a path exists with the wrong kind.
	ErrExist = errors.New("memfs: path exists")
)

// change is one unsynced write or truncate.
type change struct {
	truncate bool
	offset   int64 // write position, or the new size of a truncate
	data     []byte
}

// node is one file. Invariant: data = durable with pending applied.
type node struct {
	durable []byte
	data    []byte
	pending []change
}

// readFault fails reads of path overlapping [offset, offset+length).
type readFault struct {
	path   string
	offset int64
	length int64
}

// FS is the in-memory file system. The zero value is not ready; use New.
type FS struct {
	files map[string]*node
	// durableNames is the namespace a crash restores: each directory's
	// entries as of its last SyncDir.
	durableNames map[string]*node
	dirs         map[string]bool
	faults       []readFault
	writeFault   map[string]bool
	generation   uint64 // bumped by every crash
	syncs        int
}

var _ storage.FS = (*FS)(nil)

// New returns an empty file system holding only the root directory.
func New() *FS {
	return &FS{files: map[string]*node{}, durableNames: map[string]*node{}, dirs: map[string]bool{"/": true, ".": true}}
}

func clean(p string) string { return path.Clean(p) }

func (m *FS) parentExists(p string) bool { return m.dirs[path.Dir(p)] }

func (m *FS) open(p string, create, truncate, readOnly bool) (storage.File, error) {
	p = clean(p)
	if m.dirs[p] {
		return nil, fmt.Errorf("open %s: is a directory: %w", p, ErrExist)
	}
	n, ok := m.files[p]
	if !ok {
		if !create {
			return nil, fmt.Errorf("open %s: %w", p, storage.ErrNotExist)
		}
		if !m.parentExists(p) {
			return nil, fmt.Errorf("create %s: parent missing: %w", p, storage.ErrNotExist)
		}
		n = &node{}
		m.files[p] = n
	}
	f := &file{fs: m, node: n, path: p, generation: m.generation, readOnly: readOnly}
	if truncate {
		if err := f.Truncate(0); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Create implements storage.FS.
func (m *FS) Create(p string) (storage.File, error) { return m.open(p, true, true, false) }

// OpenReadWrite implements storage.FS.
func (m *FS) OpenReadWrite(p string) (storage.File, error) { return m.open(p, true, false, false) }

// Open implements storage.FS.
func (m *FS) Open(p string) (storage.File, error) { return m.open(p, false, false, true) }

// MkdirAll implements storage.FS.
func (m *FS) MkdirAll(p string) error {
	p = clean(p)
	for q := p; !m.dirs[q]; q = path.Dir(q) {
		if _, isFile := m.files[q]; isFile {
			return fmt.Errorf("mkdir %s: %s is a file: %w", p, q, ErrExist)
		}
		m.dirs[q] = true
	}
	return nil
}

// Remove implements storage.FS.
func (m *FS) Remove(p string) error {
	p = clean(p)
	if _, ok := m.files[p]; ok {
		delete(m.files, p)
		return nil
	}
	if m.dirs[p] {
		prefix := p + "/"
		for q := range m.files {
			if strings.HasPrefix(q, prefix) {
				return fmt.Errorf("remove %s: directory not empty: %w", p, ErrExist)
			}
		}
		for q := range m.dirs {
			if strings.HasPrefix(q, prefix) {
				return fmt.Errorf("remove %s: directory not empty: %w", p, ErrExist)
			}
		}
		delete(m.dirs, p)
		return nil
	}
	return fmt.Errorf("remove %s: %w", p, storage.ErrNotExist)
}

// RemoveAll implements storage.FS.
func (m *FS) RemoveAll(p string) error {
	p = clean(p)
	prefix := p + "/"
	for q := range m.files {
		if q == p || strings.HasPrefix(q, prefix) {
			delete(m.files, q)
		}
	}
	for q := range m.dirs {
		if q == p || strings.HasPrefix(q, prefix) {
			delete(m.dirs, q)
		}
	}
	return nil
}

// Rename implements storage.FS: a file, or a directory with everything
// under it (see renameDir).
func (m *FS) Rename(oldPath, newPath string) error {
	oldPath, newPath = clean(oldPath), clean(newPath)
	if m.dirs[oldPath] {
		return m.renameDir(oldPath, newPath)
	}
	n, ok := m.files[oldPath]
	if !ok {
		return fmt.Errorf("rename %s: %w", oldPath, storage.ErrNotExist)
	}
	if !m.parentExists(newPath) {
		return fmt.Errorf("rename to %s: parent missing: %w", newPath, storage.ErrNotExist)
	}
	if m.dirs[newPath] {
		return fmt.Errorf("rename to %s: is a directory: %w", newPath, ErrExist)
	}
	delete(m.files, oldPath)
	m.files[newPath] = n
	return nil
}

// renameDir moves directory oldPath and everything under it to newPath,
// which must not exist. Like MkdirAll, a directory rename is durable at
// once: the files under it keep their durable names, at the new path.
func (m *FS) renameDir(oldPath, newPath string) error {
	if newPath == oldPath || strings.HasPrefix(newPath, oldPath+"/") {
		return fmt.Errorf("rename %s to %s: inside itself: %w", oldPath, newPath, storage.ErrInvalidArgument)
	}
	if !m.parentExists(newPath) {
		return fmt.Errorf("rename to %s: parent missing: %w", newPath, storage.ErrNotExist)
	}
	if _, isFile := m.files[newPath]; isFile || m.dirs[newPath] {
		return fmt.Errorf("rename to %s: %w", newPath, ErrExist)
	}
	moved := func(q string) (string, bool) {
		if q == oldPath {
			return newPath, true
		}
		if strings.HasPrefix(q, oldPath+"/") {
			return newPath + q[len(oldPath):], true
		}
		return "", false
	}
	var dirs []string
	for q := range m.dirs {
		if to, ok := moved(q); ok {
			delete(m.dirs, q)
			dirs = append(dirs, to)
		}
	}
	for _, q := range dirs {
		m.dirs[q] = true
	}
	for _, names := range []map[string]*node{m.files, m.durableNames} {
		renamed := map[string]*node{}
		for q, n := range names {
			if to, ok := moved(q); ok {
				delete(names, q)
				renamed[to] = n
			}
		}
		for q, n := range renamed {
			names[q] = n
		}
	}
	return nil
}

// ReadDir implements storage.FS.
func (m *FS) ReadDir(p string) ([]storage.DirEntry, error) {
	p = clean(p)
	if !m.dirs[p] {
		return nil, fmt.Errorf("readdir %s: %w", p, storage.ErrNotExist)
	}
	var out []storage.DirEntry
	for q := range m.files {
		if path.Dir(q) == p {
			out = append(out, storage.DirEntry{Name: path.Base(q)})
		}
	}
	for q := range m.dirs {
		if q != p && path.Dir(q) == p {
			out = append(out, storage.DirEntry{Name: path.Base(q), IsDir: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Stat implements storage.FS.
func (m *FS) Stat(p string) (storage.FileInfo, error) {
	p = clean(p)
	if n, ok := m.files[p]; ok {
		return storage.FileInfo{Size: int64(len(n.data))}, nil
	}
	if m.dirs[p] {
		return storage.FileInfo{IsDir: true}, nil
	}
	return storage.FileInfo{}, fmt.Errorf("stat %s: %w", p, storage.ErrNotExist)
}

// SyncDir implements storage.FS: the names in directory p become durable.
func (m *FS) SyncDir(p string) error {
	p = clean(p)
	if !m.dirs[p] {
		return fmt.Errorf("syncdir %s: %w", p, storage.ErrNotExist)
	}
	for q := range m.durableNames {
		if path.Dir(q) == p {
			delete(m.durableNames, q)
		}
	}
	for q, n := range m.files {
		if path.Dir(q) == p {
			m.durableNames[q] = n
		}
	}
	return nil
}

// Syncs returns how many file syncs succeeded so far.
func (m *FS) Syncs() int { return m.syncs }

// Crash simulates a power loss: every file loses its unsynced writes and
// truncates, and every open handle becomes stale.
func (m *FS) Crash() {
	m.files = make(map[string]*node, len(m.durableNames))
	for q, n := range m.durableNames {
		m.files[q] = n
		for d := path.Dir(q); !m.dirs[d]; d = path.Dir(d) {
			m.dirs[d] = true
		}
	}
	for _, n := range m.files {
		n.data = append([]byte(nil), n.durable...)
		n.pending = nil
	}
	m.generation++
}

// CrashTorn is Crash, except that the file at p keeps all its unsynced
// changes but the last, and of the last (a write) only its first keepBytes
// rounded down to a SectorSize boundary of the file. (If p's name is not
// durable the file is gone anyway.)
func (m *FS) CrashTorn(p string, keepBytes int64) {
	n, ok := m.files[clean(p)]
	var keep []change
	if ok && len(n.pending) > 0 {
		keep = n.pending
		last := keep[len(keep)-1]
		keep = keep[: len(keep)-1 : len(keep)-1]
		if !last.truncate {
			end := last.offset + min(keepBytes, int64(len(last.data)))
			end -= end % SectorSize
			if end > last.offset {
				keep = append(keep, change{offset: last.offset, data: last.data[:end-last.offset]})
			}
		}
	}
	m.Crash()
	if ok && m.files[clean(p)] == n {
		for _, c := range keep {
			n.data = apply(n.data, c)
		}
		n.durable = append([]byte(nil), n.data...)
	}
}

// InjectReadError makes reads of p overlapping [offset, offset+length) fail
// with ErrInjected until ClearFaults.
func (m *FS) InjectReadError(p string, offset, length int64) {
	m.faults = append(m.faults, readFault{path: clean(p), offset: offset, length: length})
}

// InjectWriteError makes every write, truncate and sync of p fail with
// ErrInjectedWrite (changing nothing) until ClearFaults.
func (m *FS) InjectWriteError(p string) {
	if m.writeFault == nil {
		m.writeFault = map[string]bool{}
	}
	m.writeFault[clean(p)] = true
}

// ClearFaults removes every injected fault.
func (m *FS) ClearFaults() { m.faults, m.writeFault = nil, nil }

// Corrupt XORs mask into the byte at offset of p, durably, as latent media
// corruption would. It returns false when p has no such byte.
func (m *FS) Corrupt(p string, offset int64, mask byte) bool {
	n, ok := m.files[clean(p)]
	if !ok || offset < 0 || offset >= int64(len(n.data)) {
		return false
	}
	n.data[offset] ^= mask
	if offset < int64(len(n.durable)) {
		n.durable[offset] ^= mask
	}
	return true
}

// ReadFile returns a copy of the current contents of p.
func (m *FS) ReadFile(p string) ([]byte, bool) {
	n, ok := m.files[clean(p)]
	if !ok {
		return nil, false
	}
	return append([]byte(nil), n.data...), true
}

func apply(data []byte, c change) []byte {
	if c.truncate {
		if c.offset <= int64(len(data)) {
			return data[:c.offset]
		}
		return append(data, make([]byte, c.offset-int64(len(data)))...)
	}
	if end := c.offset + int64(len(c.data)); end > int64(len(data)) {
		data = append(data, make([]byte, end-int64(len(data)))...)
	}
	copy(data[c.offset:], c.data)
	return data
}

// file is a handle on a node.
type file struct {
	fs         *FS
	node       *node
	path       string
	generation uint64
	readOnly   bool
	closed     bool
}

func (f *file) check(write bool) error {
	if f.closed {
		return fmt.Errorf("%s: %w", f.path, io.ErrClosedPipe)
	}
	if f.generation != f.fs.generation {
		return fmt.Errorf("%s: %w", f.path, ErrStaleHandle)
	}
	if write && f.readOnly {
		return fmt.Errorf("%s: %w", f.path, ErrReadOnly)
	}
	if write && f.fs.writeFault[f.path] {
		return fmt.Errorf("%s: %w", f.path, ErrInjectedWrite)
	}
	return nil
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check(false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset", f.path)
	}
	for _, fault := range f.fs.faults {
		if fault.path == f.path && off < fault.offset+fault.length && fault.offset < off+int64(len(p)) {
			return 0, fmt.Errorf("%s at %d: %w", f.path, off, ErrInjected)
		}
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.check(true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset", f.path)
	}
	c := change{offset: off, data: append([]byte(nil), p...)}
	f.node.pending = append(f.node.pending, c)
	f.node.data = apply(f.node.data, c)
	return len(p), nil
}

func (f *file) Append(p []byte) (int, error) { return f.WriteAt(p, int64(len(f.node.data))) }

func (f *file) AppendVector(buffers [][]byte) (int, error) {
	var joined []byte
	for _, b := range buffers {
		joined = append(joined, b...)
	}
	return f.Append(joined)
}

func (f *file) Truncate(size int64) error {
	if err := f.check(true); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("%s: negative size", f.path)
	}
	c := change{truncate: true, offset: size}
	f.node.pending = append(f.node.pending, c)
	f.node.data = apply(f.node.data, c)
	return nil
}

func (f *file) Sync() error {
	if err := f.check(false); err != nil {
		return err
	}
	if f.fs.writeFault[f.path] {
		return fmt.Errorf("sync %s: %w", f.path, ErrInjectedWrite)
	}
	f.node.durable = append(f.node.durable[:0], f.node.data...)
	f.node.pending = nil
	f.fs.syncs++
	return nil
}

func (f *file) Size() (int64, error) {
	if err := f.check(false); err != nil {
		return 0, err
	}
	return int64(len(f.node.data)), nil
}

func (f *file) Close() error {
	if f.closed {
		return fmt.Errorf("%s: %w", f.path, io.ErrClosedPipe)
	}
	f.closed = true
	return nil
}
