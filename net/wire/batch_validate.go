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
	// ErrUserHeaderKind: a user-header item has a kind byte outside 1..15:
	// code 4040 InvalidHeaderKind.
	ErrUserHeaderKind error = &batchError{"wire: invalid user header kind", 4040}
	// ErrUserHeaderKey: a user-header key item is cut short, has a length
	// outside 1..255 or overrunning the block, or a size its kind does not
	// allow: code 4018 InvalidHeaderKey.
	ErrUserHeaderKey error = &batchError{"wire: invalid user header key", 4018}
	// ErrUserHeaderValue: the same for a value item, or a key without a
	// value: code 4019 InvalidHeaderValue.
	ErrUserHeaderValue error = &batchError{"wire: invalid user header value", 4019}
)

// BatchErrorCode returns the uint32 protocol code for an error returned by
// the batch functions: 4039, 4027, 4101, 4040, 4018, 4019, or 3 for any
// other non-nil error; 0 for nil.
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

// ValidateBatch checks that b is exactly one well-formed batch record
// (PROTOCOL.md §6.4): batch_length = len(b) ≥ 256 + 48, reserved header
// bytes zero, message_count ≥ 1 and = expectedCount, frames with zero
// reserved fields and offset_delta = their index, tiling the batch
// exactly, each frame checksum and the batch checksum verifying. Requiring
// offset_delta = index (producers must send it, §6.2) is a Strata choice
// that keeps stored offsets dense. Errors wrap ErrBatchMalformed,
// ErrBatchReserved, ErrBatchMessageChecksum or ErrBatchChecksum. It does
// not allocate on success.
//
// It does not look inside user headers: it is also the check storage
// applies to records read back from disk, and a record's integrity does
// not depend on the content its producer put in it. Admission of a new
// batch uses ValidateSendBatch.
func ValidateBatch(b []byte, expectedCount uint32) error {
	return validateBatch(b, expectedCount, false)
}

// ValidateSendBatch is the admission check of a SendMessages batch:
// ValidateBatch plus ValidateUserHeaders on every frame's user-headers
// block, in the same walk over the frames (the payloads are not read
// twice). A message whose headers are not valid TLV would be stored and
// then fail every consumer that decodes it, so the whole batch is refused
// with ErrUserHeaderKind (4040), ErrUserHeaderKey (4018) or
// ErrUserHeaderValue (4019). It does not allocate on success.
func ValidateSendBatch(b []byte, expectedCount uint32) error {
	return validateBatch(b, expectedCount, true)
}

func validateBatch(b []byte, expectedCount uint32, userHeaders bool) error {
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
		if userHeaders {
			if err := ValidateUserHeaders(f.UserHeaders()); err != nil {
				return fmt.Errorf("frame %d user headers: %w", i, err)
			}
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

// ValidateUserHeaders checks a message's user-headers block against §4.7
// as SDKs build and parse it: pairs of items, each [kind u8][length u32]
// [data] with kind 1..15, 1 ≤ length ≤ 255 inside the block, and the exact
// value size of the fixed-size kinds (bool and 8-bit kinds 1, ..., 128-bit
// kinds 16). An empty block is valid. A bad kind byte is
// ErrUserHeaderKind (4040); any other fault of a key item is
// ErrUserHeaderKey (4018) and of a value item, or a key left without a
// value, ErrUserHeaderValue (4019). It never allocates on success and
// never panics.
func ValidateUserHeaders(block []byte) error {
	for off, item := 0, 0; off < len(block); item++ {
		sentinel := ErrUserHeaderKey
		if item%2 == 1 {
			sentinel = ErrUserHeaderValue
		}
		left := len(block) - off
		if left < TLVItemHeaderSize {
			return fmt.Errorf("item %d at byte %d: %d bytes left for a %d-byte item header: %w", item, off, left, TLVItemHeaderSize, sentinel)
		}
		kind := TLVKind(block[off])
		if !kind.Valid() {
			return fmt.Errorf("item %d at byte %d: kind %d: %w", item, off, kind, ErrUserHeaderKind)
		}
		n := binary.LittleEndian.Uint32(block[off+1:])
		if n == 0 || n > TLVValueLengthMax || uint64(n) > uint64(left-TLVItemHeaderSize) {
			return fmt.Errorf("item %d at byte %d: length %d with %d bytes left: %w", item, off, n, left-TLVItemHeaderSize, sentinel)
		}
		if size := kind.FixedSize(); size != 0 && int(n) != size {
			return fmt.Errorf("item %d at byte %d: kind %d with %d bytes, want %d: %w", item, off, kind, n, size, sentinel)
		}
		off += TLVItemHeaderSize + int(n)
		if off == len(block) && item%2 == 0 {
			return fmt.Errorf("key at item %d has no value: %w", item, ErrUserHeaderValue)
		}
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
