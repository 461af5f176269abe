package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
)

// Metadata journal entry layout: a MetaEntryHeaderSize-byte header, then
// the body (little-endian):
//
//	0  magic u32 "SMJE"   4 version u16   6 operation u8   7 reserved u8 (0)
//	8  op u64             16 timestamp u64 (micros)
//	24 body length u32    28 reserved u32 (0)
//	32 body checksum u64  (XXH3-64 of the body)
//	40 previous checksum u64 (header checksum of the previous entry in the
//	   file, 0 for the first: a hash chain)
//	48 reserved u64 (0)
//	56 header checksum u64 (XXH3-64 of bytes 0..56)
const (
	// MetaEntryHeaderSize is the size of a journal entry header.
	MetaEntryHeaderSize = 64
	// MetaEntryBodyMax bounds an entry body (one 64 MiB frame).
	MetaEntryBodyMax  = 64 << 20
	metaEntryMagic    = 0x454a4d53 // "SMJE" little-endian
	metaEntryVersion  = 1
	metaEntryHeaderAt = 56
)

// MetaEntry is one metadata operation in the journal.
type MetaEntry struct {
	Op        uint64 // consecutive op number
	Timestamp uint64 // micros
	Operation uint8  // the operation kind (opaque here)
	Body      []byte // the encoded operation (opaque here)
}

// metaEntryHeader is a decoded, verified header.
type metaEntryHeader struct {
	op, timestamp uint64
	operation     uint8
	bodyLength    uint32
	bodyChecksum  uint64
	previous      uint64
	checksum      uint64
}

// EncodeMetaEntryHeader returns the header of e chained to the entry whose
// header checksum is previous, and that header's own checksum.
func EncodeMetaEntryHeader(e MetaEntry, previous uint64) ([MetaEntryHeaderSize]byte, uint64) {
	var b [MetaEntryHeaderSize]byte
	binary.LittleEndian.PutUint32(b[0:], metaEntryMagic)
	binary.LittleEndian.PutUint16(b[4:], metaEntryVersion)
	b[6] = e.Operation
	binary.LittleEndian.PutUint64(b[8:], e.Op)
	binary.LittleEndian.PutUint64(b[16:], e.Timestamp)
	binary.LittleEndian.PutUint32(b[24:], uint32(len(e.Body)))
	binary.LittleEndian.PutUint64(b[32:], xxh3.Hash(e.Body))
	binary.LittleEndian.PutUint64(b[40:], previous)
	sum := xxh3.Hash(b[:metaEntryHeaderAt])
	binary.LittleEndian.PutUint64(b[metaEntryHeaderAt:], sum)
	return b, sum
}

// decodeMetaEntryHeader verifies and decodes the header at the start of b.
func decodeMetaEntryHeader(b []byte) (metaEntryHeader, error) {
	var h metaEntryHeader
	if len(b) < MetaEntryHeaderSize {
		return h, fmt.Errorf("entry header of %d bytes: %w", len(b), ErrCorrupt)
	}
	h.checksum = binary.LittleEndian.Uint64(b[metaEntryHeaderAt:])
	if xxh3.Hash(b[:metaEntryHeaderAt]) != h.checksum {
		return h, fmt.Errorf("entry header checksum: %w", ErrCorrupt)
	}
	if binary.LittleEndian.Uint32(b[0:]) != metaEntryMagic || binary.LittleEndian.Uint16(b[4:]) != metaEntryVersion {
		return h, fmt.Errorf("entry magic or version: %w", ErrCorrupt)
	}
	if b[7] != 0 || binary.LittleEndian.Uint32(b[28:]) != 0 || binary.LittleEndian.Uint64(b[48:]) != 0 {
		return h, fmt.Errorf("entry reserved fields: %w", ErrCorrupt)
	}
	h.operation = b[6]
	h.op = binary.LittleEndian.Uint64(b[8:])
	h.timestamp = binary.LittleEndian.Uint64(b[16:])
	h.bodyLength = binary.LittleEndian.Uint32(b[24:])
	h.bodyChecksum = binary.LittleEndian.Uint64(b[32:])
	h.previous = binary.LittleEndian.Uint64(b[40:])
	if h.bodyLength > MetaEntryBodyMax {
		return h, fmt.Errorf("entry body of %d bytes: %w", h.bodyLength, ErrCorrupt)
	}
	return h, nil
}

// DecodeMetaEntry decodes and verifies the entry at the start of b whose
// previous-entry checksum must be previous. It returns the entry (Body
// aliases b), the entry's header checksum and its total length.
func DecodeMetaEntry(b []byte, previous uint64) (MetaEntry, uint64, int, error) {
	h, err := decodeMetaEntryHeader(b)
	if err != nil {
		return MetaEntry{}, 0, 0, err
	}
	end := MetaEntryHeaderSize + int(h.bodyLength)
	if len(b) < end {
		return MetaEntry{}, 0, 0, fmt.Errorf("entry body needs %d bytes, %d left: %w", h.bodyLength, len(b)-MetaEntryHeaderSize, ErrCorrupt)
	}
	body := b[MetaEntryHeaderSize:end]
	if xxh3.Hash(body) != h.bodyChecksum {
		return MetaEntry{}, 0, 0, fmt.Errorf("entry body checksum: %w", ErrCorrupt)
	}
	if h.previous != previous {
		return MetaEntry{}, 0, 0, fmt.Errorf("entry chained to %#x, previous is %#x: %w", h.previous, previous, ErrCorrupt)
	}
	return MetaEntry{Op: h.op, Timestamp: h.timestamp, Operation: h.operation, Body: body}, h.checksum, end, nil
}

// validMetaHeaderAfter reports whether a header that verifies on its own
// starts anywhere in b after byte from: evidence that damage at from is
// not a torn tail.
func validMetaHeaderAfter(b []byte, from int) bool {
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], metaEntryMagic)
	for i := from + 1; i+MetaEntryHeaderSize <= len(b); i++ {
		if b[i] == magic[0] && b[i+1] == magic[1] && b[i+2] == magic[2] && b[i+3] == magic[3] {
			if _, err := decodeMetaEntryHeader(b[i:]); err == nil {
				return true
			}
		}
	}
	return false
}
