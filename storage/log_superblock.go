package storage

import (
	"errors"
	"fmt"
	"math"
	"path"
)

// A log opened with its partition superblock (LogOptions.Superblock)
// keeps it: recovery reads the durable frontier, the message count below
// it and the offset reservation from it, and the log stores the next copy
// when its caller asks (StoreSuperblock, or WriteSuperblock and
// SuperblockSynced for a caller that syncs asynchronously), when it
// purges and before it deletes segments. The frontier it records is what
// Sync, SyncFiles + FilesSynced and segment rolls made durable.

// finishRetention removes the segments that lie entirely below the
// superblock's FirstOffset: DeleteOldestSealed records the new first
// offset before it removes the files, so these are the leftovers of a
// deletion a crash interrupted. It returns the remaining start offsets.
func (l *Log) finishRetention(starts []uint64, report *RecoveryReport) ([]uint64, error) {
	if l.sb == nil || l.sbErr != nil {
		return starts, nil
	}
	below := 0
	for below+1 < len(starts) && starts[below+1] <= l.sb.FirstOffset {
		below++
	}
	for _, start := range starts[:below] {
		for _, p := range []string{path.Join(l.dir, SegmentLogName(start)), path.Join(l.dir, SegmentIndexName(start))} {
			if err := l.fs.Remove(p); err != nil && !errors.Is(err, ErrNotExist) {
				return nil, fmt.Errorf("finish the recorded deletion of %s: %w", p, err)
			}
		}
		report.RetentionFinished = append(report.RetentionFinished, path.Join(l.dir, SegmentLogName(start)))
	}
	return starts[below:], nil
}

// checkFrontier fences a recovered log that does not hold what its
// superblock recorded as durable: it ends before the durable frontier, or
// (version 2) holds another number of messages below it, which means a
// segment was lost or added. Nothing is changed on disk.
func (l *Log) checkFrontier() {
	if l.fenced != nil || l.sb == nil || l.sbErr != nil {
		return
	}
	durable := l.sb.DurableOffset
	active := l.active()
	if next := active.next; next < durable {
		l.fenced = &Corruption{File: active.logPath, Position: active.size, Offset: next,
			Err: fmt.Errorf("missing history: the log ends at offset %d, its superblock recorded messages durable up to offset %d: %w", next, durable, ErrCorrupt)}
		return
	}
	if l.sb.Version < 2 {
		return // version 1 did not record the count
	}
	if got := messagesBelow(l.segments, durable); got != l.sb.DurableMessages {
		// Which segment is missing cannot be told (skipped offsets leave
		// gaps too): nothing is served.
		l.fenced = &Corruption{File: l.dir, Offset: min(l.sb.FirstOffset, l.segments[0].start),
			Err: fmt.Errorf("missing history: %d messages stored below offset %d, its superblock recorded %d: %w", got, durable, l.sb.DurableMessages, ErrCorrupt)}
	}
}

// messagesBelow counts the messages of segs with offsets below offset.
func messagesBelow(segs []*segment, offset uint64) uint64 {
	var n uint64
	for _, seg := range segs {
		switch {
		case seg.start >= offset:
			return n
		case seg.next <= offset:
			n += seg.messages
		default:
			n += offset - seg.start // offsets are contiguous within a segment
		}
	}
	return n
}

// fenceWithoutSuperblock fences a log none of whose superblock copies is
// valid, after recovery verified (and cut nothing from) its segments: it
// serves what verified.
func (l *Log) fenceWithoutSuperblock() {
	if l.sbErr == nil {
		return
	}
	if l.fenced != nil {
		l.fenced.Err = fmt.Errorf("%w; and %w", l.fenced.Err, l.sbErr)
		return
	}
	file := path.Join(l.dir, superblockFileA)
	if ok, err := Exists(l.fs, file); err == nil && !ok {
		file = path.Join(l.dir, superblockFileB)
	}
	l.fenced = &Corruption{File: file, Offset: l.NextOffset(), Err: l.sbErr}
}

// skipToReservation starts the next message at the superblock's
// reservation when the recovered log ends before it: offsets up to it may
// have been handed out to messages a crash lost, and none may be given to
// another message. The segment that ends the log is synced (what a crash
// left of it may be only in the page cache) and a new, empty segment
// starts at the reservation.
func (l *Log) skipToReservation(report *RecoveryReport) error {
	if l.fenced != nil || l.sb == nil || l.sbErr != nil {
		return nil
	}
	from, to := l.NextOffset(), l.sb.ReservedOffset
	if to <= from {
		return nil
	}
	active := l.active()
	active.dirty = true
	if err := l.syncSegment(active); err != nil {
		return err
	}
	if err := l.createSegment(to); err != nil {
		return err
	}
	l.durable = to // no message lies in the skipped offsets
	report.Skip = &OffsetSkip{From: from, To: to}
	return nil
}

// markDurable records that every message below offset, and the first
// bytes appended since open, are durable.
func (l *Log) markDurable(offset uint64, bytes int64) {
	l.durable = max(l.durable, offset)
	l.durableBytes = max(l.durableBytes, bytes)
}

// advanceSealed moves the durable frontier over the segments sealed since
// it last moved, syncing the directory first when their names may not be
// durable yet. It runs before a superblock is built.
func (l *Log) advanceSealed() error {
	if l.sealedNext <= l.durable {
		return nil
	}
	if l.dirDirty {
		if err := l.syncDir(); err != nil {
			return l.fail(err)
		}
	}
	l.markDurable(l.sealedNext, l.sealedBytes)
	return nil
}

