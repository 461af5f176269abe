package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"
)

// batchError is a batch sentinel error carrying the protocol code a server
// reports for it. It unwraps to the ErrorCode, so CodeOf works too.
type batchError struct {
	message string
	code    ErrorCode
}

func (e *batchError) Error() string { return e.message }
func (e *batchError) Unwrap() error { return e.code }

// Sentinel batch errors (wrapped with %w by the functions below). Each maps
// to one protocol code through BatchErrorCode (and CodeOf).
var (
	// ErrBatchMalformed: the batch structure is wrong (short header,
	// batch_length, frames that do not tile, message count, offset deltas):
	// code 3 InvalidCommand.
	ErrBatchMalformed error = &batchError{"wire: malformed message batch", 3}
	// ErrBatchChecksum: the batch checksum does not verify: code 4039.
	ErrBatchChecksum error = &batchError{"wire: invalid batch checksum", 4039}
	// ErrBatchMessageChecksum: a frame checksum does not verify: code 4027.
	ErrBatchMessageChecksum error = &batchError{"wire: invalid message checksum", 4027}
	// ErrBatchReserved: a reserved batch or frame field is non-zero: code 4101.
	ErrBatchReserved error = &batchError{"wire: non-zero reserved field in batch", 4101}
)

// BatchErrorCode returns the uint32 protocol code for an error returned by
// the batch functions: 4039, 4027, 4101, or 3 for any other non-nil error;
// 0 for nil.
func BatchErrorCode(err error) uint32 {
	if err == nil {
		return 0
	}
	var be *batchError
	if errors.As(err, &be) {
		return uint32(be.code)
	}
	return 3
}

// MessageChecksum computes a frame's checksum (§6.3): XXH3-64 of the frame
// from byte 8 to its end. frame must hold at least MessageHeaderSize bytes.
func MessageChecksum(frame []byte) uint64 {
	return xxh3.Hash(frame[frameIDAt:])
}

// ComputeBatchChecksum computes the batch checksum of §6.3 over the 44 bytes
// of header fields and the stored checksums of the frames, walking
// message_count frames. It does not allocate. It fails with
// ErrBatchMalformed when the frames cannot be walked.
func ComputeBatchChecksum(b []byte) (uint64, error) {
	if len(b) < BatchHeaderSize {
		return 0, fmt.Errorf("batch of %d bytes: %w", len(b), ErrBatchMalformed)
	}
	var h xxh3.Hasher
	var prefix [batchChecksumPrefixSize]byte
	copy(prefix[:batchChecksumAt], b[:batchChecksumAt])
	copy(prefix[batchChecksumAt:], b[batchMessageCountAt:batchMessageCountAt+4])
	h.Write(prefix[:])
	it := BatchView(b).Frames()
	var count uint32
	for {
		f, ok := it.Next()
		if !ok {
			break
		}
		h.Write(f[frameChecksumAt : frameChecksumAt+8])
		count++
	}
	if err := it.Err(); err != nil {
		return 0, err
	}
	if count != BatchView(b).MessageCount() {
		return 0, fmt.Errorf("batch holds %d of %d frames: %w", count, BatchView(b).MessageCount(), ErrBatchMalformed)
	}
	return h.Sum64(), nil
}

// ValidateBatch applies every admission rule of PROTOCOL.md §6.4 to b, which
// must be exactly one batch record: batch_length = len(b) ≥ 256 + 48,
// reserved header bytes zero, message_count ≥ 1 and = expectedCount,
// frames with zero reserved fields and offset_delta = their index, tiling
// the batch exactly, each frame checksum and the batch checksum verifying.
// Requiring offset_delta = index (producers must send it, §6.2) is a Strata
// choice that keeps stored offsets dense. Errors wrap ErrBatchMalformed,
// ErrBatchReserved, ErrBatchMessageChecksum or ErrBatchChecksum. It does
// not allocate on success.
func ValidateBatch(b []byte, expectedCount uint32) error {
	if len(b) < BatchHeaderSize {
		return fmt.Errorf("batch of %d bytes is shorter than its header: %w", len(b), ErrBatchMalformed)
	}
	v := BatchView(b)
	if n := v.BatchLength(); n != uint64(len(b)) || n < BatchHeaderSize+MessageHeaderSize || n > BatchLengthMax {
		return fmt.Errorf("batch_length %d for a record of %d bytes: %w", n, len(b), ErrBatchMalformed)
	}
	for _, c := range b[batchReservedAt:BatchHeaderSize] {
		if c != 0 {
			return fmt.Errorf("batch header reserved bytes: %w", ErrBatchReserved)
		}
	}
	count := v.MessageCount()
	if count == 0 || count != expectedCount {
		return fmt.Errorf("message_count %d, expected %d: %w", count, expectedCount, ErrBatchMalformed)
	}
	var h xxh3.Hasher
	var prefix [batchChecksumPrefixSize]byte
	copy(prefix[:batchChecksumAt], b[:batchChecksumAt])
	copy(prefix[batchChecksumAt:], b[batchMessageCountAt:batchMessageCountAt+4])
	h.Write(prefix[:])
	pos := BatchHeaderSize
	for i := uint32(0); i < count; i++ {
		n, err := frameLength(b, pos)
		if err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		f := FrameView(b[pos : pos+n])
		if f.Reserved() != 0 {
			return fmt.Errorf("frame %d reserved field: %w", i, ErrBatchReserved)
		}
		if f.OffsetDelta() != i {
			return fmt.Errorf("frame %d has offset_delta %d: %w", i, f.OffsetDelta(), ErrBatchMalformed)
		}
		if MessageChecksum(f) != f.Checksum() {
			return fmt.Errorf("frame %d at byte %d: %w", i, pos, ErrBatchMessageChecksum)
		}
		h.Write(f[frameChecksumAt : frameChecksumAt+8])
		pos += n
	}
	if pos != len(b) {
		return fmt.Errorf("frames end at byte %d of %d: %w", pos, len(b), ErrBatchMalformed)
	}
	if h.Sum64() != v.BatchChecksum() {
		return fmt.Errorf("batch checksum %#x: %w", v.BatchChecksum(), ErrBatchChecksum)
	}
	return nil
}

// StampBatch rewrites the server fields of a validated batch in place
// (§6.5): partition_id, base_offset, base_timestamp, then recomputes the
// batch checksum. Frames are untouched. It fails only when b's frames
// cannot be walked (ErrBatchMalformed), leaving the checksum stale.
func StampBatch(b []byte, partitionID, baseOffset, baseTimestamp uint64) error {
	if len(b) < BatchHeaderSize {
		return fmt.Errorf("batch of %d bytes: %w", len(b), ErrBatchMalformed)
	}
	binary.LittleEndian.PutUint64(b[batchPartitionIDAt:], partitionID)
	binary.LittleEndian.PutUint64(b[batchBaseOffsetAt:], baseOffset)
	binary.LittleEndian.PutUint64(b[batchBaseTimestampAt:], baseTimestamp)
	sum, err := ComputeBatchChecksum(b)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(b[batchChecksumAt:], sum)
	return nil
}
