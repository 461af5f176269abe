package wire

import (
	"encoding/binary"
	"fmt"
)

// Batch layout of PROTOCOL.md §6.1-6.2. The same record travels in
// SendMessages requests, in poll replies and in `.log` segment files.
const (
	// BatchHeaderSize is the fixed size of a batch header.
	BatchHeaderSize = 256
	// MessageHeaderSize is the fixed size of a message frame header.
	MessageHeaderSize = 48
	// BatchLengthMax bounds batch_length: a batch must fit one 64 MiB frame.
	BatchLengthMax = 64 << 20
	// batchChecksumPrefixSize is the length of the header fields hashed
	// first by the batch checksum (§6.3).
	batchChecksumPrefixSize = 44
)

// Byte offsets of the batch header fields (§6.1).
const (
	batchPartitionIDAt     = 0
	batchBaseOffsetAt      = 8
	batchBaseTimestampAt   = 16
	batchOriginTimestampAt = 24
	batchLengthAt          = 32
	batchChecksumAt        = 40
	batchMessageCountAt    = 48
	batchReservedAt        = 52
)

// Byte offsets of the message frame header fields (§6.2).
const (
	frameChecksumAt          = 0
	frameIDAt                = 8
	frameOffsetDeltaAt       = 24
	frameTimestampDeltaAt    = 28
	frameUserHeadersLengthAt = 32
	framePayloadLengthAt     = 36
	frameReservedAt          = 40
)

// BatchHeader is the decoded form of a 256-byte batch header. The reserved
// tail is not represented: it is always zero in a valid batch.
type BatchHeader struct {
	PartitionID     uint64
	BaseOffset      uint64
	BaseTimestamp   uint64 // server append time, micros since epoch
	OriginTimestamp uint64 // earliest producer timestamp, micros
	BatchLength     uint64 // 256 + bytes of all frames
	BatchChecksum   uint64
	MessageCount    uint32
}

// PutBatchHeader writes h into dst[0:256], zeroing the reserved bytes. It
// returns ErrBufferTooSmall (wrapped) when dst is shorter than a header.
func PutBatchHeader(dst []byte, h BatchHeader) error {
	if len(dst) < BatchHeaderSize {
		return fmt.Errorf("batch header needs %d bytes, have %d: %w", BatchHeaderSize, len(dst), ErrBufferTooSmall)
	}
	binary.LittleEndian.PutUint64(dst[batchPartitionIDAt:], h.PartitionID)
	binary.LittleEndian.PutUint64(dst[batchBaseOffsetAt:], h.BaseOffset)
	binary.LittleEndian.PutUint64(dst[batchBaseTimestampAt:], h.BaseTimestamp)
	binary.LittleEndian.PutUint64(dst[batchOriginTimestampAt:], h.OriginTimestamp)
	binary.LittleEndian.PutUint64(dst[batchLengthAt:], h.BatchLength)
	binary.LittleEndian.PutUint64(dst[batchChecksumAt:], h.BatchChecksum)
	binary.LittleEndian.PutUint32(dst[batchMessageCountAt:], h.MessageCount)
	clear(dst[batchReservedAt:BatchHeaderSize])
	return nil
}

// DecodeBatchHeader reads the header fields of b. It checks only that b
// holds 256 bytes; ValidateBatch applies the admission rules.
func DecodeBatchHeader(b []byte) (BatchHeader, error) {
	if len(b) < BatchHeaderSize {
		return BatchHeader{}, fmt.Errorf("batch header of %d bytes: %w", len(b), ErrBatchMalformed)
	}
	v := BatchView(b)
	return BatchHeader{
		PartitionID:     v.PartitionID(),
		BaseOffset:      v.BaseOffset(),
		BaseTimestamp:   v.BaseTimestamp(),
		OriginTimestamp: v.OriginTimestamp(),
		BatchLength:     v.BatchLength(),
		BatchChecksum:   v.BatchChecksum(),
		MessageCount:    v.MessageCount(),
	}, nil
}

// BatchView is a zero-copy view of a batch record. Its accessors require
// len(v) ≥ BatchHeaderSize (check with DecodeBatchHeader or ValidateBatch
// first); Frames is safe on any bytes.
type BatchView []byte

// PartitionID returns the partition_id field.
func (v BatchView) PartitionID() uint64 { return binary.LittleEndian.Uint64(v[batchPartitionIDAt:]) }

// BaseOffset returns the offset of the batch's first message.
func (v BatchView) BaseOffset() uint64 { return binary.LittleEndian.Uint64(v[batchBaseOffsetAt:]) }

// BaseTimestamp returns the server append time in micros.
func (v BatchView) BaseTimestamp() uint64 {
	return binary.LittleEndian.Uint64(v[batchBaseTimestampAt:])
}

// OriginTimestamp returns the earliest producer timestamp in micros.
func (v BatchView) OriginTimestamp() uint64 {
	return binary.LittleEndian.Uint64(v[batchOriginTimestampAt:])
}

