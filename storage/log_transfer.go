package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/net/wire"
)

// Segment state transfer (server/group/transfer.go) on the partition's
// files.
//
// Serving: SegmentFiles names the files of a log that hold a range of
// its messages, each cut at the range's end (a prefix of the file, which
// later appends do not change), and ReadSegmentFile reads them through the
// open segment files, a bounded chunk at a time.
//
// Installing: the receiver writes the files it fetched into the staging
// directory TransferStagingDir inside the partition directory. Once every
// file is verified, CommitStagedSegments checks their batches, syncs them,
// writes the install record (the new superblock's frontier and the names)
// and syncs it, and renames the staging directory to TransferReadyDir: the
// commit point. FinishSegmentInstall then puts the files in place: it
// removes the old segment files, renames the new ones into the partition
// directory, stores the superblock of the new log and removes the ready
// directory, syncing the directory between the steps. A crash before the
// rename leaves the old log and a staging directory, which the next open
// removes; a crash after it leaves a ready directory, which the next open
// finishes installing (every step can run again) before the log is
// opened. So the log is either the old one or the new one, never a
// mixture.

// Transfer directories inside a partition directory.
const (
	TransferStagingDir = "transfer.staging"
	TransferReadyDir   = "transfer.ready"
	// transferRecordName is the install record inside the ready directory.
	transferRecordName = "install.record"
	transferMagic      = "SXFR"
	transferVersion    = 1
	// transferNamesMax bounds the files of one install record.
	transferNamesMax = 1 << 17
)

// ErrNotHeld reports a range of messages the log does not hold whole.
var ErrNotHeld = errors.New("storage: the log does not hold the range")

// SegmentFile is one file of a log's range: its name in the partition
// directory and the bytes of it that belong to the range.
type SegmentFile struct {
	Name string
	Size int64
}

// dataEnd is the offset after the last stored message: empty segments a
// recovery started at the reservation hold nothing.
func (l *Log) dataEnd() uint64 {
	end := l.active().next
	for i := len(l.segments) - 1; i > 0 && l.segments[i].messages == 0 && l.segments[i].start == l.segments[i].next; i-- {
		end = l.segments[i-1].next
	}
	return end
}

// Holds reports whether the log stores every message in [first, end),
// without a gap, undamaged, so that TruncateTo(end) keeps them all: the
// log starts at or before first and its data reaches end. An empty range
// is held when first lies inside the log.
func (l *Log) Holds(first, end uint64) bool {
	if l.fenced != nil || l.failed != nil || first > end || first < l.segments[0].start || end > l.dataEnd() {
		return false
	}
	for i := 0; i+1 < len(l.segments); i++ {
		// Offsets a recovery skipped lie between segments.
		gapFrom, gapTo := l.segments[i].next, l.segments[i+1].start
		if gapFrom < gapTo && gapFrom < end && gapTo > first {
			return false
		}
	}
	return true
}

// SegmentFiles returns the files that hold the messages [first, end): for
// every segment with messages in the range, its `.log` cut at the batch
// that starts at end and its `.index` cut at the entries below that, in
// offset order. It fails with ErrNotHeld when the log does not hold the
// range whole, or when no batch starts at end.
func (l *Log) SegmentFiles(first, end uint64) ([]SegmentFile, error) {
	if !l.Holds(first, end) {
		return nil, fmt.Errorf("%s: offsets [%d, %d): %w", l.dir, first, end, ErrNotHeld)
	}
	var files []SegmentFile
	for _, seg := range l.segments {
		if seg.start >= end || seg.next <= first || seg.messages == 0 {
			continue
		}
		size := seg.size
		if end < seg.next {
			pos, err := l.batchBoundary(seg, end)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrNotHeld, err)
			}
			size = pos
		}
		entries := 0
		for entries < len(seg.entries) && int64(seg.entries[entries].Position) < size {
			entries++
		}
		indexSize := int64(entries * IndexEntrySize)
		if have, err := seg.index.Size(); err != nil {
			return nil, fmt.Errorf("size of %s: %w", seg.indexPath(), err)
		} else if have < indexSize {
			indexSize = have / IndexEntrySize * IndexEntrySize
		}
		files = append(files, SegmentFile{Name: SegmentLogName(seg.start), Size: size}, SegmentFile{Name: SegmentIndexName(seg.start), Size: indexSize})
	}
	return files, nil
}

