package client

// The client's own little-endian helpers for request bodies and records
// (PROTOCOL.md §4). They were written before net/wire had its request and
// record types; codec_cross_test.go checks them against net/wire's codec
// byte for byte.

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/stratabroker/strata/net/wire"
)

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
