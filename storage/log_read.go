package storage

import (
	"fmt"
	"sort"

	"github.com/stratabroker/strata/net/wire"
)

// Read appends to dst the stored batch records holding the messages with
// offsets in [fromOffset, fromOffset+maxCount), fromOffset raised to the
// first stored offset when older messages were deleted. Whole batches are
// appended as stored; the first and last may be sliced with a rewritten
// header (PROTOCOL.md §6.6), exactly as a poll reply carries them. When
// maxBytes > 0 the read stops before a batch that would take the appended
// bytes over it (at least one batch is always returned). It returns the
// messages appended. Every batch is validated before it is appended; a
// damaged one ends the read with a wrapped ErrCorrupt naming the file and
// position, after the batches before it.
func (l *Log) Read(dst []byte, fromOffset uint64, maxCount uint32, maxBytes int) ([]byte, uint32, error) {
	fromOffset = max(fromOffset, l.segments[0].start)
	if maxCount == 0 || fromOffset >= l.active().next {
		return dst, 0, nil
	}
	startLen := len(dst)
	var count uint32
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].start > fromOffset }) - 1
	for i = max(i, 0); i < len(l.segments) && count < maxCount; i++ {
		seg := l.segments[i]
		if fromOffset >= seg.next {
			continue
		}
		l.scanner.reset(seg.log, seg.size, readChunkBytes)
		for pos := seg.seekPosition(fromOffset); pos < seg.size && count < maxCount; {
			rec, err := l.scanner.record(pos)
			if err != nil {
				return dst, count, fmt.Errorf("read %s at byte %d: %w", seg.logPath, pos, err)
			}
			v := wire.BatchView(rec)
			base, messages := v.BaseOffset(), uint64(v.MessageCount())
			if base+messages <= fromOffset {
				pos += int64(len(rec))
				continue
			}
			if maxBytes > 0 && count > 0 && len(dst)-startLen+len(rec) > maxBytes {
				return dst, count, nil
			}
			if err := wire.ValidateBatch(rec, uint32(messages)); err != nil {
				return dst, count, fmt.Errorf("%s at byte %d: %w: %w", seg.logPath, pos, ErrCorrupt, err)
			}
			var n uint32
			if dst, n, err = wire.SliceBatch(dst, rec, fromOffset, maxCount-count); err != nil {
				return dst, count, fmt.Errorf("%s at byte %d: %w: %w", seg.logPath, pos, ErrCorrupt, err)
			}
			count += n
			fromOffset = base + messages
			pos += int64(len(rec))
		}
	}
	return dst, count, nil
}

// FindByTimestamp returns the base offset of the first batch whose
// base_timestamp is ≥ timestampMicros, and false when there is none. It
// relies on base timestamps not decreasing along the log (the server
// stamps a monotonic clock) to seek with the index.
func (l *Log) FindByTimestamp(timestampMicros uint64) (uint64, bool, error) {
	for _, seg := range l.segments {
		if seg.size == 0 {
			continue
		}
		j := sort.Search(len(seg.entries), func(j int) bool { return seg.entries[j].Timestamp >= timestampMicros })
		pos := int64(0)
		if j > 0 {
			pos = int64(seg.entries[j-1].Position)
		}
		l.scanner.reset(seg.log, seg.size, readChunkBytes)
		for pos < seg.size {
			v, n, err := l.scanner.header(pos)
			if err != nil {
				return 0, false, fmt.Errorf("read %s at byte %d: %w", seg.logPath, pos, err)
			}
			if v.BaseTimestamp() >= timestampMicros {
				return v.BaseOffset(), true, nil
			}
			pos += n
		}
	}
	return 0, false, nil
}