// ReadSegmentFile reads into buf the bytes at off of the log's segment
// file name (a `.log` or `.index` name SegmentFiles gave), from the open
// file. It returns the bytes read; the end of the file is not an error.
func (l *Log) ReadSegmentFile(name string, off int64, buf []byte) (int, error) {
	start, isLog, ok := ParseSegmentFileName(name)
	if !ok {
		return 0, fmt.Errorf("%s: %q is not a segment file name: %w", l.dir, name, ErrInvalidArgument)
	}
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].start >= start })
	if i == len(l.segments) || l.segments[i].start != start {
		return 0, fmt.Errorf("%s: no segment %s: %w", l.dir, name, ErrNotHeld)
	}
	f := l.segments[i].index
	if isLog {
		f = l.segments[i].log
	}
	n, err := f.ReadAt(buf, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if err != nil {
		return n, fmt.Errorf("read %s at %d: %w", path.Join(l.dir, name), off, err)
	}
	return n, nil
}

// ParseSegmentFileName returns the start offset a segment file name (a
// 20-digit `.log` or `.index` name) names, and whether it is the `.log`.
func ParseSegmentFileName(name string) (start uint64, isLog bool, ok bool) {
	if start, ok := parseSegmentLogName(name); ok {
		return start, true, true
	}
	digits, found := strings.CutSuffix(name, indexSuffix)
	if !found {
		return 0, false, false
	}
	start, ok = parseSegmentLogName(digits + logSuffix)
	return start, false, ok
}

// transferRecord is the install record: the superblock fields of the new
// log and the names of its files.
type transferRecord struct {
	generation, first, end, messages, flags uint64
	names                                   []string
}

func (r *transferRecord) encode() []byte {
	b := append([]byte(nil), transferMagic...)
	b = binary.LittleEndian.AppendUint16(b, transferVersion)
	for _, v := range []uint64{r.generation, r.first, r.end, r.messages, r.flags} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.names)))
	for _, n := range r.names {
		b = append(b, byte(len(n)))
		b = append(b, n...)
	}
	return binary.LittleEndian.AppendUint64(b, xxh3.Hash(b))
}

func decodeTransferRecord(b []byte) (transferRecord, error) {
	var r transferRecord
	le := binary.LittleEndian
	const head = 4 + 2 + 5*8 + 4
	if len(b) < head+8 || string(b[:4]) != transferMagic || le.Uint64(b[len(b)-8:]) != xxh3.Hash(b[:len(b)-8]) {
		return r, fmt.Errorf("install record: bad magic, length or checksum: %w", ErrCorrupt)
	}
	if v := le.Uint16(b[4:]); v != transferVersion {
		return r, fmt.Errorf("install record version %d, this build reads %d: %w", v, transferVersion, ErrCorrupt)
	}
	r.generation, r.first, r.end, r.messages, r.flags = le.Uint64(b[6:]), le.Uint64(b[14:]), le.Uint64(b[22:]), le.Uint64(b[30:]), le.Uint64(b[38:])
	n := le.Uint32(b[46:])
	rest := b[head : len(b)-8]
	if n > transferNamesMax {
		return r, fmt.Errorf("install record of %d names: %w", n, ErrCorrupt)
	}
	for i := uint32(0); i < n; i++ {
		if len(rest) < 1 || int(rest[0]) > len(rest)-1 {
			return r, fmt.Errorf("install record name %d truncated: %w", i, ErrCorrupt)
		}
		name := string(rest[1 : 1+int(rest[0])])
		if _, _, ok := ParseSegmentFileName(name); !ok {
			return r, fmt.Errorf("install record name %q: %w", name, ErrCorrupt)
		}
		r.names = append(r.names, name)
		rest = rest[1+int(rest[0]):]
	}
	if len(rest) != 0 {
		return r, fmt.Errorf("install record: %d bytes after the names: %w", len(rest), ErrCorrupt)
	}
	return r, nil
}

