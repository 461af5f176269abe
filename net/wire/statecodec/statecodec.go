// Package statecodec holds the encoding pieces the replicated state
// machines (server/metadata, server/partition) share: the sticky
// little-endian Decoder and its Append twins, the operation Envelope that
// prefixes every operation body, and the checkpoint frame (magic, version,
// body, XXH3-64 trailer).
//
// The pure core imports it, so like net/wire it touches no OS facility
// (vsr/purity_test.go checks).
package statecodec

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
)

// Decoder reads the little-endian fields of an operation body or a
// checkpoint. The first failure sticks: later reads return zero values and
// Err keeps the first error, so callers check once at the end. It never
// panics on short input.
type Decoder struct {
	buf []byte
	off int
	err error
	// malformed is the caller's sentinel, recorded on any encoding error.
	malformed error
}

// NewDecoder returns a Decoder over b that records malformed (the calling
// package's sentinel) when b does not hold what is read.
func NewDecoder(b []byte, malformed error) Decoder {
	return Decoder{buf: b, malformed: malformed}
}

// Err returns the first error recorded, or nil.
func (d *Decoder) Err() error { return d.err }

// Remaining reports how many bytes are left to read.
func (d *Decoder) Remaining() int { return len(d.buf) - d.off }

// Fail records err unless an earlier error is already recorded.
func (d *Decoder) Fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// Take returns the next n bytes (a subslice, not a copy), or nil after
// recording the malformed sentinel when fewer remain.
func (d *Decoder) Take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > d.Remaining() {
		d.Fail(d.malformed)
		return nil
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

// Rest consumes and returns everything left (a subslice), or nil after a
// failure.
func (d *Decoder) Rest() []byte { return d.Take(d.Remaining()) }

// U8 reads one byte.
func (d *Decoder) U8() uint8 {
	b := d.Take(1)
	if b == nil {
		return 0
	}
	return b[0]
}

// U32 reads a little-endian uint32.
func (d *Decoder) U32() uint32 {
	b := d.Take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// U64 reads a little-endian uint64.
func (d *Decoder) U64() uint64 {
	b := d.Take(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// Flag reads a canonical bool: 0 or 1, anything else is malformed.
func (d *Decoder) Flag() bool {
	v := d.U8()
	if v > 1 {
		d.Fail(d.malformed)
	}
	return v == 1
}

// Name reads a WireName-style string: [len u8][UTF-8], 1..255 bytes.
func (d *Decoder) Name() string {
	n := int(d.U8())
	if d.err != nil {
		return ""
	}
	if n == 0 {
		d.Fail(d.malformed)
		return ""
	}
	b := d.Take(n)
	if b == nil {
		return ""
	}
	if !utf8.Valid(b) {
		d.Fail(d.malformed)
		return ""
	}
	return string(b)
}

// Blob reads [len u32][bytes] with len at most max, as a copy (nil when
// empty).
func (d *Decoder) Blob(max int) []byte {
	n := d.U32()
	if d.err != nil {
		return nil
	}
	if uint64(n) > uint64(max) {
		d.Fail(d.malformed)
		return nil
	}
	b := d.Take(int(n))
	if len(b) == 0 {
		return nil
	}
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

// Text reads [len u32][bytes] as a string of at most max bytes (no UTF-8
// requirement: password hashes and token hashes are opaque).
func (d *Decoder) Text(max int) string {
	return string(d.Blob(max))
}

// Count reads a u32 element count and rejects counts that cannot fit in
// the remaining bytes given the minimum encoded size of one element.
func (d *Decoder) Count(minElementSize int) int {
	n := d.U32()
	if d.err != nil {
		return 0
	}
	if minElementSize < 1 {
		minElementSize = 1
	}
	if uint64(n)*uint64(minElementSize) > uint64(d.Remaining()) {
		d.Fail(d.malformed)
		return 0
	}
	return int(n)
}

// End records the malformed sentinel unless every byte has been consumed,
// and returns the first error.
func (d *Decoder) End() error {
	if d.err == nil && d.Remaining() != 0 {
		d.Fail(d.malformed)
	}
	return d.err
}

// AppendU32 appends v little-endian.
func AppendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }

// AppendU64 appends v little-endian.
func AppendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

// AppendFlag appends v as 0 or 1 (read by Flag).
func AppendFlag(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendName appends [len u8][bytes] (read by Name); callers guarantee
// 1..255 bytes.
func AppendName(dst []byte, s string) []byte {
	dst = append(dst, uint8(len(s)))
	return append(dst, s...)
}

// AppendBlob appends [len u32][bytes] (read by Blob).
func AppendBlob(dst []byte, b []byte) []byte {
	dst = AppendU32(dst, uint32(len(b)))
	return append(dst, b...)
}

// AppendText appends [len u32][bytes] (read by Text).
func AppendText(dst []byte, s string) []byte {
	dst = AppendU32(dst, uint32(len(s)))
	return append(dst, s...)
}

// Envelope is the prefix of every operation body: who asked, from which
// client session, with which request number. UserID drives the permission
// checks inside Apply.
type Envelope struct {
	UserID   uint32
	ClientLo uint64
	ClientHi uint64
	Request  uint64
}

// EnvelopeSize is the encoded size of an Envelope.
const EnvelopeSize = 4 + 8 + 8 + 8

// AppendTo appends the EnvelopeSize-byte encoding of e.
func (e Envelope) AppendTo(dst []byte) []byte {
	dst = AppendU32(dst, e.UserID)
	dst = AppendU64(dst, e.ClientLo)
	dst = AppendU64(dst, e.ClientHi)
	return AppendU64(dst, e.Request)
}

// DecodeEnvelope reads an Envelope from d.
func DecodeEnvelope(d *Decoder) Envelope {
	return Envelope{UserID: d.U32(), ClientLo: d.U64(), ClientHi: d.U64(), Request: d.U64()}
}

// Checkpoint frame: [magic u32][version u16] body [XXH3-64 of all before].
const (
	CheckpointHeaderSize  = 4 + 2
	CheckpointTrailerSize = 8
)

// AppendCheckpointHeader starts a checkpoint: magic, then version.
func AppendCheckpointHeader(dst []byte, magic uint32, version uint16) []byte {
	return binary.LittleEndian.AppendUint16(AppendU32(dst, magic), version)
}

// SealCheckpoint ends a checkpoint begun by AppendCheckpointHeader: it
// appends the XXH3-64 of everything in out.
func SealCheckpoint(out []byte) []byte { return AppendU64(out, xxh3.Hash(out)) }

// OpenCheckpoint checks the frame of data (size at most sizeMax, checksum,
// magic) and returns its version and the body between header and trailer.
// Errors wrap corrupt, the calling package's sentinel; the version is the
// caller's to check.
func OpenCheckpoint(data []byte, magic uint32, sizeMax uint64, corrupt error) (version uint16, body []byte, err error) {
	if len(data) < CheckpointHeaderSize+CheckpointTrailerSize || uint64(len(data)) > sizeMax {
		return 0, nil, fmt.Errorf("%w: size %d", corrupt, len(data))
	}
	framed := data[:len(data)-CheckpointTrailerSize]
	if got, want := xxh3.Hash(framed), binary.LittleEndian.Uint64(data[len(framed):]); got != want {
		return 0, nil, fmt.Errorf("%w: checksum %x, want %x", corrupt, got, want)
	}
	if m := binary.LittleEndian.Uint32(framed); m != magic {
		return 0, nil, fmt.Errorf("%w: magic %x", corrupt, m)
	}
	return binary.LittleEndian.Uint16(framed[4:]), framed[CheckpointHeaderSize:], nil
}
