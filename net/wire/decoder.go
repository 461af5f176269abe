package wire

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// decoder walks a body left to right. The first failure sticks: later reads
// return zero values and err keeps the first error, so decoders read every
// field and check once at the end. It never panics on short input.
type decoder struct {
	b   []byte
	off int
	err error
}

func newDecoder(b []byte) decoder { return decoder{b: b} }

func (d *decoder) failf(sentinel error, format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
	}
}

// take returns the next n bytes (a subslice, not a copy) or nil on failure.
func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b)-d.off < n {
		d.failf(ErrTruncated, "%s needs %d bytes at offset %d, %d left", what, n, d.off, len(d.b)-d.off)
		return nil
	}
	s := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return s
}

func (d *decoder) u8(what string) uint8 {
	if s := d.take(1, what); s != nil {
		return s[0]
	}
	return 0
}

func (d *decoder) u16(what string) uint16 {
	if s := d.take(2, what); s != nil {
		return binary.LittleEndian.Uint16(s)
	}
	return 0
}

func (d *decoder) u32(what string) uint32 {
	if s := d.take(4, what); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (d *decoder) u64(what string) uint64 {
	if s := d.take(8, what); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

func (d *decoder) boolean(what string) bool { return d.u8(what) != 0 }

// remaining returns how many bytes are left.
func (d *decoder) remaining() int { return len(d.b) - d.off }

// rest consumes and returns everything left (a subslice).
func (d *decoder) rest() []byte {
	if d.err != nil {
		return nil
	}
	s := d.b[d.off:len(d.b):len(d.b)]
	d.off = len(d.b)
	return s
}

// name reads a WireName: [len u8 1..255][UTF-8].
func (d *decoder) name(what string) string {
	n := int(d.u8(what))
	if d.err == nil && n == 0 {
		d.failf(ErrInvalidName, "%s is empty", what)
		return ""
	}
	s := d.take(n, what)
	if d.err == nil && !utf8.Valid(s) {
		d.failf(ErrInvalidName, "%s is not UTF-8", what)
		return ""
	}
	return string(s)
}

// text8 reads [len u8 0..255][UTF-8] (passwords, tokens: may be empty).
func (d *decoder) text8(what string) string {
	n := int(d.u8(what))
	s := d.take(n, what)
	if d.err == nil && !utf8.Valid(s) {
		d.failf(ErrInvalidName, "%s is not UTF-8", what)
		return ""
	}
	return string(s)
}

// text32 reads [len u32][UTF-8].
func (d *decoder) text32(what string) string {
	n := d.u32(what)
	if d.err == nil && uint64(n) > uint64(d.remaining()) {
		d.failf(ErrTruncated, "%s of %d bytes, %d left", what, n, d.remaining())
		return ""
	}
	s := d.take(int(n), what)
	if d.err == nil && !utf8.Valid(s) {
		d.failf(ErrInvalidName, "%s is not UTF-8", what)
		return ""
	}
	return string(s)
}

// bytes32 reads [len u32][bytes] as a subslice.
func (d *decoder) bytes32(what string) []byte {
	n := d.u32(what)
	if d.err == nil && uint64(n) > uint64(d.remaining()) {
		d.failf(ErrTruncated, "%s of %d bytes, %d left", what, n, d.remaining())
		return nil
	}
	return d.take(int(n), what)
}

// end fails with ErrTrailingBytes if input is left, and returns the error.
func (d *decoder) end(what string) error {
	if d.err == nil && d.off != len(d.b) {
		d.failf(ErrTrailingBytes, "%d bytes after %s", len(d.b)-d.off, what)
	}
	return d.err
}

// Little-endian append helpers.

func appendU16(dst []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(dst, v) }
func appendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }
func appendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// MaxNameLength is the longest WireName (§4.1).
const MaxNameLength = 255

// ValidateName checks a WireName: 1..255 bytes of valid UTF-8.
func ValidateName(name string) error {
	if len(name) == 0 || len(name) > MaxNameLength {
		return fmt.Errorf("%w: length %d", ErrInvalidName, len(name))
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: not UTF-8", ErrInvalidName)
	}
	return nil
}

// AppendName appends the WireName encoding [len u8][bytes] of name.
func AppendName(dst []byte, name string) ([]byte, error) {
	if err := ValidateName(name); err != nil {
		return dst, err
	}
	return append(append(dst, byte(len(name))), name...), nil
}

// DecodeName decodes a WireName at the start of b and returns it with the
// number of bytes consumed.
func DecodeName(b []byte) (string, int, error) {
	d := newDecoder(b)
	s := d.name("name")
	return s, d.off, d.err
}

// appendText8 appends [len u8 0..255][bytes].
func appendText8(dst []byte, s string, what string) ([]byte, error) {
	if len(s) > MaxNameLength {
		return dst, fmt.Errorf("%w: %s of %d bytes", ErrInvalidName, what, len(s))
	}
	return append(append(dst, byte(len(s))), s...), nil
}

// appendText32 appends [len u32][bytes].
func appendText32(dst []byte, s string) []byte {
	return append(appendU32(dst, uint32(len(s))), s...)
}
