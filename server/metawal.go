package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/journal"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/vsr"
)

// The metadata group's files (storage/FORMATS.md, "Metadata directory").
//
// The metadata group is a VSR group whose replica keeps every prepare on
// disk (vsr.Persisted: metadata is durable on a single node, a reply only
// after the fsync). Its vsr.Storage zones live in the files the
// architecture seed draws:
//
//   - journal.wal: a header sector; two sectors that hold the superblock
//     copies until the first checkpoint; the WAL header zone (a sector per
//     slot); the WAL prepare zone (a slot of MessageSizeMax per op). It is
//     created at the first boot.
//   - snapshot.bin: a header sector, then the checkpoint zone (two areas,
//     written in turn). It is created by the first checkpoint.
//   - superblock.a and superblock.b: the superblock copies 0 and 1, one
//     sector each, once a checkpoint exists. On a single node, neither
//     snapshot.bin nor the superblock files exist until the first
//     checkpoint: the superblock the replica writes when it formats its
//     storage goes into journal.wal.
//
// A data directory of another format (the entry log of the builds before
// the metadata group: "SMJE" entries, an "SMSN" snapshot, 128-byte "SMSB"
// superblocks) is refused at open, naming the file and its version: there
// are no released users, so there is no migration.

const (
	metaWALFile          = "journal.wal"
	metaSnapshotFile     = "snapshot.bin"
	metaSuperblockA      = "superblock.a"
	metaSuperblockB      = "superblock.b"
	metaWALMagic         = "SMVW"
	metaSnapshotMagic    = "SMVC"
	metaFormatVersion    = 3
	metaHeaderSize       = vsr.SectorSize
	metaWALSuperblocks   = 2 // sectors after the header
	metaSuperblockCopies = vsr.SuperblockCopies
	// The formats of the builds before the metadata group (version 1).
	metaOldEntryMagic      = "SMJE"
	metaOldSnapshotMagic   = "SMSN"
	metaOldSuperblockMagic = "SMSB"
)

// errMetaFormat reports a metadata file this build cannot read.
var errMetaFormat = errors.New("metadata file in another format")

// hostLoop runs the completions of a group host's storage and syncs after
// the host call that started them returns (vsr.Storage and the group
// commit never complete inside the submitting call): enter and leave
// bracket every call into the host, and leaving the outermost runs what
// was queued meanwhile. The metadata group (metaStore) and every
// partition group (vsrGroup) drive their hosts through one.
type hostLoop struct {
	queue    []func()
	depth    int
	draining bool
	// settled, when set, runs whenever the outermost drain has emptied
	// the queue (the metadata store hands out the replies of what was
	// committed meanwhile).
	settled func()
}

func (l *hostLoop) enter() { l.depth++ }

func (l *hostLoop) leave() {
	l.depth--
	l.drain()
}

func (l *hostLoop) drain() {
	if l.depth > 0 || l.draining {
		return
	}
	l.draining = true
	for i := 0; i < len(l.queue); i++ {
		f := l.queue[i]
		l.queue[i] = nil
		f()
	}
	l.queue = l.queue[:0]
	l.draining = false
	if l.settled != nil {
		l.settled()
	}
}

// later runs f once the current host call returns (at once when none
// runs).
func (l *hostLoop) later(f func()) {
	l.queue = append(l.queue, f)
	l.drain()
}