// BatchLength returns the batch_length field (header included).
func (v BatchView) BatchLength() uint64 { return binary.LittleEndian.Uint64(v[batchLengthAt:]) }

// BatchChecksum returns the stored batch checksum.
func (v BatchView) BatchChecksum() uint64 { return binary.LittleEndian.Uint64(v[batchChecksumAt:]) }

// MessageCount returns the message_count field.
func (v BatchView) MessageCount() uint32 { return binary.LittleEndian.Uint32(v[batchMessageCountAt:]) }

// Frames returns an iterator over the frames after the header, bounded by
// the header's message_count and by len(v). It never reads out of bounds.
func (v BatchView) Frames() FrameIterator {
	if len(v) < BatchHeaderSize {
		return FrameIterator{}
	}
	end := len(v)
	if n := v.BatchLength(); n >= BatchHeaderSize && n < uint64(end) {
		end = int(n)
	}
	return FrameIterator{b: v[:end], pos: BatchHeaderSize, remaining: v.MessageCount()}
}

// MessageID is a message's 128-bit id, stored little-endian: Low holds bytes
// 0..8 and High bytes 8..16 of the field.
type MessageID struct {
	Low  uint64
	High uint64
}

// FrameView is a zero-copy view of one message frame: the 48-byte header
// followed by payload and user headers. Views handed out by FrameIterator
// are exactly one frame long and in bounds.
type FrameView []byte

// Checksum returns the stored frame checksum.
func (f FrameView) Checksum() uint64 { return binary.LittleEndian.Uint64(f[frameChecksumAt:]) }

// ID returns the message id.
func (f FrameView) ID() MessageID {
	return MessageID{
		Low:  binary.LittleEndian.Uint64(f[frameIDAt:]),
		High: binary.LittleEndian.Uint64(f[frameIDAt+8:]),
	}
}

// OffsetDelta returns the frame's offset relative to the batch base offset.
func (f FrameView) OffsetDelta() uint32 { return binary.LittleEndian.Uint32(f[frameOffsetDeltaAt:]) }

// TimestampDelta returns origin timestamp − batch origin_timestamp, micros.
func (f FrameView) TimestampDelta() uint32 {
	return binary.LittleEndian.Uint32(f[frameTimestampDeltaAt:])
}

// UserHeadersLength returns the byte length of the user-headers block.
func (f FrameView) UserHeadersLength() uint32 {
	return binary.LittleEndian.Uint32(f[frameUserHeadersLengthAt:])
}

// PayloadLength returns the byte length of the payload.
func (f FrameView) PayloadLength() uint32 {
	return binary.LittleEndian.Uint32(f[framePayloadLengthAt:])
}

// Reserved returns the reserved u64 (zero in a valid frame).
func (f FrameView) Reserved() uint64 { return binary.LittleEndian.Uint64(f[frameReservedAt:]) }

// Payload returns the payload bytes (a sub-slice of the frame).
func (f FrameView) Payload() []byte {
	return f[MessageHeaderSize : MessageHeaderSize+int(f.PayloadLength())]
}

// UserHeaders returns the raw user-headers block (TLV, §4.7).
func (f FrameView) UserHeaders() []byte {
	return f[MessageHeaderSize+int(f.PayloadLength()):]
}

// FrameIterator walks the frames of a batch without allocating. The zero
// value yields nothing.
type FrameIterator struct {
	b         []byte
	pos       int
	remaining uint32
	err       error
}

// Next returns the next frame, or false when the batch is exhausted or a
// frame does not fit (then Err says why).
func (it *FrameIterator) Next() (FrameView, bool) {
	if it.remaining == 0 || it.err != nil {
		return nil, false
	}
	n, err := frameLength(it.b, it.pos)
	if err != nil {
		it.err = err
		return nil, false
	}
	f := FrameView(it.b[it.pos : it.pos+n])
	it.pos += n
	it.remaining--
	return f, true
}

// Err returns the structural error that stopped iteration, if any.
func (it *FrameIterator) Err() error { return it.err }

// Position returns the byte position in the batch of the next frame.
func (it *FrameIterator) Position() int { return it.pos }

// frameLength returns the total length of the frame starting at b[pos:],
// or ErrBatchMalformed when its header or body does not fit in b.
func frameLength(b []byte, pos int) (int, error) {
	if pos < 0 || len(b)-pos < MessageHeaderSize {
		return 0, fmt.Errorf("frame header at byte %d does not fit: %w", pos, ErrBatchMalformed)
	}
	payload := uint64(binary.LittleEndian.Uint32(b[pos+framePayloadLengthAt:]))
	headers := uint64(binary.LittleEndian.Uint32(b[pos+frameUserHeadersLengthAt:]))
	total := MessageHeaderSize + payload + headers
	if total > uint64(len(b)-pos) {
		return 0, fmt.Errorf("frame at byte %d of %d bytes exceeds the batch: %w", pos, total, ErrBatchMalformed)
	}
	return int(total), nil
}
