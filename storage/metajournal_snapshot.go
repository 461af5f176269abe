package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
)

// Metadata snapshot file (`metadata/snapshot.bin`): a SnapshotHeaderSize
// header, then the state bytes (little-endian):
//
//	0  magic u32 "SMSN"   4 version u16   6 reserved u16 (0)
//	8  op u64 (the last operation the state includes)
//	16 state length u64
//	24 state checksum u64 (XXH3-64 of the state)
//	32 reserved [24]byte (0)
//	56 header checksum u64 (XXH3-64 of bytes 0..56)
const (
	// SnapshotHeaderSize is the size of the snapshot header.
	SnapshotHeaderSize = 64
	// SnapshotStateMax bounds the state a snapshot may hold.
	SnapshotStateMax    = 1 << 30
	snapshotMagic       = 0x4e534d53 // "SMSN" little-endian
	snapshotVersion     = 1
	snapshotHeaderSumAt = 56
)

// EncodeSnapshot returns the snapshot file image for state at op.
func EncodeSnapshot(op uint64, state []byte) []byte {
	b := make([]byte, SnapshotHeaderSize+len(state))
	binary.LittleEndian.PutUint32(b[0:], snapshotMagic)
	binary.LittleEndian.PutUint16(b[4:], snapshotVersion)
	binary.LittleEndian.PutUint64(b[8:], op)
	binary.LittleEndian.PutUint64(b[16:], uint64(len(state)))
	binary.LittleEndian.PutUint64(b[24:], xxh3.Hash(state))
	binary.LittleEndian.PutUint64(b[snapshotHeaderSumAt:], xxh3.Hash(b[:snapshotHeaderSumAt]))
	copy(b[SnapshotHeaderSize:], state)
	return b
}

// DecodeSnapshot verifies a snapshot file image and returns its op, the
// state (aliasing b) and the state checksum.
func DecodeSnapshot(b []byte) (op uint64, state []byte, stateChecksum uint64, err error) {
	if len(b) < SnapshotHeaderSize {
		return 0, nil, 0, fmt.Errorf("snapshot of %d bytes: %w", len(b), ErrCorrupt)
	}
	if binary.LittleEndian.Uint64(b[snapshotHeaderSumAt:]) != xxh3.Hash(b[:snapshotHeaderSumAt]) {
		return 0, nil, 0, fmt.Errorf("snapshot header checksum: %w", ErrCorrupt)
	}
	if binary.LittleEndian.Uint32(b[0:]) != snapshotMagic || binary.LittleEndian.Uint16(b[4:]) != snapshotVersion ||
		binary.LittleEndian.Uint16(b[6:]) != 0 {
		return 0, nil, 0, fmt.Errorf("snapshot magic or version: %w", ErrCorrupt)
	}
	for _, c := range b[32:snapshotHeaderSumAt] {
		if c != 0 {
			return 0, nil, 0, fmt.Errorf("snapshot reserved bytes: %w", ErrCorrupt)
		}
	}
	length := binary.LittleEndian.Uint64(b[16:])
	if length > SnapshotStateMax || length != uint64(len(b)-SnapshotHeaderSize) {
		return 0, nil, 0, fmt.Errorf("snapshot state of %d bytes in a %d-byte file: %w", length, len(b), ErrCorrupt)
	}
	state = b[SnapshotHeaderSize:]
	stateChecksum = binary.LittleEndian.Uint64(b[24:])
	if xxh3.Hash(state) != stateChecksum {
		return 0, nil, 0, fmt.Errorf("snapshot state checksum: %w", ErrCorrupt)
	}
	return binary.LittleEndian.Uint64(b[8:]), state, stateChecksum, nil
}

// MetadataSuperblock records the metadata checkpoint.
type MetadataSuperblock struct {
	Sequence      uint64 // orders the two copies
	CheckpointOp  uint64 // the op the snapshot includes
	StateChecksum uint64 // the snapshot's state checksum
	StateLength   uint64 // the snapshot's state length
}

func (s MetadataSuperblock) record() superblockRecord {
	return superblockRecord{sequence: s.Sequence,
		fields: [superblockFields]uint64{s.CheckpointOp, s.StateChecksum, s.StateLength}}
}

// EncodeMetadataSuperblock returns the on-disk image of s.
func EncodeMetadataSuperblock(s MetadataSuperblock) [SuperblockSize]byte {
	return encodeSuperblock(metadataKind, s.record())
}

// DecodeMetadataSuperblock decodes and verifies one copy.
func DecodeMetadataSuperblock(b []byte) (MetadataSuperblock, error) {
	r, err := decodeSuperblock(metadataKind, b)
	if err != nil {
		return MetadataSuperblock{}, err
	}
	return metadataSuperblockOf(r)
}

func metadataSuperblockOf(r superblockRecord) (MetadataSuperblock, error) {
	for _, v := range r.fields[3:] {
		if v != 0 {
			return MetadataSuperblock{}, fmt.Errorf("metadata superblock unused fields: %w", ErrCorrupt)
		}
	}
	return MetadataSuperblock{Sequence: r.sequence, CheckpointOp: r.fields[0], StateChecksum: r.fields[1], StateLength: r.fields[2]}, nil
}