// metaFileStorage is vsr.Storage over the metadata directory. IO runs in
// place on shard 0 (the metadata writer), through its FS; completions run
// from the loop.
//
// Syncs are asynchronous once the group is open (startAsync), so that
// concurrent metadata ops share them (group commit): a Sync that needs no
// directory sync queues the files' fdatasyncs on shard 0's ring when it
// has one (SyncAsync: the completions arrive through the shard's event
// loop), else hands them to a goroutine that posts the outcome back to
// shard 0. Shard 0 goes on preparing meanwhile (the journal writes run in
// place); vsr keeps one sync in flight and marks durable, when it ends,
// only what was written before it was submitted, so the prepares written
// meanwhile share the next one (vsr's requestSync: one in flight, one
// pending). A completion always runs from the loop (later), never inside
// another host call: a ring's completions may be run by any WaitAsync on
// shard 0, a partition's drain inside a metadata effect included.
type metaFileStorage struct {
	fs   storage.FS
	dir  string
	loop *hostLoop
	// headers, prepares and checkpoint are the zone sizes.
	headers, prepares, checkpoint uint64
	wal                           storage.File
	snapshot                      storage.File    // nil until the first checkpoint
	superblocks                   [2]storage.File // nil until written
	// dirty files need a sync; dirDirty: a file was created.
	dirty    map[storage.File]string
	dirDirty bool
	// fsyncs counts the file syncs (read by tests from other goroutines).
	fsyncs atomic.Uint64

	// async: Sync does not block shard 0 (startAsync). ring is shard 0's
	// ring FS when its files sync asynchronously (nil: the goroutine);
	// post hands a task to shard 0. inflight are the syncs under way.
	async    bool
	ring     asyncDrainer
	post     func(func()) error
	inflight []*metaSyncJob
	// synced, when set, counts the Syncs that synced something (the
	// strata_metadata_journal_syncs_total metric).
	synced interface{ Inc() }
}

// metaSyncJob is one asynchronous Sync: the files it covers, the
// fdatasyncs outstanding on the ring, and the outcome.
type metaSyncJob struct {
	done    func(error)
	pending int
	err     error
	// result carries the goroutine's outcome (nil on the ring).
	result   chan error
	finished bool
}

// metaSuperblockNames are the superblock files of copies 0 and 1.
var metaSuperblockNames = [2]string{metaSuperblockA, metaSuperblockB}

// checkMetaFormat refuses a metadata directory written in another format,
// naming the file and its version.
func checkMetaFormat(fsys storage.FS, dir string) error {
	for _, f := range []struct{ name, old, current, what string }{
		{metaWALFile, metaOldEntryMagic, metaWALMagic, "metadata journal"},
		{metaSnapshotFile, metaOldSnapshotMagic, metaSnapshotMagic, "metadata snapshot"},
		{metaSuperblockA, metaOldSuperblockMagic, "", "metadata superblock"},
		{metaSuperblockB, metaOldSuperblockMagic, "", "metadata superblock"},
	} {
		p := path.Join(dir, f.name)
		head, err := readHead(fsys, p, 8)
		if errors.Is(err, storage.ErrNotExist) || (err == nil && len(head) == 0) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		if len(head) >= 6 && string(head[:4]) == f.old {
			return fmt.Errorf("%w: %s is a %s of format version %d (a build before the metadata consensus group); this build reads version %d and does not migrate: start with an empty data directory",
				errMetaFormat, p, f.what, binary.LittleEndian.Uint16(head[4:]), metaFormatVersion)
		}
		if f.current != "" && len(head) >= 6 && string(head[:4]) == f.current {
			if v := binary.LittleEndian.Uint16(head[4:]); v != metaFormatVersion {
				return fmt.Errorf("%w: %s is a %s of format version %d; this build reads version %d and does not migrate: start with an empty data directory",
					errMetaFormat, p, f.what, v, metaFormatVersion)
			}
		}
	}
	return nil
}

// readHead reads up to n bytes from the start of p.
func readHead(fsys storage.FS, p string, n int) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	k, err := f.ReadAt(buf, 0)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return buf[:k], errors.Join(err, f.Close())
}

