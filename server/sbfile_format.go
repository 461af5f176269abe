package server

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/vsr"
)

// The node's superblock file, consensus/superblocks.sb (storage/FORMATS.md).
//
// The superblock zone of every partition group on the node lives in one
// file of fixed-size slots, so that the superblock syncs of many groups
// (a view change of every group at once) are served by one fdatasync per
// shard and round instead of one per group (sbfile_sync.go). The layout:
//
//	sector 0          file header: magic "SSBF", version, slot and zone size
//	then slot i       at sbFileHeaderSize + i*slotSize:
//	  one sector        slot header: magic "SBSL", version, state, group id,
//	                    slot index, checksum
//	  zone size bytes   the group's superblock zone image, exactly as vsr
//	                    writes it (its copies and its quorum read unchanged)
//
// A slot header names its group and its own index and carries a checksum
// of both: a damaged header, or one written to the wrong slot, is never
// taken for another group's slot (decodeSlotHeader).

const (
	// sbFileDir and sbFileName name the file under the data directory.
	sbFileDir  = "consensus"
	sbFileName = "superblocks.sb"
	// sbFileVersion is the version of superblocks.sb this build reads.
	sbFileVersion = 1
	sbFileMagic   = "SSBF"
	sbSlotMagic   = "SBSL"
	// sbFileHeaderSize and sbSlotHeaderSize are one sector each, so that
	// every zone image stays sector aligned and a header never shares a
	// sector (a torn write) with superblock copies.
	sbFileHeaderSize = vsr.SectorSize
	sbSlotHeaderSize = vsr.SectorSize
	// sbHeaderBytes is the encoded part of either header; the rest of the
	// sector is zero.
	sbHeaderBytes = 64
	// sbSlotsMax bounds the slots of the file (and the boot scan): one per
	// partition group on the node.
	sbSlotsMax = 1 << 20
	// sbZoneSizeMax bounds a slot's zone image (a header from disk names it).
	sbZoneSizeMax = 1 << 20
)

// The states of a slot.
const (
	// slotFree: never written (all zero).
	slotFree uint8 = iota
	// slotAllocated: the slot holds the superblock zone of the named group.
	slotAllocated
	// slotTombstone: the group was deleted; the slot may be reused.
	slotTombstone
)

// errSBFormat reports a superblocks.sb this build cannot read.
var errSBFormat = errors.New("node superblock file in another format")

// errSlotHeader reports a slot header that does not decode.
var errSlotHeader = errors.New("superblock slot header invalid")

// slotHeader is a decoded slot header.
type slotHeader struct {
	state uint8
	group uint64
	index uint32
}

// encodeSBFileHeader lays out the file header sector: magic, version,
// zone size, slot size and a checksum of the first 56 bytes.
func encodeSBFileHeader(zoneSize uint64) []byte {
	hdr := make([]byte, sbFileHeaderSize)
	copy(hdr, sbFileMagic)
	binary.LittleEndian.PutUint16(hdr[4:], sbFileVersion)
	binary.LittleEndian.PutUint64(hdr[8:], zoneSize)
	binary.LittleEndian.PutUint64(hdr[16:], sbSlotHeaderSize+zoneSize)
	binary.LittleEndian.PutUint64(hdr[56:], xxh3.Hash(hdr[:56]))
	return hdr
}

