package client

// This file holds minimal private versions of net/wire pieces that did not
// exist yet when the client was written (header layouts of PROTOCOL.md
// §1.2-1.5 and the result section of §4.9). Remove it once net/wire
// exports equivalents.

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/net/wire"
)

// Header layout constants (§1.2-1.5).
const (
	headerSize       = 256
	frameSizeMax     = 64 << 20
	sizeOffset       = 48
	commandOffset    = 60
	commandRequest   = 5
	commandReply     = 8
	commandEviction  = 13
	protocolVersion  = wire.ProtocolVersion
	reqClientAt      = 128
	reqChecksumAt    = 144
	reqRequestAt     = 168
	reqOperationAt   = 176
	reqSessionAt     = 184
	reqCodeAt        = 196
	replyRequestAt   = 200
	replyOperationAt = 208
	replyStatusAt    = 216
	evictVersionAt   = 144
	evictVersionMin  = 148
	evictReasonAt    = 255
)

// requestHeader is the part of a Request header (§1.3) a client sets.
type requestHeader struct {
	size               uint32
	clientLo, clientHi uint64
	checksum           uint64
	request            uint64
	operation          wire.Operation
	session            uint64
	code               uint32
}

// putRequestHeader writes h into dst[0:256]; dst must be zeroed.
func putRequestHeader(dst []byte, h requestHeader) {
	binary.LittleEndian.PutUint32(dst[sizeOffset:], h.size)
	dst[commandOffset] = commandRequest
	binary.LittleEndian.PutUint64(dst[reqClientAt:], h.clientLo)
	binary.LittleEndian.PutUint64(dst[reqClientAt+8:], h.clientHi)
	binary.LittleEndian.PutUint64(dst[reqChecksumAt:], h.checksum)
	binary.LittleEndian.PutUint64(dst[reqRequestAt:], h.request)
	dst[reqOperationAt] = byte(h.operation)
	binary.LittleEndian.PutUint64(dst[reqSessionAt:], h.session)
	binary.LittleEndian.PutUint32(dst[reqCodeAt:], h.code)
}

// replyHeader is the part of a Reply header (§1.4) a client reads.
type replyHeader struct {
	request   uint64
	operation wire.Operation
	status    uint32
}

// parseReplyHeader reads a Reply header; frame holds at least 256 bytes.
func parseReplyHeader(frame []byte) replyHeader {
	return replyHeader{
		request:   binary.LittleEndian.Uint64(frame[replyRequestAt:]),
		operation: wire.Operation(frame[replyOperationAt]),
		status:    binary.LittleEndian.Uint32(frame[replyStatusAt:]),
	}
}

// eviction is the part of an Eviction header (§1.5) a client reads.
type eviction struct {
	reason                 wire.EvictionReason
	versionMax, versionMin uint32
}

// parseEviction reads an Eviction header; frame holds at least 256 bytes.
func parseEviction(frame []byte) eviction {
	return eviction{
		reason:     wire.EvictionReason(frame[evictReasonAt]),
		versionMax: binary.LittleEndian.Uint32(frame[evictVersionAt:]),
		versionMin: binary.LittleEndian.Uint32(frame[evictVersionMin:]),
	}
}

// bodyChecksum is the request_checksum of a body: XXH3-64, seed 0 (§1.7).
func bodyChecksum(body []byte) uint64 { return xxh3.Hash(body) }

// splitResult strips a result section (§4.9): it returns the first
// non-zero result code (or OK) and the payload after the section.
func splitResult(body []byte) (wire.ErrorCode, []byte, error) {
	if len(body) < 4 {
		return 0, nil, fmt.Errorf("result section of %d bytes: %w", len(body), wire.ErrTruncated)
	}
	count := binary.LittleEndian.Uint32(body)
	if uint64(count)*8 > uint64(len(body)-4) {
		return 0, nil, fmt.Errorf("result section claims %d entries in %d bytes: %w", count, len(body), wire.ErrBadResult)
	}
	code := wire.ErrorCodeOK
	pos := 4
	for i := uint32(0); i < count; i++ {
		result := wire.ErrorCode(binary.LittleEndian.Uint32(body[pos+4:]))
		if code == wire.ErrorCodeOK {
			code = result
		}
		pos += 8
	}
	return code, body[pos:], nil
}

// Identifier and name encodings (§4.1, §4.2), appended to dst.

// appendName appends a WireName: [len u8][bytes], len 1..255.
func appendName(dst []byte, what, name string) ([]byte, error) {
	if len(name) == 0 || len(name) > nameLenMax {
		return nil, fmt.Errorf("%w: %s must be 1..%d bytes, got %d", ErrInvalidArgument, what, nameLenMax, len(name))
	}
	dst = append(dst, byte(len(name)))
	return append(dst, name...), nil
}

// appendShortBytes appends [len u8][bytes] allowing length 0 (passwords,
// tokens).
func appendShortBytes(dst []byte, what, s string) ([]byte, error) {
	if len(s) > nameLenMax {
		return nil, fmt.Errorf("%w: %s longer than %d bytes", ErrInvalidArgument, what, nameLenMax)
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...), nil
}

func appendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }
func appendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

// nameLenMax is the longest WireName (§4.1).
const nameLenMax = 255

// Identifier kinds (§4.2).
const (
	identifierNumeric = 1
	identifierString  = 2
)

// appendIdentifier appends an Identifier.
func appendIdentifier(dst []byte, id Identifier) ([]byte, error) {
	if id.name == "" {
		dst = append(dst, identifierNumeric, 4)
		return appendU32(dst, id.id), nil
	}
	if len(id.name) > nameLenMax {
		return nil, fmt.Errorf("%w: identifier %q longer than %d bytes", ErrInvalidArgument, id.name, nameLenMax)
	}
	dst = append(dst, identifierString, byte(len(id.name)))
	return append(dst, id.name...), nil
}

// reader decodes little-endian records with a sticky error; it never
// panics on short input.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%s at byte %d of %d: %w", what, r.pos, len(r.b), wire.ErrTruncated)
	}
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.pos < n {
		r.fail(what)
		return nil
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s
}

func (r *reader) u8(what string) uint8 {
	if s := r.take(1, what); s != nil {
		return s[0]
	}
	return 0
}

func (r *reader) u16(what string) uint16 {
	if s := r.take(2, what); s != nil {
		return binary.LittleEndian.Uint16(s)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if s := r.take(4, what); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if s := r.take(8, what); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

func (r *reader) f32(what string) float32 { return math.Float32frombits(r.u32(what)) }

// name reads [len u8][bytes] as a string.
func (r *reader) name(what string) string {
	n := int(r.u8(what))
	return string(r.take(n, what))
}

// text32 reads [len u32][bytes] as a string.
func (r *reader) text32(what string) string {
	n := r.u32(what)
	if uint64(n) > uint64(len(r.b)) {
		r.fail(what)
		return ""
	}
	return string(r.take(int(n), what))
}

// block32 reads [len u32][bytes] and returns a copy.
func (r *reader) block32(what string) []byte {
	n := r.u32(what)
	if uint64(n) > uint64(len(r.b)) {
		r.fail(what)
		return nil
	}
	s := r.take(int(n), what)
	if len(s) == 0 {
		return nil
	}
	return append([]byte(nil), s...)
}

func (r *reader) done() bool { return r.err != nil || r.pos >= len(r.b) }
