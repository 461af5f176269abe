package metadata

import (
	"bytes"
	"sort"
)

// optionKindString is the TLV kind of an options key (§4.7, §4.8).
const optionKindString uint8 = 2

// optionItemBytesMax bounds one TLV item's data (§4.7).
const optionItemBytesMax = 255

// optionPair is one key/value pair of an options block. value holds the
// whole encoded value item (kind, length, data) so it re-encodes
// unchanged.
type optionPair struct {
	key   string
	value []byte
}

// parseOptions splits a §4.7 TLV block into pairs. Keys must be string
// items and unique; the block must be well formed and within the §4.8
// limits.
func parseOptions(block []byte) ([]optionPair, error) {
	if len(block) > optionsBlockBytesMax {
		return nil, ErrMalformed
	}
	var pairs []optionPair
	seen := make(map[string]struct{})
	d := decoder{buf: block}
	for d.remaining() > 0 {
		keyKind, key := readOptionItem(&d)
		valueStart := d.off
		readOptionItem(&d)
		if d.err != nil {
			return nil, d.err
		}
		if keyKind != optionKindString {
			return nil, ErrMalformed
		}
		if _, dup := seen[string(key)]; dup {
			return nil, ErrMalformed
		}
		seen[string(key)] = struct{}{}
		pairs = append(pairs, optionPair{key: string(key), value: block[valueStart:d.off]})
		if len(pairs) > optionsPairsMax {
			return nil, ErrMalformed
		}
	}
	return pairs, nil
}

// readOptionItem reads one TLV item and returns its kind and data.
func readOptionItem(d *decoder) (uint8, []byte) {
	kind := d.u8()
	n := d.u32()
	if d.err != nil {
		return 0, nil
	}
	if kind == 0 || kind > 15 || n == 0 || n > optionItemBytesMax {
		d.fail(ErrMalformed)
		return 0, nil
	}
	return kind, d.take(int(n))
}

// encodeOptions writes pairs as a TLV block with keys in byte-wise
// ascending order (§4.8 response order).
func encodeOptions(pairs []optionPair) []byte {
	if len(pairs) == 0 {
		return nil
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].key < pairs[j].key })
	var out []byte
	for _, p := range pairs {
		out = append(out, optionKindString)
		out = appendU32(out, uint32(len(p.key)))
		out = append(out, p.key...)
		out = append(out, p.value...)
	}
	return out
}

// patchOptions merges the pairs of sent into explicit (replacing equal
// keys) and removes them from derived, returning both new blocks.
func patchOptions(explicit, derived, sent []byte) (newExplicit, newDerived []byte, err error) {
	sentPairs, err := parseOptions(sent)
	if err != nil {
		return nil, nil, err
	}
	if len(sentPairs) == 0 {
		return explicit, derived, nil
	}
	explicitPairs, err := parseOptions(explicit)
	if err != nil {
		return nil, nil, err
	}
	derivedPairs, err := parseOptions(derived)
	if err != nil {
		return nil, nil, err
	}
	byKey := make(map[string][]byte, len(explicitPairs)+len(sentPairs))
	for _, p := range explicitPairs {
		byKey[p.key] = p.value
	}
	for _, p := range sentPairs {
		byKey[p.key] = bytes.Clone(p.value)
	}
	merged := make([]optionPair, 0, len(byKey))
	for k, v := range byKey {
		merged = append(merged, optionPair{key: k, value: v})
	}
	keptDerived := derivedPairs[:0]
	for _, p := range derivedPairs {
		if _, sentNow := byKey[p.key]; !sentNow {
			keptDerived = append(keptDerived, p)
		}
	}
	return encodeOptions(merged), encodeOptions(keptDerived), nil
}
