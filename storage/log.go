package storage

import (
	"errors"
	"fmt"
	"path"
	"sort"

	"github.com/stratabroker/strata/net/wire"
)

// Log defaults.
const (
	// SegmentSizeDefault is the topic default segment_size (1 GiB).
	SegmentSizeDefault = 1 << 30
	// indexIntervalBytesDefault spaces the index entries recovery rebuilds.
	indexIntervalBytesDefault = 16 << 10
)

// LogOptions configures a partition log.
type LogOptions struct {
	// SegmentSizeBytes seals the active segment once it holds this many
	// bytes; the batch that crosses it is written whole. 0 = 1 GiB.
	SegmentSizeBytes int64
	// StartOffset names the first segment of a log created empty (and of
	// the segment Purge recreates). Usually 0.
	StartOffset uint64
	// IndexIntervalBytes spaces the entries recovery writes when it
	// rebuilds an index from the log. 0 = 16 KiB.
	IndexIntervalBytes int64
	// Preallocate reserves SegmentSizeBytes of disk for every new segment
	// file (the topic's preallocate_segments) when the FS supports it; the
	// file size is unchanged, so recovery is unaffected.
	Preallocate bool
	// TrustSealedSegments makes OpenLog check a sealed segment quickly —
	// its first batch and everything from its last index entry on — instead
	// of validating every batch; the full scan runs when that check fails.
	// Damage elsewhere in a sealed segment is then found by Read, which
	// validates every batch it serves and fences the log at the first bad
	// one. The active segment is always scanned fully.
	TrustSealedSegments bool
	// Superblock is the partition superblock loaded from dir; nil runs
	// the log without one (segments must then continue each other's
	// offsets exactly, and nothing tells a torn tail from damage). With
	// one, recovery cuts nothing below its durable frontier, checks the
	// message count below it, finishes an interrupted retention deletion
	// and starts the next message at its reservation; the log then keeps
	// the superblock (StoreSuperblock and friends, Purge,
	// DeleteOldestSealed).
	Superblock *PartitionSuperblock
	// SuperblockErr says why no superblock copy is valid (Superblock then
	// holds only the partition's Flags, Sequence 0): recovery cuts
	// nothing and fences the log, which serves what verifies.
	SuperblockErr error
}

// LogStats are a log's counters.
type LogStats struct {
	Segments    int
	Bytes       int64  // bytes of batch records in all segments
	Messages    uint64 // messages in all segments
	FirstOffset uint64 // offset of the oldest stored message (= NextOffset when empty)
	NextOffset  uint64 // offset the next appended message gets
}

// Log is one partition's message log: segments `{start}.log` + `.index`
// in one directory, the last one active. It is owned by one goroutine.
//
// Append writes; Sync makes what was appended durable. Reads see appended
// data at once. Every batch read is verified before it is served.
type Log struct {
	fs   FS
	dir  string
	opts LogOptions
	// Invariant: segments is never empty; segments[i+1].start =
	// segments[i].next; only the last segment is written.
	segments []*segment
	fenced   *Corruption // set when recovery found unrepairable damage
	torn     *tornTail   // during OpenLog: a torn tail to cut
	// sb is the partition superblock as last durably stored (nil: the
	// log runs without one); sbErr is why none was valid at open.
	sb    *PartitionSuperblock
	sbErr error
	// sbWriting is the superblock copy written and not yet synced, in
	// sbFile (sbCreated: the copy is a new file); nil when none.
	sbWriting      *PartitionSuperblock
	sbFile         File
	sbCreated      bool
	sbWritingBytes int64 // durableBytes when sbWriting was built
	// Invariant: every stored message below durable is durable (synced).
	durable uint64
	// written counts the bytes appended since open; durableBytes, those
	// of them known durable; recordedBytes, those the stored superblock's
	// frontier covers. syncTarget and syncTargetBytes are what the files
	// SyncFiles handed out cover once synced.
	written, durableBytes, recordedBytes, syncTargetBytes int64
	syncTarget                                            uint64
	// sealedNext ends the segments sealed (and synced) so far, sealedBytes
	// the bytes written when the last one was; their names may wait for a
	// SyncDir.
	sealedNext  uint64
	sealedBytes int64

	failed   error // a write or sync error; the log must be reopened
	dirDirty bool  // a segment was created since the last SyncDir
	messages uint64
	bytes    int64
	scanner  batchScanner
	// vector is the reusable list of buffers of one vectored write; it
	// grows to at most iovecBuffersMax and is cleared after every write so
	// it keeps no reference to the caller's batches.
	vector [][]byte
	// indexBuf gathers the index entries of one segment chunk.
	indexBuf []byte
	// single holds Append's one buffer for the shared write path.
	single [1][]byte
}

