package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// BatchBuilder builds a valid producer batch (§6.1-6.3: partition_id,
// base_offset and base_timestamp zero, offset deltas 0,1,2…, checksums
// computed) into a buffer it reuses across batches. Producers (the Go
// client, tests, the benchmark) call Reset, Add per message, then Finish.
// After warm-up no call allocates. The zero value is ready to use; a
// BatchBuilder is not safe for concurrent use.
type BatchBuilder struct {
	buf []byte
	// origins holds each added message's origin timestamp, in order.
	// Invariant: len(origins) = number of frames in buf.
	origins []uint64
}

// Reset empties the builder, keeping its buffers.
func (bb *BatchBuilder) Reset() {
	bb.buf = bb.buf[:0]
	bb.origins = bb.origins[:0]
}

// Count returns the number of messages added since the last Reset.
func (bb *BatchBuilder) Count() int { return len(bb.origins) }

// Len returns the byte length the finished batch will have.
func (bb *BatchBuilder) Len() int {
	if len(bb.buf) == 0 {
		return BatchHeaderSize
	}
	return len(bb.buf)
}

// PutFrameHeader writes a message frame header (§6.2) into
// dst[:MessageHeaderSize] as a producer builds it: the id, the offset
// delta and the two lengths, with the checksum, timestamp delta and
// reserved fields zero (Finish fills the first two).
func PutFrameHeader(dst []byte, id MessageID, offsetDelta uint32, userHeadersLen, payloadLen int) {
	clear(dst[:MessageHeaderSize])
	binary.LittleEndian.PutUint64(dst[frameIDAt:], id.Low)
	binary.LittleEndian.PutUint64(dst[frameIDAt+8:], id.High)
	binary.LittleEndian.PutUint32(dst[frameOffsetDeltaAt:], offsetDelta)
	binary.LittleEndian.PutUint32(dst[frameUserHeadersLengthAt:], uint32(userHeadersLen))
	binary.LittleEndian.PutUint32(dst[framePayloadLengthAt:], uint32(payloadLen))
}

// Add appends one message: its id, payload, raw user-headers block (TLV,
// §4.7, may be empty) and origin timestamp in micros. It fails with
// ErrBatchMalformed when the batch would exceed BatchLengthMax.
func (bb *BatchBuilder) Add(id MessageID, payload, userHeaders []byte, originMicros uint64) error {
	if len(bb.buf) == 0 {
		bb.buf = append(bb.buf, make([]byte, BatchHeaderSize)...)
	}
	size := uint64(MessageHeaderSize) + uint64(len(payload)) + uint64(len(userHeaders))
	if uint64(len(bb.buf))+size > BatchLengthMax {
		return fmt.Errorf("batch would reach %d bytes: %w", uint64(len(bb.buf))+size, ErrBatchMalformed)
	}
	var header [MessageHeaderSize]byte
	PutFrameHeader(header[:], id, uint32(len(bb.origins)), len(userHeaders), len(payload))
	bb.buf = append(bb.buf, header[:]...)
	bb.buf = append(bb.buf, payload...)
	bb.buf = append(bb.buf, userHeaders...)
	bb.origins = append(bb.origins, originMicros)
	return nil
}

// Finish completes the batch: origin_timestamp = the earliest message
// timestamp, timestamp deltas, frame checksums, batch_length,
// message_count and the batch checksum. The returned slice aliases the
// builder's buffer and stays valid until the next Reset or Add. It fails
// with ErrBatchMalformed for an empty batch or when message timestamps
// spread over more than a u32 of micros.
func (bb *BatchBuilder) Finish() ([]byte, error) {
	if len(bb.origins) == 0 {
		return nil, fmt.Errorf("empty batch: %w", ErrBatchMalformed)
	}
	origin := bb.origins[0]
	for _, t := range bb.origins[1:] {
		origin = min(origin, t)
	}
	pos := BatchHeaderSize
	for i, t := range bb.origins {
		if t-origin > math.MaxUint32 {
			return nil, fmt.Errorf("message %d is %d micros after the earliest: %w", i, t-origin, ErrBatchMalformed)
		}
		n, err := frameLength(bb.buf, pos)
		if err != nil {
			return nil, err
		}
		f := bb.buf[pos : pos+n]
		binary.LittleEndian.PutUint32(f[frameTimestampDeltaAt:], uint32(t-origin))
		binary.LittleEndian.PutUint64(f[frameChecksumAt:], MessageChecksum(f))
		pos += n
	}
	h := BatchHeader{
		OriginTimestamp: origin,
		BatchLength:     uint64(len(bb.buf)),
		MessageCount:    uint32(len(bb.origins)),
	}
	if err := PutBatchHeader(bb.buf, h); err != nil {
		return nil, err
	}
	sum, err := ComputeBatchChecksum(bb.buf)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint64(bb.buf[batchChecksumAt:], sum)
	return bb.buf, nil
}
