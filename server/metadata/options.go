package metadata

import (
	"sort"

	"github.com/stratabroker/strata/net/wire"
)

// parseOptions validates a §4.8 options block with net/wire's rules (TLV
// items, string keys, no duplicates, at most 1024 pairs and 100 000
// bytes).
func parseOptions(block []byte) (wire.Options, error) {
	return wire.ParseOptions(block)
}

// encodeOptions writes pairs as a block with keys in byte-wise ascending
// order (§4.8 response order); it fails when the block breaks the §4.8
// limits.
func encodeOptions(pairs wire.Options) ([]byte, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	sorted := append(wire.Options(nil), pairs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	return sorted.AppendTo(nil)
}

// patchOptions merges the pairs of sent into explicit (replacing equal
// keys) and removes them from derived, returning both new blocks with keys
// ascending.
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
	sentKeys := make(map[string]bool, len(sentPairs))
	for _, p := range sentPairs {
		sentKeys[p.Key] = true
	}
	merged := append(wire.Options(nil), sentPairs...)
	for _, p := range explicitPairs {
		if !sentKeys[p.Key] {
			merged = append(merged, p)
		}
	}
	var keptDerived wire.Options
	for _, p := range derivedPairs {
		if !sentKeys[p.Key] {
			keptDerived = append(keptDerived, p)
		}
	}
	if newExplicit, err = encodeOptions(merged); err != nil {
		return nil, nil, err
	}
	if newDerived, err = encodeOptions(keptDerived); err != nil {
		return nil, nil, err
	}
	return newExplicit, newDerived, nil
}