// OpenLog opens (creating when missing) the partition log in dir and
// recovers it: every batch of every segment is validated (checksums,
// tiling, contiguous offsets), a torn or corrupt tail of the last segment
// is cut at the last good batch, indexes are verified against the log and
// rebuilt where they disagree, and damage that is not a tail fences the log
// (report.Corruption). With a superblock (LogOptions.Superblock) only
// bytes beyond its durable frontier can be a torn tail, a log that does
// not hold what it recorded below the frontier is fenced, a fenced log
// keeps every byte, and the next message starts at the reservation
// (report.Skip). The returned error is for I/O failures only.
func OpenLog(fsys FS, dir string, opts LogOptions) (*Log, RecoveryReport, error) {
	if opts.SegmentSizeBytes <= 0 {
		opts.SegmentSizeBytes = SegmentSizeDefault
	}
	if opts.IndexIntervalBytes <= 0 {
		opts.IndexIntervalBytes = indexIntervalBytesDefault
	}
	l := &Log{fs: fsys, dir: dir, opts: opts}
	if opts.Superblock != nil {
		sb := *opts.Superblock
		l.sb, l.sbErr = &sb, opts.SuperblockErr
	}
	var report RecoveryReport
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, report, fmt.Errorf("open log %s: %w", dir, err)
	}
	starts, err := l.listSegments()
	if err != nil {
		return nil, report, err
	}
	if starts, err = l.finishRetention(starts, &report); err != nil {
		return nil, report, err
	}
	if len(starts) == 0 {
		if err := l.createSegment(opts.StartOffset); err != nil {
			return nil, report, err
		}
		if err := l.syncDir(); err != nil {
			return nil, report, errors.Join(err, l.Close())
		}
	}
	for i, start := range starts {
		if err := l.recoverSegment(start, i == len(starts)-1, &report); err != nil {
			return nil, report, errors.Join(err, l.Close())
		}
		if l.fenced != nil {
			break
		}
	}
	l.checkFrontier()
	l.fenceWithoutSuperblock()
	if err := l.cutTornTail(&report); err != nil {
		return nil, report, errors.Join(err, l.Close())
	}
	l.scanner.release() // recovery's 1 MiB chunk; reads use smaller ones
	report.Corruption = l.fenced
	for _, s := range l.segments {
		l.messages += s.messages
		l.bytes += s.size
	}
	if l.sb != nil {
		l.durable = min(l.sb.DurableOffset, l.NextOffset())
	}
	if err := l.skipToReservation(&report); err != nil {
		return nil, report, errors.Join(err, l.Close())
	}
	if !report.Clean() {
		// A rebuilt index or a new segment may be a new file: make its
		// name durable.
		if err := l.syncDir(); err != nil {
			return nil, report, errors.Join(err, l.Close())
		}
	}
	return l, report, nil
}

// listSegments returns the start offsets of the `.log` files in the
// directory, ascending.
func (l *Log) listSegments() ([]uint64, error) {
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("list log %s: %w", l.dir, err)
	}
	var starts []uint64
	for _, e := range entries {
		if start, ok := parseSegmentLogName(e.Name); ok && !e.IsDir {
			starts = append(starts, start) // names sort numerically
		}
	}
	return starts, nil
}

