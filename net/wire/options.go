package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Limits of an options block (§4.8).
const (
	// OptionsPairsMax is the most key/value pairs in one block.
	OptionsPairsMax = 1024
	// OptionsBlockBytesMax is the largest block; a larger one is status
	// 4043 (OptionsBlockTooLarge).
	OptionsBlockBytesMax = 100_000
)

// Option is one key/value pair of an options block. Keys are TLV strings.
type Option struct {
	Key   string
	Value TLVItem
}

// Options is a decoded options block in wire order.
type Options []Option

// StringOption, Uint64Option, Uint32Option, Uint8Option and BoolOption
// build an Option with a value of the matching TLV kind.
func StringOption(key, value string) Option {
	return Option{Key: key, Value: TLVItem{Kind: TLVString, Data: []byte(value)}}
}

// Uint64Option builds a uint64 option.
func Uint64Option(key string, value uint64) Option {
	return Option{Key: key, Value: TLVItem{Kind: TLVUint64, Data: binary.LittleEndian.AppendUint64(nil, value)}}
}

// Uint32Option builds a uint32 option.
func Uint32Option(key string, value uint32) Option {
	return Option{Key: key, Value: TLVItem{Kind: TLVUint32, Data: binary.LittleEndian.AppendUint32(nil, value)}}
}

// Uint8Option builds a uint8 option.
func Uint8Option(key string, value uint8) Option {
	return Option{Key: key, Value: TLVItem{Kind: TLVUint8, Data: []byte{value}}}
}

// BoolOption builds a bool option.
func BoolOption(key string, value bool) Option {
	v := byte(0)
	if value {
		v = 1
	}
	return Option{Key: key, Value: TLVItem{Kind: TLVBool, Data: []byte{v}}}
}

// Get returns the value for key.
func (o Options) Get(key string) (TLVItem, bool) {
	for i := range o {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return TLVItem{}, false
}

// Sorted returns a copy of o with keys in byte-wise ascending order, the
// order server response blocks use.
func (o Options) Sorted() Options {
	s := slices.Clone(o)
	slices.SortFunc(s, func(a, b Option) int { return bytes.Compare([]byte(a.Key), []byte(b.Key)) })
	return s
}

// Equal reports whether o and p hold the same pairs in the same order.
func (o Options) Equal(p Options) bool {
	return slices.EqualFunc(o, p, func(a, b Option) bool {
		return a.Key == b.Key && a.Value.Kind == b.Value.Kind && bytes.Equal(a.Value.Data, b.Value.Data)
	})
}

// AppendTo appends o as a trailing block (request form: no length prefix).
// It enforces the §4.8 rules, so what it writes ParseOptions accepts.
func (o Options) AppendTo(dst []byte) ([]byte, error) {
	if len(o) > OptionsPairsMax {
		return dst, fmt.Errorf("%w: %d pairs", ErrBadOptions, len(o))
	}
	start := len(dst)
	var err error
	for i := range o {
		for j := 0; j < i; j++ {
			if o[j].Key == o[i].Key {
				return dst[:start], fmt.Errorf("%w: duplicate key %q", ErrBadOptions, o[i].Key)
			}
		}
		if !utf8.ValidString(o[i].Key) {
			return dst[:start], fmt.Errorf("%w: key not UTF-8", ErrBadOptions)
		}
		if dst, err = AppendTLVItem(dst, TLVString, []byte(o[i].Key)); err != nil {
			return dst[:start], err
		}
		if dst, err = AppendTLVItem(dst, o[i].Value.Kind, o[i].Value.Data); err != nil {
			return dst[:start], err
		}
	}
	if len(dst)-start > OptionsBlockBytesMax {
		return dst[:start], fmt.Errorf("%w: %d bytes", ErrOptionsBlockTooLarge, len(dst)-start)
	}
	return dst, nil
}

// AppendBlock appends o in response form: [block_len u32][block].
func (o Options) AppendBlock(dst []byte) ([]byte, error) {
	at := len(dst)
	dst = appendU32(dst, 0)
	dst, err := o.AppendTo(dst)
	if err != nil {
		return dst[:at], err
	}
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst, nil
}

// ParseOptions decodes and validates an options block (§4.8): a valid TLV
// block, every key a UTF-8 string item, no duplicate keys, at most 1024
// pairs, at most 100 000 bytes. A block over the byte limit fails with
// ErrOptionsBlockTooLarge (4043); other violations with ErrBadTLV or
// ErrBadOptions (status 3). Values alias block. An empty block gives nil.
func ParseOptions(block []byte) (Options, error) {
	if len(block) > OptionsBlockBytesMax {
		return nil, fmt.Errorf("%w: %d bytes", ErrOptionsBlockTooLarge, len(block))
	}
	var out Options
	it := NewTLVIterator(block)
	for key, value, ok := it.Next(); ok; key, value, ok = it.Next() {
		if key.Kind != TLVString || !utf8.Valid(key.Data) {
			return nil, fmt.Errorf("%w: key of kind %d", ErrBadOptions, key.Kind)
		}
		if len(out) == OptionsPairsMax {
			return nil, fmt.Errorf("%w: more than %d pairs", ErrBadOptions, OptionsPairsMax)
		}
		for i := range out {
			if out[i].Key == string(key.Data) {
				return nil, fmt.Errorf("%w: duplicate key %q", ErrBadOptions, key.Data)
			}
		}
		out = append(out, Option{Key: string(key.Data), Value: value})
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func (d *decoder) optionsBlock(what string) Options {
	block := d.bytes32(what)
	if d.err != nil {
		return nil
	}
	o, err := ParseOptions(block)
	if err != nil {
		d.failf(err, "%s", what)
	}
	return o
}

// trailingOptions parses the rest of a request body as an options block.
func (d *decoder) trailingOptions(what string) Options {
	block := d.rest()
	if d.err != nil {
		return nil
	}
	o, err := ParseOptions(block)
	if err != nil {
		d.failf(err, "%s", what)
	}
	return o
}

// RejectOptions returns ErrUnsupportedOptionKey (status 4041) naming the
// first key when o is not empty: streams and users accept no option keys
// (§4.8).
func RejectOptions(o Options) error {
	if len(o) == 0 {
		return nil
	}
	return fmt.Errorf("%w: key %q", ErrUnsupportedOptionKey, o[0].Key)
}