// FilesSynced records that every file the last SyncFiles returned was
// synced: what was appended before that call is durable. The caller calls
// it after its asynchronous syncs succeed (Fail when one fails).
func (l *Log) FilesSynced() { l.markDurable(l.syncTarget, l.syncTargetBytes) }

// DurableOffset returns the durable frontier: every stored message below
// it is durable (synced).
func (l *Log) DurableOffset() uint64 { return l.durable }

// Superblock returns the partition superblock as last durably stored;
// false for a log opened without one.
func (l *Log) Superblock() (PartitionSuperblock, bool) {
	if l.sb == nil {
		return PartitionSuperblock{}, false
	}
	return *l.sb, true
}

// Reserved returns the end of the durable offset reservation: the caller
// may hand out offsets below it without storing the superblock first.
// A log without a superblock does not limit them.
func (l *Log) Reserved() uint64 {
	if l.sb == nil {
		return math.MaxUint64
	}
	return max(l.sb.ReservedOffset, l.NextOffset())
}

// SuperblockLag reports whether the stored superblock's durable frontier
// trails the log's, and how many bytes appended since open are durable
// but not covered by it.
func (l *Log) SuperblockLag() (behind bool, bytes int64) {
	if l.sb == nil {
		return false, 0
	}
	durable, bytes := max(l.durable, l.sealedNext), max(l.durableBytes, l.sealedBytes)
	return durable > l.sb.DurableOffset, bytes - l.recordedBytes
}

// SuperblockWriting reports whether a copy written by WriteSuperblock
// waits for SuperblockSynced.
func (l *Log) SuperblockWriting() bool { return l.sbWriting != nil }

// nextSuperblock builds the superblock that follows the stored one for
// the log made of segments[first:]: its oldest segment, the durable
// frontier, the message count below it and a reservation ending at
// reserveEnd.
func (l *Log) nextSuperblock(first int, reserveEnd uint64) PartitionSuperblock {
	next := *l.sb
	next.Version = 0
	next.Sequence++
	segs := l.segments[first:]
	next.FirstOffset = segs[0].start
	next.DurableOffset = max(l.durable, next.FirstOffset)
	next.DurableMessages = messagesBelow(segs, next.DurableOffset)
	next.ReservedOffset = reserveEnd
	return next
}

// WriteSuperblock writes the next superblock copy, recording the durable
// frontier and a reservation ending at reserveEnd (at least NextOffset:
// the caller passes the end of the offsets it may hand out), and returns
// its file unsynced. The caller syncs it, in place or asynchronously, and
// then calls SuperblockSynced; until then no other superblock write may
// start (the other copy must stay durable while this one is written).
func (l *Log) WriteSuperblock(reserveEnd uint64) (File, error) {
	if l.sb == nil {
		return nil, fmt.Errorf("log %s has no superblock: %w", l.dir, ErrInvalidArgument)
	}
	if l.sbWriting != nil {
		panic(fmt.Sprintf("storage: superblock of %s written while the previous copy is not synced", l.dir))
	}
	if err := l.usable(); err != nil {
		return nil, err
	}
	if reserveEnd < l.NextOffset() {
		return nil, fmt.Errorf("reservation end %d below the next offset %d: %w", reserveEnd, l.NextOffset(), ErrInvalidArgument)
	}
	if err := l.advanceSealed(); err != nil {
		return nil, err
	}
	next := l.nextSuperblock(0, reserveEnd)
	f, created, err := writeSuperblockCopy(l.fs, l.dir, partitionKind, next.record())
	if err != nil {
		return nil, l.fail(err)
	}
	l.sbWriting, l.sbFile, l.sbCreated, l.sbWritingBytes = &next, f, created, l.durableBytes
	return f, nil
}

// SuperblockSynced ends the write WriteSuperblock began, once the sync of
// its file returned syncErr: the new superblock is then the stored one. A
// failure fails the log (the copy's state is unknown; the other copy is
// still the last durable one).
func (l *Log) SuperblockSynced(syncErr error) error {
	if l.sbWriting == nil {
		panic(fmt.Sprintf("storage: superblock of %s synced without a write", l.dir))
	}
	next, f, created := l.sbWriting, l.sbFile, l.sbCreated
	l.sbWriting, l.sbFile = nil, nil
	if err := finishSuperblockCopy(l.fs, l.dir, f, created, syncErr); err != nil {
		return l.fail(err)
	}
	next.Version = PartitionSuperblockVersion
	l.sb, l.recordedBytes = next, l.sbWritingBytes
	return nil
}

// StoreSuperblock writes and syncs the next superblock in place (see
// WriteSuperblock).
func (l *Log) StoreSuperblock(reserveEnd uint64) error {
	f, err := l.WriteSuperblock(reserveEnd)
	if err != nil {
		return err
	}
	return l.SuperblockSynced(f.Sync())
}

// storeFor stores s as the next superblock in place for Purge and
// DeleteOldestSealed; a template (Sequence 0, no valid copy at open)
// creates both copies.
func (l *Log) storeFor(s PartitionSuperblock) error {
	if l.sbWriting != nil {
		panic(fmt.Sprintf("storage: superblock of %s stored while a copy is not synced", l.dir))
	}
	s.Version = 0
	var err error
	if l.sb.Sequence == 0 {
		s, err = CreatePartitionSuperblock(l.fs, l.dir, s)
	} else {
		s.Sequence = l.sb.Sequence + 1
		err = StorePartitionSuperblock(l.fs, l.dir, s)
		s.Version = PartitionSuperblockVersion
	}
	if err != nil {
		return err
	}
	l.sb, l.recordedBytes = &s, l.durableBytes
	return nil
}