// recoverSegment opens and scans one segment, appending it to l.segments.
func (l *Log) recoverSegment(start uint64, last bool, report *RecoveryReport) error {
	seg := newSegment(l.dir, start)
	var err error
	if seg.log, err = l.fs.OpenReadWrite(seg.logPath); err != nil {
		return fmt.Errorf("open %s: %w", seg.logPath, err)
	}
	if seg.index, err = l.fs.OpenReadWrite(seg.indexPath()); err != nil {
		return errors.Join(fmt.Errorf("open %s: %w", seg.indexPath(), err), seg.close())
	}
	l.segments = append(l.segments, seg)
	// Offsets skipped at a recovery (skipToReservation) leave a gap
	// before a segment; only a log with a superblock has them, and its
	// message count below the durable frontier tells a lost segment.
	if n := len(l.segments); n > 1 && (start < l.segments[n-2].next || (start > l.segments[n-2].next && l.sb == nil)) {
		seg.next = start
		l.fenced = &Corruption{File: seg.logPath, Offset: l.segments[n-2].next,
			Err: fmt.Errorf("segment starts at %d, previous ends at %d: %w", start, l.segments[n-2].next, ErrCorrupt)}
		l.segments = l.segments[:n-1]
		return seg.close()
	}
	size, err := seg.log.Size()
	if err != nil {
		return fmt.Errorf("size of %s: %w", seg.logPath, err)
	}
	indexImage, err := readAll(seg.index)
	if err != nil {
		return fmt.Errorf("read %s: %w", seg.indexPath(), err)
	}
	entries, entriesBytes := DecodeIndex(indexImage)
	var r segmentScan
	quick := false
	if !last && l.opts.TrustSealedSegments && int64(entriesBytes) == int64(len(indexImage)) {
		if r, quick, err = quickScanSegment(&l.scanner, seg, size, entries); err != nil {
			return err
		}
	}
	if !quick {
		if r, err = scanSegment(&l.scanner, seg, size, entries, entriesBytes, int64(len(indexImage)), l.opts.IndexIntervalBytes); err != nil {
			return err
		}
	}
	seg.size, seg.next, seg.messages, seg.entries = r.goodEnd, r.next, r.messages, r.index
	if r.bad != nil && (!last || r.badInMiddle) {
		l.fenced = &Corruption{File: seg.logPath, Position: r.goodEnd, Offset: r.next, Err: r.bad}
		return nil // the fenced segment's files stay as they are
	}
	if r.bad != nil && l.sbErr != nil {
		// Without a superblock nothing says where a torn write may lie.
		l.fenced = &Corruption{File: seg.logPath, Position: r.goodEnd, Offset: r.next, Err: r.bad}
		return nil
	}
	if r.bad != nil && l.sb != nil && r.next < l.sb.DurableOffset {
		// A torn write lies only beyond what was durable: damage below
		// the recorded frontier is corruption, and nothing is cut.
		l.fenced = &Corruption{File: seg.logPath, Position: r.goodEnd, Offset: r.next,
			Err: fmt.Errorf("%w, below the durable frontier (offset %d) the superblock recorded, so not a torn write", r.bad, l.sb.DurableOffset)}
		return nil
	}
	if r.bad != nil {
		// A torn tail: cut once recovery knows the log is not fenced
		// (cutTornTail), so a fenced log keeps every byte.
		l.torn = &tornTail{seg: seg, size: size, scan: r}
		return nil
	}
	return l.rebuildIndex(seg, r, report)
}

// tornTail is the torn tail recovery found at the end of the last
// segment, cut by cutTornTail.
type tornTail struct {
	seg  *segment
	size int64 // the file's size before the cut
	scan segmentScan
}

// cutTornTail truncates the last segment at the end of its valid batches
// unless the log is fenced, and rebuilds its index if needed.
func (l *Log) cutTornTail(report *RecoveryReport) error {
	tail := l.torn
	l.torn = nil
	if tail == nil || l.fenced != nil {
		return nil
	}
	seg, r := tail.seg, tail.scan
	l.scanner.forget()
	if err := seg.log.Truncate(r.goodEnd); err != nil {
		return fmt.Errorf("truncate %s: %w", seg.logPath, err)
	}
	if err := seg.log.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", seg.logPath, err)
	}
	report.Truncations = append(report.Truncations, Truncation{
		File: seg.logPath, Position: r.goodEnd, BytesDropped: tail.size - r.goodEnd,
		MessagesDropped: r.dropped, Reason: r.bad.Error(),
	})
	return l.rebuildIndex(seg, r, report)
}

// rebuildIndex rewrites seg's index from the scan when it is not intact.
func (l *Log) rebuildIndex(seg *segment, r segmentScan, report *RecoveryReport) error {
	if r.indexIntact {
		return nil
	}
	if err := l.rewriteIndex(seg); err != nil {
		return err
	}
	report.IndexesRebuilt = append(report.IndexesRebuilt, seg.indexPath())
	return nil
}

