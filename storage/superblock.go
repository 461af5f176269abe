package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"

	"github.com/zeebo/xxh3"
)

// Superblock record layout of the partition superblocks (the metadata
// group keeps its own, storage/FORMATS.md; SuperblockSize bytes, little-endian):
//
//	0   magic u32       4 version u16    6 reserved u16 (0)
//	8   sequence u64
//	16  fields [8]u64   (meaning per kind and version)
//	80  reserved [40]byte (0)
//	120 checksum u64 = XXH3-64 of bytes 0..120
//
// A superblock is written to two files in turn, `superblock.a` for odd
// sequence numbers and `superblock.b` for even ones, so a torn write
// leaves the other copy intact; load takes the valid copy with the highest
// sequence. Both copies are written when a superblock is created, so one
// damaged file never leaves none.
const (
	// SuperblockSize is the size of one superblock copy.
	SuperblockSize     = 128
	superblockFieldsAt = 16
	superblockFields   = 8
	superblockSumAt    = 120
	superblockFileA    = "superblock.a"
	superblockFileB    = "superblock.b"
	// partitionSuperblockMagic is "SPSB" little-endian.
	partitionSuperblockMagic = 0x42535053
	// PartitionSuperblockVersion is the partition superblock version
	// written: 2 added the durable message count and the offset
	// reservation. Version 1 still loads (see PartitionSuperblock).
	PartitionSuperblockVersion = 2
)

// superblockKind names a superblock's magic and the versions it accepts
// (1..version; version is written).
type superblockKind struct {
	magic   uint32
	version uint16
}

var (
	partitionKind = superblockKind{partitionSuperblockMagic, PartitionSuperblockVersion}
)

// superblockRecord is the kind-independent content of a superblock.
type superblockRecord struct {
	version  uint16 // 0 when encoding: the kind's current version
	sequence uint64
	fields   [superblockFields]uint64
}

func encodeSuperblock(kind superblockKind, r superblockRecord) [SuperblockSize]byte {
	var b [SuperblockSize]byte
	version := r.version
	if version == 0 {
		version = kind.version
	}
	binary.LittleEndian.PutUint32(b[0:], kind.magic)
	binary.LittleEndian.PutUint16(b[4:], version)
	binary.LittleEndian.PutUint64(b[8:], r.sequence)
	for i, v := range r.fields {
		binary.LittleEndian.PutUint64(b[superblockFieldsAt+8*i:], v)
	}
	binary.LittleEndian.PutUint64(b[superblockSumAt:], xxh3.Hash(b[:superblockSumAt]))
	return b
}

func decodeSuperblock(kind superblockKind, b []byte) (superblockRecord, error) {
	var r superblockRecord
	if len(b) != SuperblockSize {
		return r, fmt.Errorf("superblock of %d bytes: %w", len(b), ErrCorrupt)
	}
	if binary.LittleEndian.Uint64(b[superblockSumAt:]) != xxh3.Hash(b[:superblockSumAt]) {
		return r, fmt.Errorf("superblock checksum: %w", ErrCorrupt)
	}
	magic, version := binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint16(b[4:])
	if magic != kind.magic || version == 0 || version > kind.version {
		return r, fmt.Errorf("superblock magic %#x version %d (this build reads versions 1 to %d): %w", magic, version, kind.version, ErrCorrupt)
	}
	if binary.LittleEndian.Uint16(b[6:]) != 0 {
		return r, fmt.Errorf("superblock reserved bytes: %w", ErrCorrupt)
	}
	for _, c := range b[superblockFieldsAt+8*superblockFields : superblockSumAt] {
		if c != 0 {
			return r, fmt.Errorf("superblock reserved bytes: %w", ErrCorrupt)
		}
	}
	r.version = version
	r.sequence = binary.LittleEndian.Uint64(b[8:])
	for i := range r.fields {
		r.fields[i] = binary.LittleEndian.Uint64(b[superblockFieldsAt+8*i:])
	}
	return r, nil
}

// SuperblockReport says which copy a load used and which copies were
// damaged (the caller logs those as warnings).
type SuperblockReport struct {
	Found bool   // at least one copy exists
	File  string // the copy used, "" when none
	// Valid counts the valid copies (2 in a healthy directory; a caller
	// rewrites the other copy when it is 1).
	Valid int
	// Invalid describes each damaged or unreadable copy ("path: reason").
	Invalid []string
}

