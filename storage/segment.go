package storage

import (
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/stratabroker/strata/net/wire"
)

// Segment file naming (PROTOCOL.md §6.8): the 20-digit zero-padded start
// offset, with `.log` for data and `.index` for the sparse index.
const (
	segmentNameDigits = 20
	logSuffix         = ".log"
	indexSuffix       = ".index"
	// scanChunkBytes is how much recovery reads from a segment at a time.
	scanChunkBytes = 1 << 20
	// readChunkBytes is how much a poll reads from a segment at a time.
	readChunkBytes = 64 << 10
	// batchLengthMin is the smallest valid record: a header and one empty
	// frame.
	batchLengthMin = wire.BatchHeaderSize + wire.MessageHeaderSize
)

// SegmentLogName returns the `.log` file name of a segment starting at
// startOffset.
func SegmentLogName(startOffset uint64) string {
	return fmt.Sprintf("%020d%s", startOffset, logSuffix)
}

// SegmentIndexName returns the `.index` file name of a segment.
func SegmentIndexName(startOffset uint64) string {
	return fmt.Sprintf("%020d%s", startOffset, indexSuffix)
}

// parseSegmentLogName returns the start offset named by a `.log` file name.
func parseSegmentLogName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, logSuffix)
	if !ok || len(digits) != segmentNameDigits {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	return v, err == nil
}

// segment is one `.log`/`.index` pair of a partition log.
type segment struct {
	start uint64 // offset of the first message (the file name)
	// Invariant: next = start + messages; size = bytes of verified batches.
	next     uint64
	size     int64
	logPath  string
	log      File
	index    File
	entries  []IndexEntry // the index, also on disk, in position order
	dirty    bool         // written since the last Sync
	messages uint64
}

func newSegment(dir string, start uint64) *segment {
	return &segment{start: start, next: start, logPath: path.Join(dir, SegmentLogName(start))}
}

func (s *segment) indexPath() string {
	return strings.TrimSuffix(s.logPath, logSuffix) + indexSuffix
}

// close closes both files, reporting the first error.
func (s *segment) close() error {
	var first error
	for _, f := range []File{s.log, s.index} {
		if f == nil {
			continue
		}
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.log, s.index = nil, nil
	return first
}

// seekPosition returns the position of the last index entry at or before
// offset (0 when none), where a forward scan for offset may start.
func (s *segment) seekPosition(offset uint64) int64 {
	lo, hi := 0, len(s.entries)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.entries[mid].Offset <= offset {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0
	}
	return int64(s.entries[lo-1].Position)
}

// batchScanner reads whole batch records of one file in chunks, reusing
// its buffer. It checks only that a record's batch_length is plausible and
// fits the file; callers validate the content.
type batchScanner struct {
	file  File
	limit int64 // bytes of the file the scan may read
	chunk int   // bytes read at a time (more for a bigger record)
	buf   []byte
	// Invariant: buf[:filled] holds the file bytes from bufAt.
	bufAt  int64
	filled int
}

// errShortRecord reports a record that does not fit the scanned range.
var errShortRecord = fmt.Errorf("record runs past the end of the file: %w", ErrCorrupt)

// reset points the scanner at f, readable up to limit, reading chunk
// bytes at a time. Buffered bytes of the same file stay valid: a log file
// only grows, so bytes once read never change while it is open.
func (s *batchScanner) reset(f File, limit int64, chunk int) {
	if f != s.file {
		s.bufAt, s.filled = 0, 0
	}
	s.file, s.limit, s.chunk = f, limit, chunk
}

// release forgets the buffered bytes and frees the buffer.
func (s *batchScanner) release() {
	s.forget()
	s.buf = nil
}

// forget drops the buffered bytes (their file is being removed or cut).
func (s *batchScanner) forget() { s.file, s.bufAt, s.filled = nil, 0, 0 }

// fill makes the n bytes at pos available in the buffer and returns them.
// A read failure is returned as is (it is not corruption).
func (s *batchScanner) fill(pos int64, n int) ([]byte, error) {
	if pos >= s.bufAt && pos+int64(n) <= s.bufAt+int64(s.filled) {
		at := int(pos - s.bufAt)
		return s.buf[at : at+n], nil
	}
	want := max(n, s.chunk)
	if rest := s.limit - pos; int64(want) > rest {
		want = int(rest)
	}
	if want < n {
		return nil, errShortRecord
	}
	if cap(s.buf) < want {
		s.buf = make([]byte, want)
	}
	s.buf = s.buf[:cap(s.buf)]
	got, err := s.file.ReadAt(s.buf[:want], pos)
	if got < want {
		s.filled = 0
		if err == nil || err == io.EOF {
			return nil, errShortRecord
		}
		return nil, err
	}
	s.bufAt, s.filled = pos, got
	return s.buf[:n], nil
}

// header returns the 256-byte header of the record at pos and its length,
// or errShortRecord / a wrapped ErrCorrupt for an implausible length.
func (s *batchScanner) header(pos int64) (wire.BatchView, int64, error) {
	h, err := s.fill(pos, wire.BatchHeaderSize)
	if err != nil {
		return nil, 0, err
	}
	v := wire.BatchView(h)
	n := v.BatchLength()
	if n < batchLengthMin || n > wire.BatchLengthMax {
		return nil, 0, fmt.Errorf("batch_length %d at byte %d: %w", n, pos, ErrCorrupt)
	}
	if pos+int64(n) > s.limit {
		return nil, 0, errShortRecord
	}
	return v, int64(n), nil
}

// record returns the whole record at pos.
func (s *batchScanner) record(pos int64) ([]byte, error) {
	_, n, err := s.header(pos)
	if err != nil {
		return nil, err
	}
	return s.fill(pos, int(n))
}