// rewriteIndex replaces seg's index file with seg.entries and syncs it.
func (l *Log) rewriteIndex(seg *segment) error {
	image := make([]byte, len(seg.entries)*IndexEntrySize)
	for i, e := range seg.entries {
		PutIndexEntry(image[i*IndexEntrySize:], e)
	}
	if err := seg.index.Truncate(0); err != nil {
		return fmt.Errorf("truncate %s: %w", seg.indexPath(), err)
	}
	if len(image) > 0 {
		if _, err := seg.index.WriteAt(image, 0); err != nil {
			return fmt.Errorf("write %s: %w", seg.indexPath(), err)
		}
	}
	if err := seg.index.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", seg.indexPath(), err)
	}
	return nil
}

// readAll reads a whole open file.
func readAll(f File) ([]byte, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	if size == 0 {
		return buf, nil
	}
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, err
	}
	return buf, nil
}

// createSegment creates an empty active segment starting at start.
func (l *Log) createSegment(start uint64) error {
	seg := newSegment(l.dir, start)
	var err error
	if seg.log, err = l.fs.Create(seg.logPath); err != nil {
		return fmt.Errorf("create %s: %w", seg.logPath, err)
	}
	if seg.index, err = l.fs.Create(seg.indexPath()); err != nil {
		return errors.Join(fmt.Errorf("create %s: %w", seg.indexPath(), err), seg.close())
	}
	if p, ok := seg.log.(Preallocator); ok && l.opts.Preallocate {
		if err := p.Preallocate(0, l.opts.SegmentSizeBytes); err != nil {
			return errors.Join(fmt.Errorf("preallocate %s: %w", seg.logPath, err), seg.close())
		}
	}
	l.segments = append(l.segments, seg)
	l.dirDirty = true
	return nil
}

func (l *Log) syncDir() error {
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", l.dir, err)
	}
	l.dirDirty = false
	return nil
}

func (l *Log) active() *segment { return l.segments[len(l.segments)-1] }

// usable returns the error that stops writes, if any.
func (l *Log) usable() error {
	if l.failed != nil {
		return fmt.Errorf("%s: %w (%v)", l.dir, ErrLogFailed, l.failed)
	}
	if l.fenced != nil {
		return fmt.Errorf("%s at byte %d: %w", l.fenced.File, l.fenced.Position, ErrLogFenced)
	}
	return nil
}

// fail records a write-side error and returns it wrapped.
func (l *Log) fail(err error) error {
	l.failed = err
	return fmt.Errorf("%s: %w: %w", l.dir, ErrLogFailed, err)
}

// Append writes one flush: whole stamped batches back to back whose
// offsets continue the log (the first base_offset = NextOffset). It writes
// them with one write per segment touched, adds one index entry per
// segment touched, and seals and rolls the active segment when it reaches
// the segment size (syncing the sealed segment first, so a later segment
// never holds data that an earlier one might lose). It returns once the
// bytes are written; call Sync for durability. It does not allocate per
// message. AppendBatches is the same for batches held in separate buffers.
func (l *Log) Append(batches []byte) error {
	if err := l.usable(); err != nil {
		return err
	}
	if err := checkAppend(batches, l.active().next); err != nil {
		return err
	}
	l.single[0] = batches
	err := l.writeRun(l.single[:])
	l.single[0] = nil // keep no reference to the caller's buffer
	return err
}

// checkAppend verifies that batches are whole records with contiguous
// offsets starting at next. Under the invariants tag every batch is fully
// validated too.
func checkAppend(batches []byte, next uint64) error {
	if len(batches) == 0 {
		return fmt.Errorf("empty append: %w", ErrBadAppend)
	}
	for pos := 0; pos < len(batches); {
		n, messages, err := checkBatch(batches[pos:], next)
		if err != nil {
			return fmt.Errorf("batch at byte %d: %w", pos, err)
		}
		next += messages
		pos += n
	}
	return nil
}

