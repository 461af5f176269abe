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

// patchOptions applies an update to a topic's two option blocks: each
// pair of setExplicit replaces or joins its key in explicit and leaves
// derived; each pair of setDerived (a key reset to the server default)
// replaces or joins its key in derived and leaves explicit. Both new
// blocks come back with keys ascending.
func patchOptions(explicit, derived []byte, setExplicit, setDerived wire.Options) (newExplicit, newDerived []byte, err error) {
	if len(setExplicit) == 0 && len(setDerived) == 0 {
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
	sentKeys := make(map[string]bool, len(setExplicit)+len(setDerived))
	for _, p := range setExplicit {
		sentKeys[p.Key] = true
	}
	for _, p := range setDerived {
		sentKeys[p.Key] = true
	}
	keep := func(base, set wire.Options) wire.Options {
		out := append(wire.Options(nil), set...)
		for _, p := range base {
			if !sentKeys[p.Key] {
				out = append(out, p)
			}
		}
		return out
	}
	if newExplicit, err = encodeOptions(keep(explicitPairs, setExplicit)); err != nil {
		return nil, nil, err
	}
	if newDerived, err = encodeOptions(keep(derivedPairs, setDerived)); err != nil {
		return nil, nil, err
	}
	return newExplicit, newDerived, nil
}
