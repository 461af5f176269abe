package storage

import (
	"errors"
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
//
// Offsets a recovery skipped (between two segments) hold no message: a
// read from one of them starts at the next stored message. A fenced log
// serves nothing at or beyond Corruption.Offset.
func (l *Log) Read(dst []byte, fromOffset uint64, maxCount uint32, maxBytes int) ([]byte, uint32, error) {
	fromOffset = max(fromOffset, l.segments[0].start)
	end := l.active().next
	if l.fenced != nil {
		end = min(end, l.fenced.Offset)
	}
	if maxCount == 0 || fromOffset >= end {
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
		fromOffset = max(fromOffset, seg.start) // past skipped offsets
		if fromOffset >= end {
			break
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
			if base >= end {
				return dst, count, nil
			}
			if maxBytes > 0 && count > 0 && len(dst)-startLen+len(rec) > maxBytes {
				return dst, count, nil
			}
			if err := wire.ValidateBatch(rec, uint32(messages)); err != nil {
				return dst, count, l.fenceAt(i, pos, err)
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

// fenceAt records damage found by a read in segment i at pos: the
// readable range ends before it (later segments are closed and dropped
// from the log), appends are refused, and the returned error (wrapping
// ErrCorrupt) names the file and position. Nothing on disk changes.
func (l *Log) fenceAt(i int, pos int64, cause error) error {
	seg := l.segments[i]
	err := fmt.Errorf("%s at byte %d: %w: %w", seg.logPath, pos, ErrCorrupt, cause)
	if l.fenced != nil {
		return err
	}
	l.scanner.forget()
	for _, later := range l.segments[i+1:] {
		l.messages -= later.messages
		l.bytes -= later.size
		if cerr := later.close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	l.segments = l.segments[:i+1]
	// Count the messages of the segment that stay readable: scan the
	// headers before pos (they validated when they were read or recovered).
	l.scanner.reset(seg.log, pos, readChunkBytes)
	kept := uint64(0)
	for at := int64(0); at < pos; {
		v, n, herr := l.scanner.header(at)
		if herr != nil {
			break
		}
		kept += uint64(v.MessageCount())
		at += n
	}
	l.messages -= seg.messages - kept
	l.bytes -= seg.size - pos
	seg.messages, seg.size, seg.next = kept, pos, seg.start+kept
	for len(seg.entries) > 0 && int64(seg.entries[len(seg.entries)-1].Position) >= pos {
		seg.entries = seg.entries[:len(seg.entries)-1]
	}
	l.fenced = &Corruption{File: seg.logPath, Position: pos, Offset: seg.next, Err: cause}
	return err
}