// checkBatch verifies the batch record at the start of b: a whole header,
// a plausible batch_length that fits b, at least one message, base_offset
// = next, and (invariants tag) full validation. It returns the record's
// length and message count; errors wrap ErrBadAppend.
func checkBatch(b []byte, next uint64) (int, uint64, error) {
	if len(b) < wire.BatchHeaderSize {
		return 0, 0, fmt.Errorf("partial header of %d bytes: %w", len(b), ErrBadAppend)
	}
	v := wire.BatchView(b)
	n := v.BatchLength()
	if n < batchLengthMin || n > uint64(len(b)) || v.MessageCount() == 0 {
		return 0, 0, fmt.Errorf("length %d of %d bytes, %d messages: %w", n, len(b), v.MessageCount(), ErrBadAppend)
	}
	if v.BaseOffset() != next {
		return 0, 0, fmt.Errorf("base offset %d, log is at %d: %w", v.BaseOffset(), next, ErrBadAppend)
	}
	if err := checkBatchInvariants(b[:n]); err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrBadAppend, err)
	}
	return int(n), uint64(v.MessageCount()), nil
}

// roll seals the active segment (syncing it) and starts a new one at the
// next offset.
func (l *Log) roll() error {
	// Synced even when not marked dirty: SyncFiles may have handed its
	// files to an asynchronous sync that has not finished yet.
	l.active().dirty = true
	if err := l.syncSegment(l.active()); err != nil {
		return err
	}
	// Every earlier segment was synced when it was sealed. The sealed
	// segment's name may not be durable yet (a segment created since the
	// last SyncDir): the frontier covers it once it is (advanceSealed).
	l.sealedNext, l.sealedBytes = l.active().next, l.written
	if !l.dirDirty {
		l.markDurable(l.sealedNext, l.sealedBytes)
	}
	if err := l.createSegment(l.active().next); err != nil {
		return l.fail(err)
	}
	return nil
}

func (l *Log) syncSegment(seg *segment) error {
	if !seg.dirty {
		return nil
	}
	if err := seg.log.Sync(); err != nil {
		return l.fail(fmt.Errorf("sync %s: %v", seg.logPath, err))
	}
	if err := seg.index.Sync(); err != nil {
		return l.fail(fmt.Errorf("sync %s: %v", seg.indexPath(), err))
	}
	seg.dirty = false
	return nil
}

// Sync makes everything appended so far durable: data of every written
// segment (fdatasync) and the directory entries of new segments.
func (l *Log) Sync() error {
	if l.failed != nil {
		return l.usable()
	}
	for _, seg := range l.segments {
		if err := l.syncSegment(seg); err != nil {
			return err
		}
	}
	if l.dirDirty {
		if err := l.syncDir(); err != nil {
			return l.fail(err)
		}
	}
	l.markDurable(l.active().next, l.written)
	return nil
}

// SyncFiles is Sync for a caller that syncs files asynchronously (a
// shard's ring): it makes the directory entries of new segments durable
// (a synchronous SyncDir, needed only after a segment was created), then
// appends to dst the data and index files of every segment written since
// its last sync, and counts them as synced. The caller must fdatasync
// every file returned before it relies on the data being durable, then
// call FilesSynced, or Fail when one of those syncs fails.
func (l *Log) SyncFiles(dst []File) ([]File, error) {
	if l.failed != nil {
		return dst, l.usable()
	}
	if l.dirDirty {
		if err := l.syncDir(); err != nil {
			return dst, l.fail(err)
		}
	}
	l.syncTarget, l.syncTargetBytes = l.active().next, l.written
	for _, seg := range l.segments {
		if seg.dirty {
			dst = append(dst, seg.log, seg.index)
			seg.dirty = false
		}
	}
	return dst, nil
}

// Fail marks the log failed after an asynchronous sync of one of its files
// failed: what it covered is in an unknown state, so the log refuses
// writes until it is reopened (and recovered). It returns err wrapped.
func (l *Log) Fail(err error) error { return l.fail(err) }

// Stats returns the log's counters.
func (l *Log) Stats() LogStats {
	return LogStats{
		Segments:    len(l.segments),
		Bytes:       l.bytes,
		Messages:    l.messages,
		FirstOffset: l.segments[0].start,
		NextOffset:  l.active().next,
	}
}

// NextOffset returns the offset the next appended message gets (one past
// the last readable message of a fenced log).
func (l *Log) NextOffset() uint64 { return l.active().next }

