package wire

import (
	"encoding/binary"
	"fmt"
)

// SliceBatch appends to dst the part of the batch record b holding the
// messages with offsets in [fromOffset, fromOffset+maxCount), where a
// message's offset is base_offset + offset_delta (§6.2). When every message
// of b is selected the record is appended unchanged; when only some are, a
// rewritten header is appended (§6.6: batch_length, message_count and
// batch_checksum recomputed, every other field unchanged) followed by the
// selected frames, byte-identical. When none is selected dst is returned
// as is with count 0. b must be one whole record (len(b) = batch_length);
// b and the appended region of dst must not overlap. Besides growing dst
// it does not allocate.
func SliceBatch(dst, b []byte, fromOffset uint64, maxCount uint32) ([]byte, uint32, error) {
	if len(b) < BatchHeaderSize || BatchView(b).BatchLength() != uint64(len(b)) {
		return dst, 0, fmt.Errorf("slice of a %d-byte record: %w", len(b), ErrBatchMalformed)
	}
	v := BatchView(b)
	base := v.BaseOffset()
	var endOffset uint64 // exclusive; saturates at the top of the range
	if fromOffset > ^uint64(0)-uint64(maxCount) {
		endOffset = ^uint64(0)
	} else {
		endOffset = fromOffset + uint64(maxCount)
	}
	first, last := -1, -1 // byte range of the selected frames
	var count, total uint32
	it := v.Frames()
	for {
		start := it.Position()
		f, ok := it.Next()
		if !ok {
			break
		}
		total++
		offset := base + uint64(f.OffsetDelta())
		if offset < fromOffset || offset >= endOffset {
			continue
		}
		if first < 0 {
			first = start
		} else if start != last {
			// Selected frames must be contiguous; offsets out of order
			// are not a record this function can slice.
			return dst, 0, fmt.Errorf("selected frames are not contiguous at byte %d: %w", start, ErrBatchMalformed)
		}
		last = start + len(f)
		count++
	}
	if err := it.Err(); err != nil {
		return dst, 0, err
	}
	if total != v.MessageCount() {
		return dst, 0, fmt.Errorf("record holds %d of %d frames: %w", total, v.MessageCount(), ErrBatchMalformed)
	}
	if count == 0 {
		return dst, 0, nil
	}
	if count == total {
		return append(dst, b...), count, nil
	}
	at := len(dst)
	dst = append(dst, b[:BatchHeaderSize]...)
	dst = append(dst, b[first:last]...)
	out := dst[at:]
	binary.LittleEndian.PutUint64(out[batchLengthAt:], uint64(len(out)))
	binary.LittleEndian.PutUint32(out[batchMessageCountAt:], count)
	sum, err := ComputeBatchChecksum(out)
	if err != nil {
		return dst[:at], 0, err
	}
	binary.LittleEndian.PutUint64(out[batchChecksumAt:], sum)
	return dst, count, nil
}
