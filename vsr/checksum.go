package vsr

import "github.com/zeebo/xxh3"

// checksum returns the 128-bit XXH3 of data, the checksum of every VSR
// header, body and on-disk record.
func checksum(data []byte) Uint128 {
	h := xxh3.Hash128(data)
	return Uint128{Lo: h.Lo, Hi: h.Hi}
}

// Checksum returns the 128-bit XXH3 checksum VSR uses for data. It exists
// so that other packages (journal, the simulator's checkers) agree with it.
func Checksum(data []byte) Uint128 { return checksum(data) }
