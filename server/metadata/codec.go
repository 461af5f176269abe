package metadata

import (
	"encoding/binary"
	"unicode/utf8"
)

// decoder reads the little-endian fields of an operation body or a
// checkpoint. The first failure sticks: later reads return zero values and
// err keeps the first error, so callers check once at the end.
type decoder struct {
	buf []byte
	off int
	err error
}

// remaining reports how many bytes are left to read.
func (d *decoder) remaining() int { return len(d.buf) - d.off }

// fail records err unless an earlier error is already recorded.
func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// take returns the next n bytes, or nil after recording ErrMalformed when
// fewer remain.
func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > d.remaining() {
		d.fail(ErrMalformed)
		return nil
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

func (d *decoder) u8() uint8 {
	b := d.take(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (d *decoder) u32() uint32 {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *decoder) u64() uint64 {
	b := d.take(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// flag reads a canonical bool: 0 or 1, anything else is malformed.
func (d *decoder) flag() bool {
	v := d.u8()
	if v > 1 {
		d.fail(ErrMalformed)
	}
	return v == 1
}

// name reads a WireName-style string: [len u8][UTF-8], 1..255 bytes.
func (d *decoder) name() string {
	n := int(d.u8())
	if d.err != nil {
		return ""
	}
	if n == 0 {
		d.fail(ErrMalformed)
		return ""
	}
	b := d.take(n)
	if b == nil {
		return ""
	}
	if !utf8.Valid(b) {
		d.fail(ErrMalformed)
		return ""
	}
	return string(b)
}

// blob reads [len u32][bytes] with len at most max.
func (d *decoder) blob(max int) []byte {
	n := d.u32()
	if d.err != nil {
		return nil
	}
	if uint64(n) > uint64(max) {
		d.fail(ErrMalformed)
		return nil
	}
	b := d.take(int(n))
	if b == nil || len(b) == 0 {
		return nil
	}
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

// text reads [len u32][bytes] as a string of at most max bytes (no UTF-8
// requirement: password hashes and token hashes are opaque).
func (d *decoder) text(max int) string {
	return string(d.blob(max))
}

// count reads a u32 element count and rejects counts that cannot fit in
// the remaining bytes given the minimum encoded size of one element.
func (d *decoder) count(minElementSize int) int {
	n := d.u32()
	if d.err != nil {
		return 0
	}
	if minElementSize < 1 {
		minElementSize = 1
	}
	if uint64(n)*uint64(minElementSize) > uint64(d.remaining()) {
		d.fail(ErrMalformed)
		return 0
	}
	return int(n)
}

// end fails unless every byte has been consumed.
func (d *decoder) end() error {
	if d.err == nil && d.remaining() != 0 {
		d.fail(ErrMalformed)
	}
	return d.err
}

func appendU8(dst []byte, v uint8) []byte { return append(dst, v) }

func appendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }

func appendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

func appendFlag(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// appendName writes [len u8][bytes]; callers guarantee 1..255 bytes.
func appendName(dst []byte, s string) []byte {
	dst = append(dst, uint8(len(s)))
	return append(dst, s...)
}

// appendBlob writes [len u32][bytes].
func appendBlob(dst []byte, b []byte) []byte {
	dst = appendU32(dst, uint32(len(b)))
	return append(dst, b...)
}

func appendText(dst []byte, s string) []byte {
	dst = appendU32(dst, uint32(len(s)))
	return append(dst, s...)
}
