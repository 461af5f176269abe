// Package xxh32 computes the 32-bit xxHash (XXH32) with seed 0 and no
// allocation. Iggy keys string consumer ids and message keys with it
// (PROTOCOL.md §4.3, §4.4), so Strata must produce the same values.
package xxh32

import (
	"encoding/binary"
	"math/bits"
)

const (
	prime1 uint32 = 2654435761
	prime2 uint32 = 2246822519
	prime3 uint32 = 3266489917
	prime4 uint32 = 668265263
	prime5 uint32 = 374761393
)

// round mixes one 4-byte lane into an accumulator.
func round(acc, lane uint32) uint32 {
	acc += lane * prime2
	acc = bits.RotateLeft32(acc, 13)
	return acc * prime1
}

// Checksum returns XXH32(b, seed 0).
func Checksum(b []byte) uint32 { return ChecksumSeed(b, 0) }

// ChecksumSeed returns XXH32(b, seed).
func ChecksumSeed(b []byte, seed uint32) uint32 {
	n := len(b)
	var h uint32
	if n >= 16 {
		v1 := seed + prime1 + prime2
		v2 := seed + prime2
		v3 := seed
		v4 := seed - prime1
		for len(b) >= 16 {
			v1 = round(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:]))
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + prime5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h += binary.LittleEndian.Uint32(b) * prime3
		h = bits.RotateLeft32(h, 17) * prime4
		b = b[4:]
	}
	for _, c := range b {
		h += uint32(c) * prime5
		h = bits.RotateLeft32(h, 11) * prime1
	}
	h ^= h >> 15
	h *= prime2
	h ^= h >> 13
	h *= prime3
	h ^= h >> 16
	return h
}
