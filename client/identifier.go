package client

import (
	"strconv"

	"github.com/stratabroker/strata/net/wire"
)

// Identifier names a stream, topic, user or consumer group either by its
// numeric id or by its name (PROTOCOL.md §4.2). The zero value is numeric
// id 0.
type Identifier struct {
	id   uint32
	name string
}

// ID returns a numeric Identifier.
func ID(id uint32) Identifier { return Identifier{id: id} }

// Named returns a string Identifier; names are matched exactly.
func Named(name string) Identifier { return Identifier{name: name} }

// ParseIdentifier reads s as a numeric id when it is a decimal u32, else as
// a name. The CLI accepts streams and topics this way.
func ParseIdentifier(s string) Identifier {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return ID(uint32(n))
	}
	return Named(s)
}

// IsNumeric reports whether the identifier is a numeric id.
func (i Identifier) IsNumeric() bool { return i.name == "" }

// Numeric returns the numeric id (0 for a named identifier).
func (i Identifier) Numeric() uint32 { return i.id }

// Name returns the name ("" for a numeric identifier).
func (i Identifier) Name() string { return i.name }

// String returns the id in decimal or the name.
func (i Identifier) String() string {
	if i.name == "" {
		return strconv.FormatUint(uint64(i.id), 10)
	}
	return i.name
}

// toWire returns the identifier in net/wire's form; an empty name is
// numeric id 0, as for the zero value.
func (i Identifier) toWire() wire.Identifier {
	if i.name == "" {
		return wire.NumericID(i.id)
	}
	return wire.NamedID(i.name)
}
