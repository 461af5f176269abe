package storage

import (
	"encoding/binary"
	"fmt"
)

// IndexEntrySize is the size of one `.index` entry (PROTOCOL.md §6.8):
// [offset u64][timestamp u64][position u64], little-endian.
const IndexEntrySize = 24

// IndexEntry locates the first batch of one flush in a segment's `.log`.
// The index carries no checksum of its own (the reference layout is exactly
// 24 bytes); recovery verifies every entry against the batch it points at
// and rebuilds the index from the log when they disagree.
type IndexEntry struct {
	Offset    uint64 // absolute base_offset of the batch
	Timestamp uint64 // its base_timestamp
	Position  uint64 // byte position of the batch in the .log
}

// PutIndexEntry encodes e into dst[0:24].
func PutIndexEntry(dst []byte, e IndexEntry) {
	_ = dst[IndexEntrySize-1]
	binary.LittleEndian.PutUint64(dst[0:], e.Offset)
	binary.LittleEndian.PutUint64(dst[8:], e.Timestamp)
	binary.LittleEndian.PutUint64(dst[16:], e.Position)
}

// DecodeIndexEntry decodes one entry from the first 24 bytes of b.
func DecodeIndexEntry(b []byte) (IndexEntry, error) {
	if len(b) < IndexEntrySize {
		return IndexEntry{}, fmt.Errorf("index entry of %d bytes: %w", len(b), ErrCorrupt)
	}
	return IndexEntry{
		Offset:    binary.LittleEndian.Uint64(b[0:]),
		Timestamp: binary.LittleEndian.Uint64(b[8:]),
		Position:  binary.LittleEndian.Uint64(b[16:]),
	}, nil
}

// DecodeIndex decodes every whole entry of an index file image and reports
// the trailing bytes of a torn last entry. Entries must have strictly
// increasing positions and offsets; decoding stops at the
// first entry that breaks the order (the rest is returned as invalid).
func DecodeIndex(b []byte) (entries []IndexEntry, validBytes int) {
	for pos := 0; pos+IndexEntrySize <= len(b); pos += IndexEntrySize {
		e, err := DecodeIndexEntry(b[pos:])
		if err != nil {
			break
		}
		if n := len(entries); n > 0 && (e.Position <= entries[n-1].Position || e.Offset <= entries[n-1].Offset) {
			break
		}
		entries = append(entries, e)
	}
	return entries, len(entries) * IndexEntrySize
}
