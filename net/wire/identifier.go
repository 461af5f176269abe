package wire

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// IdentifierKind is the first byte of an Identifier (§4.2).
type IdentifierKind uint8

// Identifier kinds.
const (
	IdentifierNumeric IdentifierKind = 1
	IdentifierString  IdentifierKind = 2
)

// Identifier names a stream, topic, user or consumer group either by its
// numeric id or by its name (§4.2): [kind u8][len u8][value].
type Identifier struct {
	Kind IdentifierKind
	// Numeric is the id when Kind is IdentifierNumeric.
	Numeric uint32
	// Name is the name when Kind is IdentifierString.
	Name string
}

// NumericID returns a numeric Identifier.
func NumericID(id uint32) Identifier { return Identifier{Kind: IdentifierNumeric, Numeric: id} }

// NamedID returns a string Identifier.
func NamedID(name string) Identifier { return Identifier{Kind: IdentifierString, Name: name} }

// IsNumeric reports whether id is numeric.
func (id Identifier) IsNumeric() bool { return id.Kind == IdentifierNumeric }

// String renders id as its number or its name.
func (id Identifier) String() string {
	if id.Kind == IdentifierNumeric {
		return strconv.FormatUint(uint64(id.Numeric), 10)
	}
	return id.Name
}

// EncodedLen returns the encoded size of id.
func (id Identifier) EncodedLen() int {
	if id.Kind == IdentifierNumeric {
		return 6
	}
	return 2 + len(id.Name)
}

// Validate checks the kind and length rules of §4.2.
func (id Identifier) Validate() error {
	switch id.Kind {
	case IdentifierNumeric:
		return nil
	case IdentifierString:
		if len(id.Name) == 0 || len(id.Name) > MaxNameLength || !utf8.ValidString(id.Name) {
			return fmt.Errorf("%w: string id of %d bytes", ErrBadIdentifier, len(id.Name))
		}
		return nil
	}
	return fmt.Errorf("%w: kind %d", ErrBadIdentifier, id.Kind)
}

// AppendTo appends the encoding of id.
func (id Identifier) AppendTo(dst []byte) ([]byte, error) {
	if err := id.Validate(); err != nil {
		return dst, err
	}
	if id.Kind == IdentifierNumeric {
		return appendU32(append(dst, byte(IdentifierNumeric), 4), id.Numeric), nil
	}
	return append(append(dst, byte(IdentifierString), byte(len(id.Name))), id.Name...), nil
}

// DecodeIdentifier decodes an Identifier at the start of b and returns it
// with the number of bytes consumed.
func DecodeIdentifier(b []byte) (Identifier, int, error) {
	d := newDecoder(b)
	id := d.identifier("identifier")
	return id, d.off, d.err
}

func (d *decoder) identifier(what string) Identifier {
	kind := IdentifierKind(d.u8(what))
	n := int(d.u8(what))
	if d.err != nil {
		return Identifier{}
	}
	switch kind {
	case IdentifierNumeric:
		if n != 4 {
			d.failf(ErrBadIdentifier, "%s numeric length %d", what, n)
			return Identifier{}
		}
		return NumericID(d.u32(what))
	case IdentifierString:
		if n == 0 {
			d.failf(ErrBadIdentifier, "%s empty string", what)
			return Identifier{}
		}
		s := d.take(n, what)
		if d.err == nil && !utf8.Valid(s) {
			d.failf(ErrBadIdentifier, "%s not UTF-8", what)
			return Identifier{}
		}
		return NamedID(string(s))
	}
	d.failf(ErrBadIdentifier, "%s kind %d", what, kind)
	return Identifier{}
}

// appendIDs appends several identifiers in order.
func appendIDs(dst []byte, ids ...Identifier) ([]byte, error) {
	var err error
	for _, id := range ids {
		if dst, err = id.AppendTo(dst); err != nil {
			return dst, err
		}
	}
	return dst, nil
}