// openMetaFileStorage opens (or creates) the metadata group's files in dir
// for a replica of cfg.
func openMetaFileStorage(fsys storage.FS, dir string, loop *hostLoop, cfg *vsr.Config) (*metaFileStorage, error) {
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	if err := checkMetaFormat(fsys, dir); err != nil {
		return nil, err
	}
	s := &metaFileStorage{fs: fsys, dir: dir, loop: loop, dirty: map[storage.File]string{},
		headers: cfg.ZoneSize(vsr.ZoneWALHeaders), prepares: cfg.ZoneSize(vsr.ZoneWALPrepares), checkpoint: cfg.ZoneSize(vsr.ZoneCheckpoint)}
	if err := s.open(); err != nil {
		return nil, errors.Join(err, s.close())
	}
	return s, nil
}

// open opens the files of s; on an error the caller closes what is open.
func (s *metaFileStorage) open() (err error) {
	fsys, dir := s.fs, s.dir
	walPath := path.Join(dir, metaWALFile)
	if s.wal, err = s.openWithHeader(walPath, metaWALMagic, s.headers, s.prepares); err != nil {
		return err
	}
	snapPath := path.Join(dir, metaSnapshotFile)
	exists, err := storage.Exists(fsys, snapPath)
	if err != nil {
		return fmt.Errorf("stat %s: %w", snapPath, err)
	}
	if exists {
		if s.snapshot, err = s.openWithHeader(snapPath, metaSnapshotMagic, s.checkpoint, 0); err != nil {
			return err
		}
	}
	for i, name := range metaSuperblockNames {
		p := path.Join(dir, name)
		exists, err := storage.Exists(fsys, p)
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if exists {
			if s.superblocks[i], err = fsys.OpenReadWrite(p); err != nil {
				return fmt.Errorf("open %s: %w", p, err)
			}
		}
	}
	return s.syncNow()
}

// openWithHeader opens p, writing its header sector when the file is new
// or empty, else checking it: magic, version, the two sizes and the
// checksum.
func (s *metaFileStorage) openWithHeader(p, magic string, a, b uint64) (storage.File, error) {
	existed, err := storage.Exists(s.fs, p)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", p, err)
	}
	f, err := s.fs.OpenReadWrite(p)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p, err)
	}
	size, err := f.Size()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("size of %s: %w", p, err), f.Close())
	}
	if size > 0 && size <= metaHeaderSize {
		// The header write of the file's creation, torn by a crash (a
		// sector of zeros): nothing after it was ever written, since the
		// creation syncs the header before anything else uses the file.
		head := make([]byte, size)
		if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
			return nil, errors.Join(fmt.Errorf("read %s: %w", p, err), f.Close())
		}
		if isZero(head) {
			size = 0
		}
	}
	if size == 0 {
		hdr := make([]byte, metaHeaderSize)
		copy(hdr, magic)
		binary.LittleEndian.PutUint16(hdr[4:], metaFormatVersion)
		binary.LittleEndian.PutUint64(hdr[8:], a)
		binary.LittleEndian.PutUint64(hdr[16:], b)
		binary.LittleEndian.PutUint64(hdr[56:], xxh3.Hash(hdr[:56]))
		if _, err := f.WriteAt(hdr, 0); err != nil {
			return nil, errors.Join(fmt.Errorf("write %s: %w", p, err), f.Close())
		}
		s.dirty[f] = p
		if !existed {
			s.dirDirty = true
		}
		return f, nil
	}
	hdr := make([]byte, 64)
	if _, err := f.ReadAt(hdr, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, errors.Join(fmt.Errorf("read %s: %w", p, err), f.Close())
	}
	switch {
	case string(hdr[:4]) != magic || binary.LittleEndian.Uint64(hdr[56:]) != xxh3.Hash(hdr[:56]):
		err = fmt.Errorf("%w: %s: not a metadata file of this build (bad magic or header checksum)", errMetaFormat, p)
	case binary.LittleEndian.Uint16(hdr[4:]) != metaFormatVersion:
		err = fmt.Errorf("%w: %s: format version %d, this build reads version %d (no migration: start with an empty data directory)", errMetaFormat, p, binary.LittleEndian.Uint16(hdr[4:]), metaFormatVersion)
	case binary.LittleEndian.Uint64(hdr[8:]) != a || binary.LittleEndian.Uint64(hdr[16:]) != b:
		err = fmt.Errorf("%w: %s: zones of %d and %d bytes, this build's configuration uses %d and %d (was metadata.journal_slots changed?)",
			errMetaFormat, p, binary.LittleEndian.Uint64(hdr[8:]), binary.LittleEndian.Uint64(hdr[16:]), a, b)
	}
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

