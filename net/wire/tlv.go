package wire

import (
	"encoding/binary"
	"fmt"
)

// TLVKind is the kind byte of a TLV item (§4.7).
type TLVKind uint8

// TLV kinds of §4.7.
const (
	TLVRaw     TLVKind = 1
	TLVString  TLVKind = 2
	TLVBool    TLVKind = 3
	TLVInt8    TLVKind = 4
	TLVInt16   TLVKind = 5
	TLVInt32   TLVKind = 6
	TLVInt64   TLVKind = 7
	TLVInt128  TLVKind = 8
	TLVUint8   TLVKind = 9
	TLVUint16  TLVKind = 10
	TLVUint32  TLVKind = 11
	TLVUint64  TLVKind = 12
	TLVUint128 TLVKind = 13
	TLVFloat32 TLVKind = 14
	TLVFloat64 TLVKind = 15
	tlvKindMax         = TLVFloat64
)

// Limits of §4.7.
const (
	// TLVItemHeaderSize is the kind byte plus the u32 length.
	TLVItemHeaderSize = 5
	// TLVValueLengthMax is the longest item data.
	TLVValueLengthMax = 255
)

// FixedSize returns the exact value size a kind requires (1 for bool and
// the 8-bit kinds, 16 for the 128-bit kinds...), or 0 for raw and string,
// which take 1..255 bytes.
func (k TLVKind) FixedSize() int {
	switch k {
	case TLVBool, TLVInt8, TLVUint8:
		return 1
	case TLVInt16, TLVUint16:
		return 2
	case TLVInt32, TLVUint32, TLVFloat32:
		return 4
	case TLVInt64, TLVUint64, TLVFloat64:
		return 8
	case TLVInt128, TLVUint128:
		return 16
	}
	return 0
}

// Valid reports whether k is 1..15.
func (k TLVKind) Valid() bool { return k >= TLVRaw && k <= tlvKindMax }

// TLVItem is one key or value of a TLV block. Data aliases the decoded
// input.
type TLVItem struct {
	Kind TLVKind
	Data []byte
}

// AppendTLVItem appends [kind u8][len u32][data]. It checks kind 1..15
// and 1 ≤ len ≤ 255.
func AppendTLVItem(dst []byte, kind TLVKind, data []byte) ([]byte, error) {
	if !kind.Valid() || len(data) == 0 || len(data) > TLVValueLengthMax {
		return dst, fmt.Errorf("%w: item kind %d length %d", ErrBadTLV, kind, len(data))
	}
	return append(appendU32(append(dst, byte(kind)), uint32(len(data))), data...), nil
}

// TLVIterator walks the key/value pairs of a TLV block. Use:
//
//	it := NewTLVIterator(block)
//	for key, value, ok := it.Next(); ok; key, value, ok = it.Next() { ... }
//	if err := it.Err(); err != nil { ... }
type TLVIterator struct {
	block []byte
	off   int
	err   error
}

// NewTLVIterator starts an iteration over block.
func NewTLVIterator(block []byte) TLVIterator { return TLVIterator{block: block} }

// Next returns the next pair; ok is false at the end of the block or on
// the first malformed item (then Err reports it).
func (it *TLVIterator) Next() (key, value TLVItem, ok bool) {
	if it.err != nil || it.off == len(it.block) {
		return TLVItem{}, TLVItem{}, false
	}
	if key, it.err = it.item(); it.err != nil {
		return TLVItem{}, TLVItem{}, false
	}
	if it.off == len(it.block) {
		it.err = fmt.Errorf("%w: odd number of items", ErrBadTLV)
		return TLVItem{}, TLVItem{}, false
	}
	if value, it.err = it.item(); it.err != nil {
		return TLVItem{}, TLVItem{}, false
	}
	return key, value, true
}

func (it *TLVIterator) item() (TLVItem, error) {
	left := len(it.block) - it.off
	if left < TLVItemHeaderSize {
		return TLVItem{}, fmt.Errorf("%w: item header at %d: %w", ErrBadTLV, it.off, ErrTruncated)
	}
	kind := TLVKind(it.block[it.off])
	n := binary.LittleEndian.Uint32(it.block[it.off+1:])
	if !kind.Valid() || n == 0 || n > TLVValueLengthMax {
		return TLVItem{}, fmt.Errorf("%w: item at %d kind %d length %d", ErrBadTLV, it.off, kind, n)
	}
	if int(n) > left-TLVItemHeaderSize {
		return TLVItem{}, fmt.Errorf("%w: item at %d overruns the block: %w", ErrBadTLV, it.off, ErrTruncated)
	}
	start := it.off + TLVItemHeaderSize
	it.off = start + int(n)
	return TLVItem{Kind: kind, Data: it.block[start:it.off:it.off]}, nil
}

// Err returns the first malformation found.
func (it *TLVIterator) Err() error { return it.err }

// ValidateTLV checks a whole block against §4.7 (kind ≠ 0, 1 ≤ length ≤
// 255, items inside the block, an even number of items) and returns the
// number of pairs. It does not check value sizes per kind; see
// ValidateTLVStrict, and ValidateUserHeaders for message user headers.
func ValidateTLV(block []byte) (pairs int, err error) {
	it := NewTLVIterator(block)
	for _, _, ok := it.Next(); ok; _, _, ok = it.Next() {
		pairs++
	}
	return pairs, it.Err()
}

// ValidateTLVStrict is ValidateTLV plus the per-kind value sizes of the
// §4.7 table, as SDKs enforce them on user headers.
func ValidateTLVStrict(block []byte) (pairs int, err error) {
	it := NewTLVIterator(block)
	for key, value, ok := it.Next(); ok; key, value, ok = it.Next() {
		for _, item := range [2]TLVItem{key, value} {
			if size := item.Kind.FixedSize(); size != 0 && len(item.Data) != size {
				return pairs, fmt.Errorf("%w: kind %d with %d bytes", ErrBadTLV, item.Kind, len(item.Data))
			}
		}
		pairs++
	}
	return pairs, it.Err()
}
