package storage

import (
	"errors"
	"fmt"

	"github.com/stratabroker/strata/net/wire"
)

// droppedHeadersMax bounds the walk that counts the messages announced by
// the headers of a dropped tail.
const droppedHeadersMax = 1 << 20

// Truncation describes a torn or corrupt tail cut from a segment at open.
type Truncation struct {
	File            string
	Position        int64  // the file now ends here
	BytesDropped    int64  // bytes removed
	MessagesDropped uint64 // messages announced by the readable headers of the removed bytes
	Reason          string
}

// Corruption describes damage that recovery could not repair: the log
// serves only the offsets before it and is fenced.
type Corruption struct {
	File     string
	Position int64
	Offset   uint64 // first offset that is not served
	Err      error
}

// OffsetSkip describes offsets recovery skipped: the log ended at From
// but offsets up to To were reserved (some may have been handed out to
// messages a crash lost), so the next message gets To, in a new segment.
type OffsetSkip struct {
	From, To uint64
}

// RecoveryReport says what OpenLog found and changed. A caller logs every
// entry as a warning.
type RecoveryReport struct {
	Truncations    []Truncation
	IndexesRebuilt []string // index files rewritten from the log
	// RetentionFinished lists the segment files removed because the
	// superblock had already recorded their deletion (a crash interrupted
	// it).
	RetentionFinished []string
	// Skip is set when the next offset was moved to the reservation.
	Skip *OffsetSkip
	// Corruption is non-nil when the log is fenced.
	Corruption *Corruption
}

// Clean reports whether recovery changed nothing and found nothing.
func (r *RecoveryReport) Clean() bool {
	return len(r.Truncations) == 0 && len(r.IndexesRebuilt) == 0 && len(r.RetentionFinished) == 0 &&
		r.Skip == nil && r.Corruption == nil
}

// segmentScan is the outcome of scanning one segment.
type segmentScan struct {
	goodEnd  int64  // bytes of valid, contiguous batches
	next     uint64 // offset after the last good batch
	messages uint64
	index    []IndexEntry // verified entries followed by rebuilt ones
	// indexIntact: the index file equals index exactly.
	indexIntact bool
	// bad is the error at goodEnd when the file continues past it.
	bad error
	// badInMiddle: a valid batch follows the bad one, so it is not a tail.
	badInMiddle bool
	dropped     uint64 // messages announced by headers from goodEnd on
}