// ZoneSize implements vsr.Storage.
func (s *metaFileStorage) ZoneSize(z vsr.Zone) uint64 {
	switch z {
	case vsr.ZoneSuperblock:
		return metaWALSuperblocks * vsr.SectorSize
	case vsr.ZoneWALHeaders:
		return s.headers
	case vsr.ZoneWALPrepares:
		return s.prepares
	case vsr.ZoneCheckpoint:
		return s.checkpoint
	}
	return 0
}

// span is one piece of a zone request: a file and the offset in it (file
// nil: a checkpoint zone not created yet, read as zeros).
type span struct {
	file   storage.File
	name   string
	at     int64
	n      int
	create func() (storage.File, error)
}

// spans maps a zone range to its file pieces.
func (s *metaFileStorage) spans(z vsr.Zone, offset uint64, n int, write bool) ([]span, error) {
	if offset+uint64(n) > s.ZoneSize(z) {
		return nil, fmt.Errorf("%s: zone %d offset %d length %d beyond %d", s.dir, z, offset, n, s.ZoneSize(z))
	}
	walPath := path.Join(s.dir, metaWALFile)
	switch z {
	case vsr.ZoneSuperblock:
		var out []span
		for pos := offset; pos < offset+uint64(n); {
			copyIndex := pos / vsr.SectorSize
			end := min(offset+uint64(n), (copyIndex+1)*vsr.SectorSize)
			inCopy := pos - copyIndex*vsr.SectorSize
			sp := span{file: s.wal, name: walPath, at: int64(metaHeaderSize + pos), n: int(end - pos)}
			f := s.superblocks[copyIndex]
			name := path.Join(s.dir, metaSuperblockNames[copyIndex])
			switch {
			case write && s.snapshot != nil:
				// Once a checkpoint exists, the superblock copies are
				// their own files.
				sp = span{file: f, name: name, at: int64(inCopy), n: sp.n}
				if f == nil {
					i := copyIndex
					sp.create = func() (storage.File, error) {
						f, err := s.fs.OpenReadWrite(name)
						if err != nil {
							return nil, err
						}
						s.superblocks[i] = f
						s.dirDirty = true
						return f, nil
					}
				}
			case !write && f != nil:
				// A copy file shorter than a sector was created and never
				// completely written: the copy in journal.wal (older, from
				// before the first checkpoint) still stands.
				if size, err := f.Size(); err != nil || size >= vsr.SectorSize {
					sp = span{file: f, name: name, at: int64(inCopy), n: sp.n}
				}
			}
			out = append(out, sp)
			pos = end
		}
		return out, nil
	case vsr.ZoneWALHeaders:
		return []span{{file: s.wal, name: walPath, at: int64(metaHeaderSize + metaWALSuperblocks*vsr.SectorSize + offset), n: n}}, nil
	case vsr.ZoneWALPrepares:
		return []span{{file: s.wal, name: walPath, at: int64(metaHeaderSize + metaWALSuperblocks*vsr.SectorSize + s.headers + offset), n: n}}, nil
	case vsr.ZoneCheckpoint:
		name := path.Join(s.dir, metaSnapshotFile)
		sp := span{file: s.snapshot, name: name, at: int64(metaHeaderSize + offset), n: n}
		if s.snapshot == nil && write {
			sp.create = func() (storage.File, error) {
				f, err := s.openWithHeader(name, metaSnapshotMagic, s.checkpoint, 0)
				if err != nil {
					return nil, err
				}
				s.snapshot = f
				return f, nil
			}
		}
		return []span{sp}, nil
	}
	return nil, fmt.Errorf("%s: unknown zone %d", s.dir, z)
}

