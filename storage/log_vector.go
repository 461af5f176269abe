package storage

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire"
)

// AppendBatches is Append for batches held in separate buffers, each
// exactly one whole stamped batch, the first at NextOffset and the rest
// contiguous: the bytes on disk, the index entries (one per segment
// touched), sealing and rolling are exactly those of Append over their
// concatenation. The batches are written in place with vectored writes
// (File.AppendVector) of at most iovecBuffersMax buffers, never copied, so
// a caller holding a flush as separate batches needs no gather buffer.
// Nothing is written when any batch is invalid (the error wraps
// ErrBadAppend). The Log keeps no reference to the buffers after it
// returns. It does not allocate per batch once its scratch list has grown.
func (l *Log) AppendBatches(batches [][]byte) error {
	if err := l.usable(); err != nil {
		return err
	}
	if err := checkAppendBatches(batches, l.active().next); err != nil {
		return err
	}
	return l.writeRun(batches)
}

// checkAppendBatches verifies that every element is exactly one whole
// batch record and that their offsets continue from next.
func checkAppendBatches(batches [][]byte, next uint64) error {
	if len(batches) == 0 {
		return fmt.Errorf("empty append: %w", ErrBadAppend)
	}
	for i, b := range batches {
		n, messages, err := checkBatch(b, next)
		if err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
		if n != len(b) {
			return fmt.Errorf("batch %d: buffer of %d bytes holds a record of %d: %w", i, len(b), n, ErrBadAppend)
		}
		next += messages
	}
	return nil
}

// batchCursor walks the batch records of a validated run of pieces in
// order; a piece holds one or more whole records back to back.
type batchCursor struct {
	pieces [][]byte
	piece  int // index of the current piece
	pos    int // byte position of the next record in the current piece
}

func (c *batchCursor) done() bool { return c.piece == len(c.pieces) }

// next returns the next record and whether it directly follows, in the
// same piece, the record returned before it.
func (c *batchCursor) next() (record []byte, follows bool) {
	p := c.pieces[c.piece]
	follows = c.pos > 0
	n := int(wire.BatchView(p[c.pos:]).BatchLength())
	record = p[c.pos : c.pos+n]
	c.pos += n
	if c.pos == len(p) {
		c.piece, c.pos = c.piece+1, 0
	}
	return record, follows
}

// writeRun writes a validated run of pieces, rolling segments as Append
// documents. Append and AppendBatches share it.
func (l *Log) writeRun(pieces [][]byte) error {
	c := batchCursor{pieces: pieces}
	for !c.done() {
		if l.active().size >= l.opts.SegmentSizeBytes {
			if err := l.roll(); err != nil {
				return err
			}
		}
		if err := l.writeSegmentChunk(l.active(), &c); err != nil {
			return err
		}
	}
	return nil
}

// writeSegmentChunk writes to seg the records the cursor yields while
// seg's size before the record is below the segment size (so the record
// that crosses it is written whole), then indexes them: the first record,
// and every later one that starts IndexIntervalBytes or more past the
// previous entry (the spacing recovery expects, so a log written by large
// flushes reopens with its indexes intact). Records that follow each
// other in one piece go out as one buffer; vectored writes take at most
// iovecBuffersMax buffers.
func (l *Log) writeSegmentChunk(seg *segment, c *batchCursor) error {
	var chunkBytes int64
	var messages uint64
	l.indexBuf = l.indexBuf[:0]
	entries := len(seg.entries)
	lastEntryPos := int64(-1)
	for first := true; !c.done() && seg.size+chunkBytes < l.opts.SegmentSizeBytes; first = false {
		record, follows := c.next()
		v := wire.BatchView(record)
		if pos := seg.size + chunkBytes; first || pos-lastEntryPos >= l.opts.IndexIntervalBytes {
			entry := IndexEntry{Offset: v.BaseOffset(), Timestamp: v.BaseTimestamp(), Position: uint64(pos)}
			seg.entries = append(seg.entries, entry)
			var b [IndexEntrySize]byte
			PutIndexEntry(b[:], entry)
			l.indexBuf = append(l.indexBuf, b[:]...)
			lastEntryPos = pos
		}
		messages += uint64(v.MessageCount())
		chunkBytes += int64(len(record))
		if k := len(l.vector); follows && k > 0 {
			l.vector[k-1] = l.vector[k-1][:len(l.vector[k-1])+len(record)]
			continue
		}
		if len(l.vector) == iovecBuffersMax {
			if err := l.writeVector(seg); err != nil {
				return err
			}
		}
		l.vector = append(l.vector, record)
	}
	if chunkBytes == 0 {
		// Our bug: writeRun rolls a full segment before calling.
		panic(fmt.Sprintf("storage: segment %s of %d bytes took no batch", seg.logPath, seg.size))
	}
	if err := l.writeVector(seg); err != nil {
		seg.entries = seg.entries[:entries]
		return err
	}
	if n, err := seg.index.Append(l.indexBuf); err != nil || n != len(l.indexBuf) {
		seg.entries = seg.entries[:entries]
		return l.fail(fmt.Errorf("append %s: %v", seg.indexPath(), err))
	}
	seg.size += chunkBytes
	seg.next += messages
	seg.messages += messages
	seg.dirty = true
	l.messages += messages
	l.bytes += chunkBytes
	l.written += chunkBytes
	return nil
}

// writeVector appends the buffers of l.vector to seg's log file (a plain
// append for one buffer) and empties the list. A short or failed write
// fails the log.
func (l *Log) writeVector(seg *segment) error {
	if len(l.vector) == 0 {
		return nil
	}
	want := 0
	for _, b := range l.vector {
		want += len(b)
	}
	var n int
	var err error
	if len(l.vector) == 1 {
		n, err = seg.log.Append(l.vector[0])
	} else {
		n, err = seg.log.AppendVector(l.vector)
	}
	clear(l.vector) // drop the references to the caller's batches
	l.vector = l.vector[:0]
	if err != nil || n != want {
		return l.fail(fmt.Errorf("append %s: wrote %d of %d bytes: %v", seg.logPath, n, want, err))
	}
	return nil
}
