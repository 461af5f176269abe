package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"

	"github.com/zeebo/xxh3"
)

// Superblock record layout, shared by the partition and the metadata
// superblocks (SuperblockSize bytes, little-endian):
//
//	0   magic u32       4 version u16    6 reserved u16 (0)
//	8   sequence u64
//	16  fields [8]u64   (meaning per kind)
//	80  reserved [40]byte (0)
//	120 checksum u64 = XXH3-64 of bytes 0..120
//
// A superblock is written to two files in turn, `superblock.a` for odd
// sequence numbers and `superblock.b` for even ones, so a torn write
// leaves the other copy intact; load takes the valid copy with the highest
// sequence.
const (
	// SuperblockSize is the size of one superblock copy.
	SuperblockSize     = 128
	superblockVersion  = 1
	superblockFieldsAt = 16
	superblockFields   = 8
	superblockSumAt    = 120
	superblockFileA    = "superblock.a"
	superblockFileB    = "superblock.b"
	// partitionSuperblockMagic is "SPSB" little-endian.
	partitionSuperblockMagic = 0x42535053
	// metadataSuperblockMagic is "SMSB" little-endian.
	metadataSuperblockMagic = 0x42534d53
)

// superblockRecord is the kind-independent content of a superblock.
type superblockRecord struct {
	sequence uint64
	fields   [superblockFields]uint64
}

func encodeSuperblock(magic uint32, r superblockRecord) [SuperblockSize]byte {
	var b [SuperblockSize]byte
	binary.LittleEndian.PutUint32(b[0:], magic)
	binary.LittleEndian.PutUint16(b[4:], superblockVersion)
	binary.LittleEndian.PutUint64(b[8:], r.sequence)
	for i, v := range r.fields {
		binary.LittleEndian.PutUint64(b[superblockFieldsAt+8*i:], v)
	}
	binary.LittleEndian.PutUint64(b[superblockSumAt:], xxh3.Hash(b[:superblockSumAt]))
	return b
}

func decodeSuperblock(magic uint32, b []byte) (superblockRecord, error) {
	var r superblockRecord
	if len(b) != SuperblockSize {
		return r, fmt.Errorf("superblock of %d bytes: %w", len(b), ErrCorrupt)
	}
	if binary.LittleEndian.Uint64(b[superblockSumAt:]) != xxh3.Hash(b[:superblockSumAt]) {
		return r, fmt.Errorf("superblock checksum: %w", ErrCorrupt)
	}
	if binary.LittleEndian.Uint32(b[0:]) != magic || binary.LittleEndian.Uint16(b[4:]) != superblockVersion {
		return r, fmt.Errorf("superblock magic %#x version %d: %w", binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint16(b[4:]), ErrCorrupt)
	}
	if binary.LittleEndian.Uint16(b[6:]) != 0 {
		return r, fmt.Errorf("superblock reserved bytes: %w", ErrCorrupt)
	}
	for _, c := range b[superblockFieldsAt+8*superblockFields : superblockSumAt] {
		if c != 0 {
			return r, fmt.Errorf("superblock reserved bytes: %w", ErrCorrupt)
		}
	}
	r.sequence = binary.LittleEndian.Uint64(b[8:])
	for i := range r.fields {
		r.fields[i] = binary.LittleEndian.Uint64(b[superblockFieldsAt+8*i:])
	}
	return r, nil
}

// SuperblockReport says which copy a load used and which copies were
// damaged (the caller logs those as warnings).
type SuperblockReport struct {
	Found   bool   // at least one copy exists
	File    string // the copy used, "" when none
	Invalid []string
}

