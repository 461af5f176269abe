package client

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/stratabroker/strata/net/wire"
)

// Kind is the kind byte of a TLV item (PROTOCOL.md §4.7), used by message
// user headers and options blocks.
type Kind uint8

// TLV kinds of §4.7.
const (
	KindRaw     Kind = 1
	KindString  Kind = 2
	KindBool    Kind = 3
	KindInt8    Kind = 4
	KindInt16   Kind = 5
	KindInt32   Kind = 6
	KindInt64   Kind = 7
	KindInt128  Kind = 8
	KindUint8   Kind = 9
	KindUint16  Kind = 10
	KindUint32  Kind = 11
	KindUint64  Kind = 12
	KindUint128 Kind = 13
	KindFloat32 Kind = 14
	KindFloat64 Kind = 15
)

// tlvItemLenMax is the longest TLV item (§4.7).
const tlvItemLenMax = 255

// kindSizes gives the fixed value size of each numeric kind (0 = 1..255).
var kindSizes = [...]int{KindBool: 1, KindInt8: 1, KindInt16: 2, KindInt32: 4, KindInt64: 8,
	KindInt128: 16, KindUint8: 1, KindUint16: 2, KindUint32: 4, KindUint64: 8, KindUint128: 16,
	KindFloat32: 4, KindFloat64: 8}

// kindNames names the kinds for display and JSON.
var kindNames = [...]string{"", "raw", "string", "bool", "int8", "int16", "int32", "int64", "int128",
	"uint8", "uint16", "uint32", "uint64", "uint128", "float32", "float64"}

// String returns the kind's name ("string", "uint64"...).
func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one typed TLV item.
type Value struct {
	Kind Kind
	Data []byte
}

// StringValue returns a string-kind value.
func StringValue(s string) Value { return Value{Kind: KindString, Data: []byte(s)} }

// RawValue returns a raw-kind value.
func RawValue(b []byte) Value { return Value{Kind: KindRaw, Data: b} }

// Uint64Value returns a uint64-kind value.
func Uint64Value(v uint64) Value {
	return Value{Kind: KindUint64, Data: binary.LittleEndian.AppendUint64(nil, v)}
}

// Uint32Value returns a uint32-kind value.
func Uint32Value(v uint32) Value {
	return Value{Kind: KindUint32, Data: binary.LittleEndian.AppendUint32(nil, v)}
}

// BoolValue returns a bool-kind value.
func BoolValue(v bool) Value {
	if v {
		return Value{Kind: KindBool, Data: []byte{1}}
	}
	return Value{Kind: KindBool, Data: []byte{0}}
}

// validate checks the item against §4.7.
func (v Value) validate() error {
	if v.Kind == 0 || v.Kind > KindFloat64 {
		return fmt.Errorf("%w: TLV kind %d", ErrInvalidArgument, v.Kind)
	}
	if len(v.Data) == 0 || len(v.Data) > tlvItemLenMax {
		return fmt.Errorf("%w: TLV %s value of %d bytes (1..%d)", ErrInvalidArgument, v.Kind, len(v.Data), tlvItemLenMax)
	}
	if n := kindSizes[v.Kind]; n != 0 && len(v.Data) != n {
		return fmt.Errorf("%w: TLV %s value of %d bytes, want %d", ErrInvalidArgument, v.Kind, len(v.Data), n)
	}
	return nil
}

// String renders the value for people: strings as is, numbers in decimal,
// raw bytes in base64.
func (v Value) String() string {
	d := v.Data
	if n := kindSizes[min(int(v.Kind), len(kindSizes)-1)]; n != 0 && len(d) != n {
		return base64.StdEncoding.EncodeToString(d)
	}
	switch v.Kind {
	case KindString:
		if utf8.Valid(d) {
			return string(d)
		}
	case KindBool:
		return strconv.FormatBool(d[0] != 0)
	case KindInt8:
		return strconv.FormatInt(int64(int8(d[0])), 10)
	case KindInt16:
		return strconv.FormatInt(int64(int16(binary.LittleEndian.Uint16(d))), 10)
	case KindInt32:
		return strconv.FormatInt(int64(int32(binary.LittleEndian.Uint32(d))), 10)
	case KindInt64:
		return strconv.FormatInt(int64(binary.LittleEndian.Uint64(d)), 10)
	case KindUint8:
		return strconv.FormatUint(uint64(d[0]), 10)
	case KindUint16:
		return strconv.FormatUint(uint64(binary.LittleEndian.Uint16(d)), 10)
	case KindUint32:
		return strconv.FormatUint(uint64(binary.LittleEndian.Uint32(d)), 10)
	case KindUint64:
		return strconv.FormatUint(binary.LittleEndian.Uint64(d), 10)
	case KindFloat32:
		return strconv.FormatFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(d))), 'g', -1, 32)
	case KindFloat64:
		return strconv.FormatFloat(math.Float64frombits(binary.LittleEndian.Uint64(d)), 'g', -1, 64)
	}
	return base64.StdEncoding.EncodeToString(d)
}