// Read implements vsr.Storage; bytes never written read as zeros.
func (s *metaFileStorage) Read(z vsr.Zone, offset uint64, buf []byte, done func(error)) {
	err := s.readNow(z, offset, buf)
	s.loop.later(func() { done(err) })
}

func (s *metaFileStorage) readNow(z vsr.Zone, offset uint64, buf []byte) error {
	spans, err := s.spans(z, offset, len(buf), false)
	pos := 0
	for _, sp := range spans {
		if err != nil {
			break
		}
		part := buf[pos : pos+sp.n]
		pos += sp.n
		if sp.file == nil {
			clear(part)
			continue
		}
		var k int
		k, err = sp.file.ReadAt(part, sp.at)
		if errors.Is(err, io.EOF) {
			clear(part[k:])
			err = nil
		}
		if err != nil {
			err = fmt.Errorf("read %s: %w", sp.name, err)
		}
	}
	return err
}

// Write implements vsr.Storage.
func (s *metaFileStorage) Write(z vsr.Zone, offset uint64, data []byte, done func(error)) {
	spans, err := s.spans(z, offset, len(data), true)
	pos := 0
	for _, sp := range spans {
		if err != nil {
			break
		}
		part := data[pos : pos+sp.n]
		pos += sp.n
		f := sp.file
		if f == nil {
			if f, err = sp.create(); err != nil {
				err = fmt.Errorf("create %s: %w", sp.name, err)
				break
			}
		}
		if _, err = f.WriteAt(part, sp.at); err != nil {
			err = fmt.Errorf("write %s: %w", sp.name, err)
			break
		}
		s.dirty[f] = sp.name
	}
	s.loop.later(func() { done(err) })
}

// Sync implements vsr.Storage: every file written since the last sync,
// then the directory when a file was created. With async set, a sync of
// files alone runs asynchronously (see metaFileStorage); one that must
// sync the directory too (a file was created: the first checkpoint's
// snapshot.bin and superblock files) runs in place, as at open.
func (s *metaFileStorage) Sync(done func(error)) {
	if s.synced != nil && (s.dirDirty || len(s.dirty) > 0) {
		s.synced.Inc()
	}
	if !s.async || s.dirDirty || len(s.dirty) == 0 {
		err := s.syncNow()
		s.loop.later(func() { done(err) })
		return
	}
	files := make([]storage.File, 0, len(s.dirty))
	names := make([]string, 0, len(s.dirty))
	for f, name := range s.dirty {
		files, names = append(files, f), append(names, name)
		delete(s.dirty, f)
	}
	job := &metaSyncJob{done: done}
	s.inflight = append(s.inflight, job)
	s.fsyncs.Add(uint64(len(files)))
	if s.ring != nil {
		if s.syncOnRing(job, files, names) {
			return
		}
	}
	job.result = make(chan error, 1)
	post := s.post
	go func() {
		var err error
		for i, f := range files {
			if err = f.Sync(); err != nil {
				err = fmt.Errorf("sync %s: %w", names[i], err)
				break
			}
		}
		job.result <- err
		// A shard that stopped runs no more tasks; drain reaps the job.
		_ = post(func() { s.reap(job) })
	}()
}

// syncOnRing queues the fdatasyncs of files on shard 0's ring; false when
// a file cannot sync asynchronously (nothing was queued then).
func (s *metaFileStorage) syncOnRing(job *metaSyncJob, files []storage.File, names []string) bool {
	for _, f := range files {
		if _, ok := f.(asyncSyncer); !ok {
			return false
		}
	}
	job.pending = len(files)
	for i, f := range files {
		name := names[i]
		synced := func(err error) {
			if err != nil && job.err == nil {
				job.err = fmt.Errorf("sync %s: %w", name, err)
			}
			job.pending--
			if job.pending == 0 {
				s.finish(job, job.err)
			}
		}
		if err := f.(asyncSyncer).SyncAsync(synced); err != nil {
			synced(err)
		}
	}
	return true
}