// loadSuperblock reads both copies in dir and returns the valid one with
// the highest sequence. No copy at all is not an error (Found = false);
// copies that exist but none valid is ErrNoSuperblock.
func loadSuperblock(fsys FS, dir string, magic uint32) (superblockRecord, SuperblockReport, error) {
	var best superblockRecord
	var report SuperblockReport
	for _, name := range []string{superblockFileA, superblockFileB} {
		p := path.Join(dir, name)
		image, err := readFull(fsys, p)
		if errors.Is(err, ErrNotExist) {
			continue
		}
		if err != nil {
			return best, report, fmt.Errorf("read %s: %w", p, err)
		}
		report.Found = true
		r, err := decodeSuperblock(magic, image)
		if err != nil {
			report.Invalid = append(report.Invalid, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		if report.File == "" || r.sequence > best.sequence {
			best, report.File = r, p
		}
	}
	if report.Found && report.File == "" {
		return best, report, fmt.Errorf("%s: %w: %v", dir, ErrNoSuperblock, report.Invalid)
	}
	return best, report, nil
}

// storeSuperblock writes r to the copy its sequence selects and syncs it
// (and the directory when the copy is new).
func storeSuperblock(fsys FS, dir string, magic uint32, r superblockRecord) error {
	if r.sequence == 0 {
		return fmt.Errorf("superblock sequence 0 (sequences start at 1): %w", ErrInvalidArgument)
	}
	name := superblockFileB
	if r.sequence%2 == 1 {
		name = superblockFileA
	}
	p := path.Join(dir, name)
	existed, err := Exists(fsys, p)
	if err != nil {
		return fmt.Errorf("stat %s: %w", p, err)
	}
	image := encodeSuperblock(magic, r)
	if err := writeFull(fsys, p, image[:], true); err != nil {
		return err
	}
	if !existed {
		if err := fsys.SyncDir(dir); err != nil {
			return fmt.Errorf("sync directory %s: %w", dir, err)
		}
	}
	return nil
}

// PartitionSuperblock is a partition's durable control record.
type PartitionSuperblock struct {
	// Sequence orders the copies; each store uses the previous + 1.
	Sequence uint64
	// PurgeGeneration counts purges of the partition.
	PurgeGeneration uint64
	// FirstOffset is the oldest offset the partition holds.
	FirstOffset uint64
	// NextOffset is the recovery frontier: the offset the next message
	// gets; offsets below it may not be reused.
	NextOffset uint64
	// Flags are reserved for the partition code (0 today).
	Flags uint64
}

func (s PartitionSuperblock) record() superblockRecord {
	return superblockRecord{sequence: s.Sequence,
		fields: [superblockFields]uint64{s.PurgeGeneration, s.FirstOffset, s.NextOffset, s.Flags}}
}

// EncodePartitionSuperblock returns the on-disk image of s.
func EncodePartitionSuperblock(s PartitionSuperblock) [SuperblockSize]byte {
	return encodeSuperblock(partitionSuperblockMagic, s.record())
}

// DecodePartitionSuperblock decodes and verifies one copy.
func DecodePartitionSuperblock(b []byte) (PartitionSuperblock, error) {
	r, err := decodeSuperblock(partitionSuperblockMagic, b)
	if err != nil {
		return PartitionSuperblock{}, err
	}
	return partitionSuperblockOf(r)
}

func partitionSuperblockOf(r superblockRecord) (PartitionSuperblock, error) {
	for _, v := range r.fields[4:] {
		if v != 0 {
			return PartitionSuperblock{}, fmt.Errorf("partition superblock unused fields: %w", ErrCorrupt)
		}
	}
	return PartitionSuperblock{
		Sequence: r.sequence, PurgeGeneration: r.fields[0], FirstOffset: r.fields[1],
		NextOffset: r.fields[2], Flags: r.fields[3],
	}, nil
}

// LoadPartitionSuperblock loads the newest valid copy from the partition
// directory. report.Found is false for a partition that has none yet.
func LoadPartitionSuperblock(fsys FS, dir string) (PartitionSuperblock, SuperblockReport, error) {
	r, report, err := loadSuperblock(fsys, dir, partitionSuperblockMagic)
	if err != nil || !report.Found {
		return PartitionSuperblock{}, report, err
	}
	s, err := partitionSuperblockOf(r)
	return s, report, err
}

// StorePartitionSuperblock durably writes s to the copy its Sequence
// selects (odd: superblock.a, even: superblock.b). Callers pass the loaded
// Sequence + 1 (1 for a new partition).
func StorePartitionSuperblock(fsys FS, dir string, s PartitionSuperblock) error {
	return storeSuperblock(fsys, dir, partitionSuperblockMagic, s.record())
}
