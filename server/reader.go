package server

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"

	"github.com/stratabroker/strata/server/metadata"
)

// errMalformed reports a request body that does not decode; the client is
// answered with InvalidCommand (3).
var errMalformed = errors.New("malformed request body")

// reader decodes a request body field by field. The first failure sticks;
// later reads return zero values, so a handler checks err once at the end.
type reader struct {
	buf []byte
	off int
	err error
}

// take returns the next n bytes, or nil after a failure.
func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.buf)-r.off < n {
		r.err = errMalformed
		return nil
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// name reads a WireName (§4.1): u8 length 1..255, UTF-8.
func (r *reader) name() string {
	n := int(r.u8())
	if r.err == nil && n == 0 {
		r.err = errMalformed
	}
	return r.utf8(n)
}

// shortText reads a u8-length UTF-8 string that may be empty.
func (r *reader) shortText() string { return r.utf8(int(r.u8())) }

// utf8 reads n bytes of valid UTF-8.
func (r *reader) utf8(n int) string {
	b := r.take(n)
	if r.err != nil {
		return ""
	}
	if !utf8.Valid(b) {
		r.err = errMalformed
		return ""
	}
	return string(b)
}

// identifier reads an Identifier (§4.2).
func (r *reader) identifier() metadata.Identifier {
	switch kind := r.u8(); kind {
	case 1:
		if r.u8() != 4 {
			r.err = errMalformed
			return metadata.Identifier{}
		}
		return metadata.NumericID(r.u32())
	case 2:
		return metadata.NamedID(r.name())
	default:
		if r.err == nil {
			r.err = errMalformed
		}
		return metadata.Identifier{}
	}
}

// rest returns the unread bytes.
func (r *reader) rest() []byte {
	if r.err != nil {
		return nil
	}
	b := r.buf[r.off:]
	r.off = len(r.buf)
	return b
}

// done fails unless the whole body was read.
func (r *reader) done() error {
	if r.err == nil && r.off != len(r.buf) {
		r.err = errMalformed
	}
	return r.err
}