// decodeSBFileHeader checks a file header sector and returns the zone
// size it records. It never panics.
func decodeSBFileHeader(hdr []byte) (zoneSize uint64, err error) {
	if len(hdr) < sbHeaderBytes || string(hdr[:4]) != sbFileMagic || binary.LittleEndian.Uint64(hdr[56:]) != xxh3.Hash(hdr[:56]) {
		return 0, fmt.Errorf("%w: not a superblock file (bad magic or header checksum)", errSBFormat)
	}
	if v := binary.LittleEndian.Uint16(hdr[4:]); v != sbFileVersion {
		return 0, fmt.Errorf("%w: format version %d, this build reads version %d (no migration: recreate the data directory)", errSBFormat, v, sbFileVersion)
	}
	zoneSize = binary.LittleEndian.Uint64(hdr[8:])
	if zoneSize == 0 || zoneSize > sbZoneSizeMax || zoneSize%vsr.SectorSize != 0 || binary.LittleEndian.Uint64(hdr[16:]) != sbSlotHeaderSize+zoneSize {
		return 0, fmt.Errorf("%w: zone of %d bytes in slots of %d", errSBFormat, zoneSize, binary.LittleEndian.Uint64(hdr[16:]))
	}
	return zoneSize, nil
}

// encodeSlotHeader writes h into sector (a full slot header sector).
func encodeSlotHeader(h slotHeader, sector []byte) {
	clear(sector[:sbSlotHeaderSize])
	copy(sector, sbSlotMagic)
	binary.LittleEndian.PutUint16(sector[4:], sbFileVersion)
	sector[6] = h.state
	binary.LittleEndian.PutUint64(sector[8:], h.group)
	binary.LittleEndian.PutUint32(sector[16:], h.index)
	binary.LittleEndian.PutUint64(sector[56:], xxh3.Hash(sector[:56]))
}

// decodeSlotHeader parses the header sector read at slot index. A sector
// of zeros is a free slot; anything else must carry the magic, the
// version, a known state, index itself (a header written to another slot
// is refused) and a matching checksum. It never panics.
func decodeSlotHeader(sector []byte, index uint32) (slotHeader, error) {
	if len(sector) < sbHeaderBytes {
		return slotHeader{}, fmt.Errorf("%w: slot %d: short header", errSlotHeader, index)
	}
	blank := true
	for _, b := range sector {
		if b != 0 {
			blank = false
			break
		}
	}
	if blank {
		return slotHeader{state: slotFree, index: index}, nil
	}
	le := binary.LittleEndian
	if le.Uint64(sector[56:]) != xxh3.Hash(sector[:56]) {
		return slotHeader{}, fmt.Errorf("%w: slot %d: checksum", errSlotHeader, index)
	}
	if string(sector[:4]) != sbSlotMagic || le.Uint16(sector[4:]) != sbFileVersion {
		return slotHeader{}, fmt.Errorf("%w: slot %d: magic or version", errSlotHeader, index)
	}
	if sector[7] != 0 {
		return slotHeader{}, fmt.Errorf("%w: slot %d: reserved bytes", errSlotHeader, index)
	}
	h := slotHeader{state: sector[6], group: le.Uint64(sector[8:]), index: le.Uint32(sector[16:])}
	switch {
	case h.index != index:
		return slotHeader{}, fmt.Errorf("%w: slot %d holds the header of slot %d", errSlotHeader, index, h.index)
	case h.state != slotAllocated && h.state != slotTombstone:
		return slotHeader{}, fmt.Errorf("%w: slot %d: state %d", errSlotHeader, index, h.state)
	}
	for _, b := range sector[20:56] {
		if b != 0 {
			return slotHeader{}, fmt.Errorf("%w: slot %d: reserved bytes", errSlotHeader, index)
		}
	}
	return h, nil
}

// sbLostPattern fills the zone image of a slot allocated for a group
// whose superblock was lost (its slot missing while its consensus.vsr
// exists): bytes that are neither blank (a fresh group) nor a valid copy,
// so that vsr's read reports the superblock lost until the recovery
// writes a new one, across restarts too.
const sbLostPattern = "STRATA: superblock lost; recovered from peers. "

// lostZoneImage returns a zone image of size bytes that vsr reads as lost.
func lostZoneImage(size uint64) []byte {
	image := make([]byte, size)
	for i := range image {
		image[i] = sbLostPattern[i%len(sbLostPattern)]
	}
	return image
}