// reap collects the outcome of the goroutine's sync (a task on shard 0).
func (s *metaFileStorage) reap(job *metaSyncJob) {
	if job.finished {
		return
	}
	s.finish(job, <-job.result)
}

// finish ends an asynchronous sync: its completion runs from the loop.
func (s *metaFileStorage) finish(job *metaSyncJob, err error) {
	job.finished = true
	for i, j := range s.inflight {
		if j == job {
			s.inflight = append(s.inflight[:i], s.inflight[i+1:]...)
			break
		}
	}
	s.loop.later(func() { job.done(err) })
}

// startAsync makes later syncs asynchronous (the group is open): on
// ring's when shard 0 has one, else through a goroutine whose outcome
// post hands to shard 0.
func (s *metaFileStorage) startAsync(ring asyncDrainer, post func(func()) error) {
	s.async, s.ring, s.post = true, ring, post
}

// drain waits, on shard 0, until no asynchronous sync is in flight (their
// completions run, and may start more), before the files are closed.
func (s *metaFileStorage) drain() error {
	for len(s.inflight) > 0 {
		job := s.inflight[0]
		if job.result != nil {
			s.finish(job, <-job.result)
			continue
		}
		if err := s.ring.WaitAsync(); err != nil {
			return fmt.Errorf("wait for the metadata journal's syncs: %w", err)
		}
	}
	return nil
}

func (s *metaFileStorage) syncNow() error {
	for f, name := range s.dirty {
		s.fsyncs.Add(1)
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", name, err)
		}
		delete(s.dirty, f)
	}
	if s.dirDirty {
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("sync %s: %w", s.dir, err)
		}
		s.dirDirty = false
	}
	return nil
}

// close closes every open file.
func (s *metaFileStorage) close() error {
	var errs []error
	for _, f := range append([]storage.File{s.wal, s.snapshot}, s.superblocks[:]...) {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	s.wal, s.snapshot, s.superblocks = nil, nil, [2]storage.File{}
	return errors.Join(errs...)
}

// invalidSuperblocks names the superblock copies that hold something but
// do not decode (a damaged copy: the replica uses the other one, and the
// next superblock write of that copy replaces it).
func (s *metaFileStorage) invalidSuperblocks() []string {
	var names []string
	for i := range metaSuperblockCopies {
		spans, err := s.spans(vsr.ZoneSuperblock, uint64(i)*vsr.SectorSize, vsr.SectorSize, false)
		if err != nil || len(spans) != 1 {
			continue
		}
		sp := spans[0]
		sector := make([]byte, vsr.SectorSize)
		if n, err := sp.file.ReadAt(sector, sp.at); err != nil && !errors.Is(err, io.EOF) {
			names = append(names, fmt.Sprintf("%s (%v)", sp.name, err))
			continue
		} else if n == 0 {
			continue
		}
		if _, err := vsr.DecodeSuperblockCopy(sector); err != nil && !isZero(sector) {
			names = append(names, sp.name)
		}
	}
	return names
}

// ReadRecord implements vsr.RecordReader: a WAL prepare slot is read only
// as far as its record (journal.ReadRecordSectors), so that opening a
// journal of 1024 slots of 260 KiB reads its records, not 272 MB.
func (s *metaFileStorage) ReadRecord(z vsr.Zone, offset, max uint64, done func([]byte, error)) {
	buf, err := journal.ReadRecordSectors(offset, max, func(at uint64, part []byte) error {
		return s.readNow(z, at, part)
	})
	s.loop.later(func() { done(buf, err) })
}

// isZero reports whether b holds only zeros.
func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
