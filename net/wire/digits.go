package wire

import (
	"fmt"
	"math/bits"
)

// parseUintDigits parses a run of ASCII digits into a uint64.
func parseUintDigits(digits string) (uint64, error) {
	var n uint64
	for i := 0; i < len(digits); i++ {
		hi, lo := bits.Mul64(n, 10)
		sum, carry := bits.Add64(lo, uint64(digits[i]-'0'), 0)
		if hi != 0 || carry != 0 {
			return 0, fmt.Errorf("%w: number %q overflows", ErrBadValue, digits)
		}
		n = sum
	}
	return n, nil
}
