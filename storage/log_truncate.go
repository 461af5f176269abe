package storage

import (
	"errors"
	"fmt"

	"github.com/stratabroker/strata/net/wire"
)

// ErrLogShort: TruncateTo was asked to keep messages the log does not
// hold (its end is below the requested offset): history is missing.
var ErrLogShort = errors.New("storage: log ends before the requested offset")

// TruncateTo discards every stored message at or beyond offset, so that
// the next append starts there. A replica of a consensus group restored to
// a checkpoint whose log ends at offset applies the ops after it again
// (from its peers): what its segments hold beyond the checkpoint would
// otherwise be stored twice. Offsets a recovery skipped beyond the log
// (a segment started at the reservation) are taken back as well.
//
// The superblock is stored first, with the durable frontier lowered to
// at most offset and the reservation ending at offset, so that a crash
// while the files are cut leaves bytes beyond the frontier (a torn tail
// recovery may cut), never a frontier the log does not reach. offset must
// lie inside the log: at or above its first segment's start and at or
// below its end (ErrLogShort otherwise), and on a batch boundary. No
// superblock write may be in flight.
func (l *Log) TruncateTo(offset uint64) error {
	if err := l.usable(); err != nil {
		return err
	}
	if l.sbWriting != nil {
		return fmt.Errorf("truncate %s: a superblock copy is being written: %w", l.dir, ErrInvalidArgument)
	}
	// The data end: a segment recovery started at the reservation holds
	// nothing, and its start is not history.
	end := l.active().next
	for i := len(l.segments) - 1; i > 0 && l.segments[i].messages == 0 && l.segments[i].start == l.segments[i].next; i-- {
		end = l.segments[i-1].next
	}
	switch {
	case offset > end || (offset == end && offset > l.NextOffset()):
		return fmt.Errorf("truncate %s to offset %d: the log ends at %d: %w", l.dir, offset, end, ErrLogShort)
	case offset < l.segments[0].start:
		return fmt.Errorf("truncate %s to offset %d: the log starts at %d: %w", l.dir, offset, l.segments[0].start, ErrInvalidArgument)
	case offset == l.NextOffset():
		return nil
	}
	// Keep the segment holding offset (the one whose start is the last at
	// or below it); every later one goes.
	keep := len(l.segments) - 1
	for keep > 0 && l.segments[keep].start > offset {
		keep--
	}
	seg := l.segments[keep]
	pos := seg.size
	if offset < seg.next {
		var err error
		if pos, err = l.batchBoundary(seg, offset); err != nil {
			return err
		}
	}
	if l.sb != nil && l.sbErr == nil {
		next := l.nextSuperblock(0, offset)
		next.DurableOffset = min(next.DurableOffset, offset)
		next.DurableMessages = messagesBelow(l.segments, next.DurableOffset)
		if err := l.storeFor(next); err != nil {
			return l.fail(fmt.Errorf("truncate %s: store the superblock: %w", l.dir, err))
		}
	}
	for _, gone := range l.segments[keep+1:] {
		if err := gone.close(); err != nil {
			return l.fail(fmt.Errorf("truncate %s: close %s: %w", l.dir, gone.logPath, err))
		}
		for _, p := range []string{gone.logPath, gone.indexPath()} {
			if err := l.fs.Remove(p); err != nil && !errors.Is(err, ErrNotExist) {
				return l.fail(fmt.Errorf("truncate %s: remove %s: %w", l.dir, p, err))
			}
		}
		l.messages -= gone.messages
		l.bytes -= gone.size
		l.dirDirty = true
	}
	clear(l.segments[keep+1:])
	l.segments = l.segments[:keep+1]
	if pos < seg.size {
		l.scanner.forget()
		if err := seg.log.Truncate(pos); err != nil {
			return l.fail(fmt.Errorf("truncate %s: %w", seg.logPath, err))
		}
		if err := seg.log.Sync(); err != nil {
			return l.fail(fmt.Errorf("sync %s: %w", seg.logPath, err))
		}
		kept := 0
		for kept < len(seg.entries) && int64(seg.entries[kept].Position) < pos {
			kept++
		}
		seg.entries = seg.entries[:kept]
		if err := l.rewriteIndex(seg); err != nil {
			return l.fail(err)
		}
		dropped := seg.next - offset
		l.messages -= dropped
		l.bytes -= seg.size - pos
		seg.messages -= dropped
		seg.size, seg.next = pos, offset
	}
	if l.dirDirty {
		if err := l.syncDir(); err != nil {
			return l.fail(err)
		}
	}
	l.durable = min(l.durable, offset)
	l.syncTarget = min(l.syncTarget, offset)
	l.sealedNext = min(l.sealedNext, seg.start)
	return nil
}

// batchBoundary returns the byte position in seg of the batch whose base
// offset is offset; a batch that holds offset without starting there is
// an error (a checkpoint's log ends between batches).
func (l *Log) batchBoundary(seg *segment, offset uint64) (int64, error) {
	l.scanner.reset(seg.log, seg.size, readChunkBytes)
	defer l.scanner.forget()
	for pos := seg.seekPosition(offset); pos < seg.size; {
		rec, err := l.scanner.record(pos)
		if err != nil {
			return 0, fmt.Errorf("truncate %s at byte %d: %w", seg.logPath, pos, err)
		}
		v := wire.BatchView(rec)
		base, messages := v.BaseOffset(), uint64(v.MessageCount())
		switch {
		case base == offset:
			return pos, nil
		case base < offset && offset < base+messages:
			return 0, fmt.Errorf("truncate %s to offset %d: inside the batch at byte %d (offsets %d..%d): %w",
				seg.logPath, offset, pos, base, base+messages-1, ErrInvalidArgument)
		case base > offset:
			return 0, fmt.Errorf("truncate %s to offset %d: no batch starts there (next at %d): %w", seg.logPath, offset, base, ErrCorrupt)
		}
		pos += int64(len(rec))
	}
	return 0, fmt.Errorf("truncate %s to offset %d: no batch starts there: %w", seg.logPath, offset, ErrCorrupt)
}