// Fenced returns the corruption that fences the log, or nil. A fenced log
// serves the verified prefix, the offsets from FirstOffset up to (not
// including) Corruption.Offset, and refuses appends.
func (l *Log) Fenced() *Corruption { return l.fenced }

// NextStoredOffset returns offset, moved forward to the start of the next
// segment when it lies in offsets a recovery skipped (between segments),
// or to the oldest stored offset when it is older.
func (l *Log) NextStoredOffset(offset uint64) uint64 {
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].start > offset }) - 1
	if i < 0 {
		return l.segments[0].start
	}
	if offset >= l.segments[i].next && i+1 < len(l.segments) {
		return l.segments[i+1].start
	}
	return offset
}

// DeleteOldestSealed removes up to n of the oldest sealed segments (never
// the active one) and returns how many it removed. A log with a superblock
// first stores the new oldest offset in it (so a crash in the middle
// leaves files recovery finishes deleting) and refuses while fenced.
func (l *Log) DeleteOldestSealed(n int) (int, error) {
	deleted := 0
	if n = min(n, len(l.segments)-1); n > 0 && l.sb != nil {
		if err := l.usable(); err != nil {
			return 0, err
		}
		if err := l.advanceSealed(); err != nil {
			return 0, err
		}
		if err := l.storeFor(l.nextSuperblock(n, l.Reserved())); err != nil {
			return 0, l.fail(err)
		}
	}
	l.scanner.forget()
	for deleted < n && len(l.segments) > 1 {
		seg := l.segments[0]
		if err := seg.close(); err != nil {
			return deleted, fmt.Errorf("close %s: %w", seg.logPath, err)
		}
		for _, p := range []string{seg.logPath, seg.indexPath()} {
			if err := l.fs.Remove(p); err != nil && !errors.Is(err, ErrNotExist) {
				return deleted, l.fail(fmt.Errorf("remove %s: %v", p, err))
			}
		}
		l.segments = l.segments[1:]
		l.messages -= seg.messages
		l.bytes -= seg.size
		deleted++
	}
	if deleted > 0 {
		if err := l.syncDir(); err != nil {
			return deleted, l.fail(err)
		}
	}
	return deleted, nil
}

// Purge removes every segment file of the directory (fenced or not) and
// restarts the log empty with one segment at LogOptions.StartOffset. It
// clears a fence and a failure. A log with a superblock then stores one
// for the empty log, recording generation as its PurgeGeneration (both
// copies when none was valid).
func (l *Log) Purge(generation uint64) error {
	if err := l.Close(); err != nil {
		return fmt.Errorf("purge %s: %w", l.dir, err)
	}
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("purge %s: %w", l.dir, err)
	}
	for _, e := range entries {
		if e.IsDir || (path.Ext(e.Name) != logSuffix && path.Ext(e.Name) != indexSuffix) {
			continue
		}
		if err := l.fs.Remove(path.Join(l.dir, e.Name)); err != nil {
			return fmt.Errorf("purge %s: %w", l.dir, err)
		}
	}
	l.segments, l.fenced, l.failed, l.messages, l.bytes = nil, nil, nil, 0, 0
	l.durable, l.durableBytes = l.opts.StartOffset, l.written
	l.sealedNext, l.sealedBytes = 0, l.written
	if err := l.createSegment(l.opts.StartOffset); err != nil {
		// Keep the invariant (one segment) with a placeholder; the failure
		// stops all use until the log is reopened.
		l.segments = []*segment{newSegment(l.dir, l.opts.StartOffset)}
		return l.fail(err)
	}
	if err := l.syncDir(); err != nil {
		return l.fail(err)
	}
	if l.sb != nil {
		start := l.opts.StartOffset
		s := *l.sb
		s.PurgeGeneration, s.FirstOffset, s.DurableOffset, s.DurableMessages, s.ReservedOffset = generation, start, start, 0, start
		if err := l.storeFor(s); err != nil {
			return l.fail(err)
		}
		l.sbErr = nil
	}
	return nil
}

// Close closes every segment file. It does not sync. The Log must not be
// used afterwards except for Purge.
func (l *Log) Close() error {
	l.scanner.forget()
	var first error
	if l.sbFile != nil {
		first = l.sbFile.Close()
		l.sbWriting, l.sbFile = nil, nil
	}
	for _, seg := range l.segments {
		if err := seg.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