// loadSuperblock reads both copies in dir and returns the valid one with
// the highest sequence; check (nil: none) validates a decoded record's
// fields. No copy at all is not an error (Found = false); a copy that
// cannot be read or fails a check counts as damaged, so the other one is
// still used; copies that exist but none valid is ErrNoSuperblock.
func loadSuperblock(fsys FS, dir string, kind superblockKind, check func(superblockRecord) error) (superblockRecord, SuperblockReport, error) {
	var best superblockRecord
	var report SuperblockReport
	for _, name := range []string{superblockFileA, superblockFileB} {
		p := path.Join(dir, name)
		image, err := readFull(fsys, p)
		if errors.Is(err, ErrNotExist) {
			continue
		}
		report.Found = true
		var r superblockRecord
		if err != nil {
			err = fmt.Errorf("read: %w", err)
		} else if r, err = decodeSuperblock(kind, image); err == nil && check != nil {
			err = check(r)
		}
		if err != nil {
			report.Invalid = append(report.Invalid, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		report.Valid++
		if report.File == "" || r.sequence > best.sequence {
			best, report.File = r, p
		}
	}
	if report.Found && report.File == "" {
		return best, report, fmt.Errorf("%s: %w: %v", dir, ErrNoSuperblock, report.Invalid)
	}
	return best, report, nil
}

// superblockCopy returns the path of the copy a sequence selects.
func superblockCopy(dir string, sequence uint64) string {
	if sequence%2 == 1 {
		return path.Join(dir, superblockFileA)
	}
	return path.Join(dir, superblockFileB)
}

// writeSuperblockCopy writes r to the copy its sequence selects without
// syncing it and returns the open file: the caller syncs it (and, when
// created is set, the directory) before relying on it, then closes it.
// The caller must not write a copy while the other one is not durable.
func writeSuperblockCopy(fsys FS, dir string, kind superblockKind, r superblockRecord) (f File, created bool, err error) {
	if r.sequence == 0 {
		return nil, false, fmt.Errorf("superblock sequence 0 (sequences start at 1): %w", ErrInvalidArgument)
	}
	p := superblockCopy(dir, r.sequence)
	existed, err := Exists(fsys, p)
	if err != nil {
		return nil, false, fmt.Errorf("stat %s: %w", p, err)
	}
	image := encodeSuperblock(kind, r)
	if _, err := decodeSuperblock(kind, image[:]); err != nil { // verify before writing
		return nil, false, err
	}
	if f, err = fsys.OpenReadWrite(p); err != nil {
		return nil, false, fmt.Errorf("open %s: %w", p, err)
	}
	if _, err := f.WriteAt(image[:], 0); err != nil {
		return nil, false, errors.Join(fmt.Errorf("write %s: %w", p, err), f.Close())
	}
	if size, err := f.Size(); err != nil || size != SuperblockSize {
		if err == nil {
			err = f.Truncate(SuperblockSize)
		}
		if err != nil {
			return nil, false, errors.Join(fmt.Errorf("truncate %s: %w", p, err), f.Close())
		}
	}
	return f, !existed, nil
}

// storeSuperblock writes r to the copy its sequence selects and syncs it
// (and the directory when the copy is new).
func storeSuperblock(fsys FS, dir string, kind superblockKind, r superblockRecord) error {
	f, created, err := writeSuperblockCopy(fsys, dir, kind, r)
	if err != nil {
		return err
	}
	return finishSuperblockCopy(fsys, dir, f, created, f.Sync())
}

// finishSuperblockCopy ends a copy written by writeSuperblockCopy once
// its sync returned syncErr: it syncs the directory for a new copy and
// closes the file.
func finishSuperblockCopy(fsys FS, dir string, f File, created bool, syncErr error) error {
	if syncErr != nil {
		return errors.Join(fmt.Errorf("sync superblock in %s: %w", dir, syncErr), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close superblock in %s: %w", dir, err)
	}
	if created {
		if err := fsys.SyncDir(dir); err != nil {
			return fmt.Errorf("sync directory %s: %w", dir, err)
		}
	}
	return nil
}

// createSuperblock writes a new superblock to both copies: r at its
// sequence and again at the next one, so one damaged file never leaves
// none. It returns the second record (the one a load picks).
func createSuperblock(fsys FS, dir string, kind superblockKind, r superblockRecord) (superblockRecord, error) {
	if err := storeSuperblock(fsys, dir, kind, r); err != nil {
		return r, err
	}
	r.sequence++
	return r, storeSuperblock(fsys, dir, kind, r)
}

// PartitionSuperblock is a partition's durable control record.
//
// Version 1 (before the durable message count and the reservation) loads
// with DurableMessages and ReservedOffset 0: recovery then skips the
// message count check and reserves nothing; the next store writes
// version 2. Older builds refuse a version-2 copy as corrupt, so they
// never reuse offsets they do not know were reserved.
type PartitionSuperblock struct {
	// Version is the copy's format version when loaded (1 or 2); 0 when
	// building one to store means the current version.
	Version uint16
	// Sequence orders the copies; each store uses the previous + 1.
	Sequence uint64
	// PurgeGeneration is the metadata op of the last purge carried out.
	PurgeGeneration uint64
	// FirstOffset is the start of the oldest segment the partition keeps:
	// segments entirely below it are left over from a retention deletion
	// interrupted by a crash, and recovery finishes it.
	FirstOffset uint64
	// DurableOffset is the durable frontier: every stored message below
	// it was durable in the segment files when the superblock was stored.
	// Recovery never cuts bytes below it: damage there fences the log.
	DurableOffset uint64
	// Flags identify the partition (the server stores its creation time
	// here, to tell a directory left by an older partition of the same
	// ids).
	Flags uint64
	// DurableMessages (version 2) is how many messages are stored with
	// offsets in [FirstOffset, DurableOffset): recovery fences a log that
	// holds another number (a lost or extra segment).
	DurableMessages uint64
	// ReservedOffset (version 2) ends the offset reservation: offsets
	// below it may have been handed out. Recovery starts the next message
	// at it when the log ends before it, so no offset is given twice.
	ReservedOffset uint64
}

func (s PartitionSuperblock) record() superblockRecord {
	return superblockRecord{version: s.Version, sequence: s.Sequence,
		fields: [superblockFields]uint64{s.PurgeGeneration, s.FirstOffset, s.DurableOffset, s.Flags, s.DurableMessages, s.ReservedOffset}}
}

// EncodePartitionSuperblock returns the on-disk image of s (in the
// current version unless s.Version names an older one).
func EncodePartitionSuperblock(s PartitionSuperblock) [SuperblockSize]byte {
	return encodeSuperblock(partitionKind, s.record())
}

// DecodePartitionSuperblock decodes and verifies one copy.
func DecodePartitionSuperblock(b []byte) (PartitionSuperblock, error) {
	r, err := decodeSuperblock(partitionKind, b)
	if err != nil {
		return PartitionSuperblock{}, err
	}
	return partitionSuperblockOf(r)
}

func partitionSuperblockOf(r superblockRecord) (PartitionSuperblock, error) {
	used := 6 // version 2
	if r.version == 1 {
		used = 4
	}
	for _, v := range r.fields[used:] {
		if v != 0 {
			return PartitionSuperblock{}, fmt.Errorf("partition superblock version %d unused fields: %w", r.version, ErrCorrupt)
		}
	}
	return PartitionSuperblock{
		Version: r.version, Sequence: r.sequence, PurgeGeneration: r.fields[0], FirstOffset: r.fields[1],
		DurableOffset: r.fields[2], Flags: r.fields[3], DurableMessages: r.fields[4], ReservedOffset: r.fields[5],
	}, nil
}

// LoadPartitionSuperblock loads the newest valid copy from the partition
// directory. report.Found is false for a partition that has none yet.
func LoadPartitionSuperblock(fsys FS, dir string) (PartitionSuperblock, SuperblockReport, error) {
	r, report, err := loadSuperblock(fsys, dir, partitionKind, func(r superblockRecord) error {
		_, err := partitionSuperblockOf(r)
		return err
	})
	if err != nil || !report.Found {
		return PartitionSuperblock{}, report, err
	}
	s, err := partitionSuperblockOf(r)
	return s, report, err
}

// StorePartitionSuperblock durably writes s to the copy its Sequence
// selects (odd: superblock.a, even: superblock.b). Callers pass the loaded
// Sequence + 1.
func StorePartitionSuperblock(fsys FS, dir string, s PartitionSuperblock) error {
	return storeSuperblock(fsys, dir, partitionKind, s.record())
}

// HasSegmentData reports whether dir holds a segment log file with data
// (a partition directory whose superblock is gone must not be taken for
// an empty one).
func HasSegmentData(fsys FS, dir string) (bool, error) {
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		if _, ok := parseSegmentLogName(e.Name); !ok || e.IsDir {
			continue
		}
		info, err := fsys.Stat(path.Join(dir, e.Name))
		if err != nil {
			return false, fmt.Errorf("stat %s: %w", path.Join(dir, e.Name), err)
		}
		if info.Size > 0 {
			return true, nil
		}
	}
	return false, nil
}

// CreatePartitionSuperblock durably writes the first superblock of a new
// partition to both copies (sequences 1 and 2) and returns it as stored
// last (Sequence 2). s.Sequence is ignored.
func CreatePartitionSuperblock(fsys FS, dir string, s PartitionSuperblock) (PartitionSuperblock, error) {
	s.Sequence, s.Version = 1, 0
	r, err := createSuperblock(fsys, dir, partitionKind, s.record())
	if err != nil {
		return PartitionSuperblock{}, err
	}
	s.Sequence, s.Version = r.sequence, PartitionSuperblockVersion
	return s, nil
}