// Header is one user header of a message: a key item and a value item.
// Keys are usually string-kind.
type Header struct {
	Key   Value
	Value Value
}

// StringHeader returns a header with string key and string value.
func StringHeader(key, value string) Header {
	return Header{Key: StringValue(key), Value: StringValue(value)}
}

// AppendHeaders appends the TLV block of headers to dst (§4.7).
func AppendHeaders(dst []byte, headers []Header) ([]byte, error) {
	for _, h := range headers {
		if err := h.Key.validate(); err != nil {
			return nil, err
		}
		if err := h.Value.validate(); err != nil {
			return nil, err
		}
		dst = appendTLV(dst, h.Key)
		dst = appendTLV(dst, h.Value)
	}
	return dst, nil
}

func appendTLV(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.Kind))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v.Data)))
	return append(dst, v.Data...)
}

// ParseHeaders decodes a TLV block into headers. The Data slices alias
// block.
func ParseHeaders(block []byte) ([]Header, error) {
	var out []Header
	pos := 0
	for pos < len(block) {
		var h Header
		var err error
		if h.Key, pos, err = parseTLV(block, pos); err != nil {
			return nil, err
		}
		if pos >= len(block) {
			return nil, fmt.Errorf("%w: TLV block has an odd number of items", ErrProtocol)
		}
		if h.Value, pos, err = parseTLV(block, pos); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func parseTLV(b []byte, pos int) (Value, int, error) {
	if len(b)-pos < 5 {
		return Value{}, 0, fmt.Errorf("%w: TLV item at byte %d truncated", ErrProtocol, pos)
	}
	kind := Kind(b[pos])
	n := binary.LittleEndian.Uint32(b[pos+1:])
	if kind == 0 || kind > KindFloat64 || n == 0 || n > tlvItemLenMax || uint64(n) > uint64(len(b)-pos-5) {
		return Value{}, 0, fmt.Errorf("%w: invalid TLV item at byte %d (kind %d, length %d)", ErrProtocol, pos, kind, n)
	}
	v := Value{Kind: kind, Data: b[pos+5 : pos+5+int(n)]}
	return v, pos + 5 + int(n), nil
}

// Topic option keys (PROTOCOL.md §4.8) and Strata's durability keys
// (DESIGN.md decision 5).
const (
	OptionCompression              = "compression_algorithm"
	OptionMessageExpiry            = "message_expiry"
	OptionMaxTopicSize             = "max_topic_size"
	OptionSegmentSize              = "segment_size"
	OptionEnforceFsync             = "enforce_fsync"
	OptionMessagesRequiredToSave   = "messages_required_to_save"
	OptionSizeRequiredToSave       = "size_of_messages_required_to_save"
	OptionPreallocateSegments      = "preallocate_segments"
	OptionDurability               = "durability"
	OptionConsumerOffsetDurability = "consumer_offset_durability"
)

// Durability values of the durability options.
const (
	DurabilityReplicated = "replicated"
	DurabilityPersisted  = "persisted"
)

// OptionEntry is one key/value pair of an options block.
type OptionEntry struct {
	Key   string
	Value Value
}

// Options is an options block (§4.8): string keys with typed values.
type Options []OptionEntry

// With returns o with key set to v (replacing an earlier entry of key).
func (o Options) With(key string, v Value) Options {
	for i := range o {
		if o[i].Key == key {
			o[i].Value = v
			return o
		}
	}
	return append(o, OptionEntry{Key: key, Value: v})
}

// Get returns the value of key.
func (o Options) Get(key string) (Value, bool) {
	for _, e := range o {
		if e.Key == key {
			return e.Value, true
		}
	}
	return Value{}, false
}

// toWire checks every value (§4.7) and returns o in net/wire's form,
// which encodes it as a request's trailing options block.
func (o Options) toWire() (wire.Options, error) {
	if len(o) == 0 {
		return nil, nil
	}
	out := make(wire.Options, len(o))
	for i, e := range o {
		if err := e.Value.validate(); err != nil {
			return nil, fmt.Errorf("option %q: %w", e.Key, err)
		}
		out[i] = wire.Option{Key: e.Key, Value: wire.TLVItem{Kind: wire.TLVKind(e.Value.Kind), Data: e.Value.Data}}
	}
	return out, nil
}

// MarshalJSON renders options as a JSON object of key → value text.
func (o Options) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, len(o))
	for _, e := range o {
		m[e.Key] = e.Value.String()
	}
	return json.Marshal(m)
}
