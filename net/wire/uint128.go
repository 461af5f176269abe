package wire

import "encoding/binary"

// Uint128 is a 128-bit unsigned integer as the headers carry it (client
// ids, request checksums): 16 bytes little-endian, Lo first. It mirrors
// vsr.Uint128 without importing vsr.
type Uint128 struct {
	Lo, Hi uint64
}

// IsZero reports whether u is 0.
func (u Uint128) IsZero() bool { return u.Lo == 0 && u.Hi == 0 }

// putUint128 writes u little-endian into b[0:16]; b must be long enough.
func putUint128(b []byte, u Uint128) {
	binary.LittleEndian.PutUint64(b[0:8], u.Lo)
	binary.LittleEndian.PutUint64(b[8:16], u.Hi)
}

// getUint128 reads a little-endian u128 from b[0:16]; b must be long enough.
func getUint128(b []byte) Uint128 {
	return Uint128{Lo: binary.LittleEndian.Uint64(b[0:8]), Hi: binary.LittleEndian.Uint64(b[8:16])}
}