// CommitStagedSegments commits the segment files staged in dir's
// TransferStagingDir as the partition's log for the messages [first, end)
// of purge generation generation (flags: the partition superblock's
// Flags). It checks that the staged `.log` files tile whole batches with
// contiguous offsets, that the first starts at or before first and the
// last ends at end (with no `.log` at all, an empty segment at first is
// staged), syncs every staged file and the install record, and renames the
// staging directory to TransferReadyDir, syncing the partition directory:
// from then on FinishSegmentInstall installs it, even after a crash. A
// failure before the rename leaves the log as it was.
func CommitStagedSegments(fsys FS, dir string, generation, first, end, flags uint64) error {
	staging := path.Join(dir, TransferStagingDir)
	entries, err := fsys.ReadDir(staging)
	if err != nil {
		return fmt.Errorf("list %s: %w", staging, err)
	}
	rec := transferRecord{generation: generation, first: first, end: end, flags: flags}
	var starts []uint64
	logs := map[uint64]bool{}
	for _, e := range entries {
		start, isLog, ok := ParseSegmentFileName(e.Name)
		if e.IsDir || !ok {
			return fmt.Errorf("%s: unexpected entry %q: %w", staging, e.Name, ErrInvalidArgument)
		}
		rec.names = append(rec.names, e.Name)
		if isLog {
			starts = append(starts, start)
			logs[start] = true
		}
	}
	for _, name := range rec.names {
		if start, isLog, _ := ParseSegmentFileName(name); !isLog && !logs[start] {
			return fmt.Errorf("%s: index %s without its log: %w", staging, name, ErrInvalidArgument)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	if len(starts) == 0 {
		for _, name := range []string{SegmentLogName(first), SegmentIndexName(first)} {
			if err := writeFull(fsys, path.Join(staging, name), nil, true); err != nil {
				return err
			}
			rec.names = append(rec.names, name)
		}
		rec.first = first
	} else {
		if starts[0] > first {
			return fmt.Errorf("%s: the first staged segment starts at %d, after %d: %w", staging, starts[0], first, ErrInvalidArgument)
		}
		rec.first = starts[0]
		next := starts[0]
		for _, start := range starts {
			if start < next {
				return fmt.Errorf("%s: segment %d starts inside the previous one (ends at %d): %w", staging, start, next, ErrInvalidArgument)
			}
			n, segEnd, err := scanStagedSegment(fsys, path.Join(staging, SegmentLogName(start)), start)
			if err != nil {
				return err
			}
			rec.messages += n
			next = segEnd
		}
		if next != end {
			return fmt.Errorf("%s: the staged segments end at offset %d, not %d: %w", staging, next, end, ErrInvalidArgument)
		}
	}
	for _, name := range rec.names {
		if err := syncFile(fsys, path.Join(staging, name)); err != nil {
			return err
		}
	}
	if err := writeFull(fsys, path.Join(staging, transferRecordName), rec.encode(), true); err != nil {
		return err
	}
	if err := fsys.SyncDir(staging); err != nil {
		return fmt.Errorf("sync directory %s: %w", staging, err)
	}
	ready := path.Join(dir, TransferReadyDir)
	if err := fsys.RemoveAll(ready); err != nil {
		return fmt.Errorf("remove %s: %w", ready, err)
	}
	if err := fsys.Rename(staging, ready); err != nil {
		return fmt.Errorf("rename %s to %s: %w", staging, ready, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// scanStagedSegment reads the batch headers of a staged `.log` file: the
// batches must tile the file with contiguous offsets from start. It
// returns the messages and the offset after the last.
func scanStagedSegment(fsys FS, name string, start uint64) (uint64, uint64, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, 0, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, 0, fmt.Errorf("size of %s: %w", name, err)
	}
	var hdr [wire.BatchHeaderSize]byte
	next, messages := start, uint64(0)
	for pos := int64(0); pos < size; {
		if _, err := f.ReadAt(hdr[:], pos); err != nil {
			return 0, 0, fmt.Errorf("%s at byte %d: a truncated batch: %w", name, pos, ErrCorrupt)
		}
		v := wire.BatchView(hdr[:])
		n := v.BatchLength()
		if n < batchLengthMin || n > uint64(size-pos) || v.MessageCount() == 0 || v.BaseOffset() != next {
			return 0, 0, fmt.Errorf("%s at byte %d: a batch of %d bytes, %d messages at offset %d, want offset %d: %w",
				name, pos, n, v.MessageCount(), v.BaseOffset(), next, ErrCorrupt)
		}
		next += uint64(v.MessageCount())
		messages += uint64(v.MessageCount())
		pos += int64(n)
	}
	return messages, next, nil
}

func syncFile(fsys FS, name string) error {
	f, err := fsys.OpenReadWrite(name)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return errors.Join(fmt.Errorf("sync %s: %w", name, err), f.Close())
	}
	return f.Close()
}

// InstallReport says what FinishSegmentInstall found.
type InstallReport struct {
	// StagingRemoved: a staging directory (a transfer a crash or a
	// failure interrupted before its commit) was removed.
	StagingRemoved bool
	// Installed: a committed install was put in place.
	Installed bool
}

// FinishSegmentInstall runs before dir's log is opened (and after
// CommitStagedSegments, with the log closed): it removes a leftover
// staging directory and puts a committed install in place: every segment
// file of dir the install does not name is removed, the install's files
// are renamed into dir, the superblock of the new log is stored (its
// durable frontier at the range's end, its reservation there too) and the
// ready directory goes. Every step may run again after a crash.
func FinishSegmentInstall(fsys FS, dir string) (InstallReport, error) {
	var report InstallReport
	staging, ready := path.Join(dir, TransferStagingDir), path.Join(dir, TransferReadyDir)
	if ok, err := Exists(fsys, staging); err != nil {
		return report, err
	} else if ok {
		if err := fsys.RemoveAll(staging); err != nil {
			return report, fmt.Errorf("remove %s: %w", staging, err)
		}
		report.StagingRemoved = true
	}
	ok, err := Exists(fsys, ready)
	if err != nil {
		return report, err
	}
	if !ok {
		if report.StagingRemoved {
			if err := fsys.SyncDir(dir); err != nil {
				return report, fmt.Errorf("sync directory %s: %w", dir, err)
			}
		}
		return report, nil
	}
	raw, err := readFull(fsys, path.Join(ready, transferRecordName))
	if err != nil {
		return report, fmt.Errorf("read the install record of %s: %w", ready, err)
	}
	rec, err := decodeTransferRecord(raw)
	if err != nil {
		return report, fmt.Errorf("%s: %w", ready, err)
	}
	keep := make(map[string]bool, len(rec.names))
	for _, n := range rec.names {
		keep[n] = true
	}
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return report, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		if _, _, seg := ParseSegmentFileName(e.Name); e.IsDir || !seg || keep[e.Name] {
			continue
		}
		if err := fsys.Remove(path.Join(dir, e.Name)); err != nil && !errors.Is(err, ErrNotExist) {
			return report, fmt.Errorf("remove %s: %w", path.Join(dir, e.Name), err)
		}
	}
	for _, n := range rec.names {
		from := path.Join(ready, n)
		if ok, err := Exists(fsys, from); err != nil {
			return report, err
		} else if !ok {
			continue // moved before a crash
		}
		if err := fsys.Rename(from, path.Join(dir, n)); err != nil {
			return report, fmt.Errorf("rename %s into %s: %w", from, dir, err)
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		return report, fmt.Errorf("sync directory %s: %w", dir, err)
	}
	next := PartitionSuperblock{PurgeGeneration: rec.generation, FirstOffset: rec.first, DurableOffset: rec.end,
		Flags: rec.flags, DurableMessages: rec.messages, ReservedOffset: rec.end}
	if sb, sbReport, err := LoadPartitionSuperblock(fsys, dir); err == nil && sbReport.Found {
		next.Sequence = sb.Sequence + 1
		err = StorePartitionSuperblock(fsys, dir, next)
		if err != nil {
			return report, fmt.Errorf("store the superblock of the installed segments of %s: %w", dir, err)
		}
	} else if _, err := CreatePartitionSuperblock(fsys, dir, next); err != nil {
		return report, fmt.Errorf("create the superblock of the installed segments of %s: %w", dir, err)
	}
	if err := fsys.RemoveAll(ready); err != nil {
		return report, fmt.Errorf("remove %s: %w", ready, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return report, fmt.Errorf("sync directory %s: %w", dir, err)
	}
	report.Installed = true
	return report, nil
}
