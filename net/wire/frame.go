package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/zeebo/xxh3"
)

// MaxFrameSize is the largest frame, header included: the reference
// server's message_bus.max_message_size default of 64 MiB (§1.1, §9).
const MaxFrameSize = 64 << 20

// ReadFrame reads one frame from r: exactly 256 header bytes, then the
// body the size field @48 announces. It rejects a size outside
// 256..MaxFrameSize and a command byte ≥ 30 (the caller then closes the
// connection, §1.1). header and body alias buf when cap(buf) holds the
// whole frame; otherwise a new buffer of exactly the frame size is
// allocated (pass it back next time to reuse it). A clean end of stream
// before any byte returns io.EOF unwrapped; a stream that ends inside a
// frame returns ErrTruncated.
func ReadFrame(r io.Reader, buf []byte) (header []byte, body []byte, err error) {
	return ReadFrameLimit(r, buf, MaxFrameSize)
}

// ReadFrameLimit is ReadFrame with a caller-chosen maximum frame size
// (clamped to MaxFrameSize).
func ReadFrameLimit(r io.Reader, buf []byte, maxFrameSize uint32) (header []byte, body []byte, err error) {
	if maxFrameSize > MaxFrameSize {
		maxFrameSize = MaxFrameSize
	}
	if cap(buf) < HeaderSize {
		buf = make([]byte, HeaderSize)
	}
	buf = buf[:cap(buf)]
	if n, err := io.ReadFull(r, buf[:HeaderSize]); err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return nil, nil, io.EOF
		}
		return nil, nil, readError(err)
	}
	if c := Command(buf[offCommand]); c >= CommandInvalidFrom {
		return nil, nil, fmt.Errorf("%w: command %d", ErrBadHeader, c)
	}
	size := binary.LittleEndian.Uint32(buf[offSize:])
	if size < HeaderSize || size > maxFrameSize {
		return nil, nil, fmt.Errorf("%w: size %d", ErrBadFrameSize, size)
	}
	if uint32(len(buf)) < size {
		grown := make([]byte, size)
		copy(grown, buf[:HeaderSize])
		buf = grown
	}
	if _, err := io.ReadFull(r, buf[HeaderSize:size]); err != nil {
		return nil, nil, readError(err)
	}
	return buf[:HeaderSize:HeaderSize], buf[HeaderSize:size:size], nil
}

func readError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", ErrTruncated, err)
	}
	return err
}

// RequestChecksum returns the request_checksum for body: XXH3-64 (seed 0)
// zero-extended to 128 bits (§1.7).
func RequestChecksum(body []byte) Uint128 {
	return Uint128{Lo: xxh3.Hash(body)}
}

// VerifyRequestChecksum reports whether a request's checksum matches its
// body. An unstamped (zero) checksum always matches; a mismatch is denied
// with status 4 (InvalidFormat).
func VerifyRequestChecksum(checksum Uint128, body []byte) bool {
	return checksum.IsZero() || checksum == RequestChecksum(body)
}

// AppendRequestFrame appends a whole request frame (header then body) to
// dst, setting h.Size from the body length. It fails if the frame would
// exceed MaxFrameSize.
func AppendRequestFrame(dst []byte, h *RequestHeader, body []byte) ([]byte, error) {
	if len(body) > MaxFrameSize-HeaderSize {
		return dst, fmt.Errorf("%w: body of %d bytes", ErrBadFrameSize, len(body))
	}
	h.Size = uint32(HeaderSize + len(body))
	return append(h.AppendTo(dst), body...), nil
}

// AppendReplyFrame appends a whole reply frame to dst, setting h.Size. A
// non-zero h.Status requires an empty body.
func AppendReplyFrame(dst []byte, h *ReplyHeader, body []byte) ([]byte, error) {
	if len(body) > MaxFrameSize-HeaderSize {
		return dst, fmt.Errorf("%w: body of %d bytes", ErrBadFrameSize, len(body))
	}
	if h.Status != ErrorCodeOK && len(body) != 0 {
		return dst, fmt.Errorf("%w: status %d with a body", ErrBadHeader, uint32(h.Status))
	}
	h.Size = uint32(HeaderSize + len(body))
	return append(h.AppendTo(dst), body...), nil
}