// scanSegment validates every batch of seg's log from position 0, checks
// its offsets continue from seg.start, and verifies the index entries
// against the batches (rebuilding sparse entries every intervalBytes for
// the part the index does not cover). I/O errors are returned; damage is
// described in the result.
func scanSegment(sc *batchScanner, seg *segment, size int64, entries []IndexEntry, entriesBytes int, indexFileBytes int64, intervalBytes int64) (segmentScan, error) {
	sc.reset(seg.log, size, scanChunkBytes)
	r := segmentScan{next: seg.start}
	matched := 0
	broken := false
	var tail []IndexEntry
	lastEntryPos := int64(-1)
	pos := int64(0)
	for pos < size {
		rec, err := sc.record(pos)
		if err == nil {
			v := wire.BatchView(rec)
			err = wire.ValidateBatch(rec, v.MessageCount())
			if err == nil && v.BaseOffset() != r.next {
				err = fmt.Errorf("base offset %d, expected %d: %w", v.BaseOffset(), r.next, ErrCorrupt)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !isBatchError(err) {
				return r, fmt.Errorf("read %s at %d: %w", seg.logPath, pos, err)
			}
			r.bad = fmt.Errorf("%s at byte %d: %w", seg.logPath, pos, err)
			break
		}
		v := wire.BatchView(rec)
		e := IndexEntry{Offset: v.BaseOffset(), Timestamp: v.BaseTimestamp(), Position: uint64(pos)}
		switch {
		case !broken && matched < len(entries) && entries[matched].Position == uint64(pos):
			if entries[matched] == e {
				matched++
				lastEntryPos = pos
			} else {
				broken = true
			}
		case !broken && matched < len(entries) && entries[matched].Position < uint64(pos):
			broken = true
		}
		if (broken || matched == len(entries)) && lastEntryPos != pos &&
			(lastEntryPos < 0 || pos-lastEntryPos >= intervalBytes) {
			tail = append(tail, e)
			lastEntryPos = pos
		}
		r.next += uint64(v.MessageCount())
		r.messages += uint64(v.MessageCount())
		pos += int64(len(rec))
	}
	r.goodEnd = pos
	r.index = append(entries[:matched:matched], tail...)
	r.indexIntact = matched == len(entries) && len(tail) == 0 && int64(entriesBytes) == indexFileBytes
	if r.bad != nil {
		r.badInMiddle = validBatchAfter(sc, pos, entries)
		r.dropped = countAnnouncedMessages(sc, pos)
	}
	return r, nil
}

// isBatchError reports whether err came from batch validation.
func isBatchError(err error) bool {
	return errors.Is(err, wire.ErrBatchMalformed) || errors.Is(err, wire.ErrBatchChecksum) ||
		errors.Is(err, wire.ErrBatchMessageChecksum) || errors.Is(err, wire.ErrBatchReserved)
}

// validBatchAfter reports whether a valid batch exists after the bad one at
// pos: right after it (when its length is readable) or at any index entry
// beyond it. Such a batch means the damage is in the middle, not a tail.
func validBatchAfter(sc *batchScanner, pos int64, entries []IndexEntry) bool {
	valid := func(at int64) bool {
		rec, err := sc.record(at)
		return err == nil && wire.ValidateBatch(rec, wire.BatchView(rec).MessageCount()) == nil
	}
	if _, n, err := sc.header(pos); err == nil && valid(pos+n) {
		return true
	}
	for _, e := range entries {
		if int64(e.Position) > pos && e.Position < uint64(sc.limit) && valid(int64(e.Position)) {
			return true
		}
	}
	return false
}

// countAnnouncedMessages walks the readable headers from pos and sums
// their message counts; a torn last record with an intact header counts.
func countAnnouncedMessages(sc *batchScanner, pos int64) uint64 {
	var total uint64
	for i := 0; i < droppedHeadersMax && pos+wire.BatchHeaderSize <= sc.limit; i++ {
		h, err := sc.fill(pos, wire.BatchHeaderSize)
		if err != nil {
			break
		}
		v := wire.BatchView(h)
		n := v.BatchLength()
		if n < batchLengthMin || n > wire.BatchLengthMax {
			break
		}
		total += uint64(v.MessageCount())
		pos += int64(n)
	}
	return total
}

// quickScanSegment checks a sealed segment without reading all of it: the
// first batch's header must start the segment's offsets and match the
// first index entry, and the batches from the last index entry to the end
// of the file must validate and continue its offsets. ok = false (with no
// error) means the check failed and the caller runs the full scan, which
// locates the damage. I/O errors are returned.
func quickScanSegment(sc *batchScanner, seg *segment, size int64, entries []IndexEntry) (r segmentScan, ok bool, err error) {
	if len(entries) == 0 || entries[0].Position != 0 {
		return r, false, nil
	}
	sc.reset(seg.log, size, scanChunkBytes)
	v, _, err := sc.header(0)
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return r, false, nil
		}
		return r, false, fmt.Errorf("read %s at 0: %w", seg.logPath, err)
	}
	if v.BaseOffset() != seg.start || entries[0].Offset != seg.start || entries[0].Timestamp != v.BaseTimestamp() {
		return r, false, nil
	}
	last := entries[len(entries)-1]
	pos, next := int64(last.Position), last.Offset
	for first := true; pos < size; first = false {
		rec, err := sc.record(pos)
		if err != nil {
			if errors.Is(err, ErrCorrupt) {
				return r, false, nil
			}
			return r, false, fmt.Errorf("read %s at %d: %w", seg.logPath, pos, err)
		}
		v := wire.BatchView(rec)
		if wire.ValidateBatch(rec, v.MessageCount()) != nil || v.BaseOffset() != next ||
			(first && v.BaseTimestamp() != last.Timestamp) {
			return r, false, nil
		}
		next += uint64(v.MessageCount())
		pos += int64(len(rec))
	}
	if pos != size || next <= last.Offset {
		return r, false, nil
	}
	return segmentScan{goodEnd: size, next: next, messages: next - seg.start, index: entries, indexIntact: true}, true, nil
}
