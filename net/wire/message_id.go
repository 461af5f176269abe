package wire

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
)

// ErrMessageIDText is wrapped by ParseMessageID's errors.
var ErrMessageIDText = errors.New("wire: message id text")

// decimalChunk is 10^19, the largest power of ten below 2^64: a 128-bit
// id is rendered 19 decimal digits at a time.
const decimalChunk = 10_000_000_000_000_000_000

// String renders the id as an unsigned decimal number (the REST API's and
// the CLI's form of a u128 id).
func (id MessageID) String() string {
	if id.High == 0 {
		return strconv.FormatUint(id.Low, 10)
	}
	// id = high·10^19 + low19, where high < 2^128/10^19 < 2^65 needs one
	// more division when it does not fit in 64 bits.
	var chunks [3]uint64
	n := 0
	hi, lo := id.High, id.Low
	for hi != 0 {
		qHi, r := hi/decimalChunk, hi%decimalChunk
		qLo, rem := bits.Div64(r, lo, decimalChunk)
		chunks[n] = rem
		n++
		hi, lo = qHi, qLo
	}
	out := strconv.AppendUint(make([]byte, 0, 40), lo, 10)
	for n > 0 {
		n--
		digits := strconv.FormatUint(chunks[n], 10)
		for pad := len(digits); pad < 19; pad++ {
			out = append(out, '0')
		}
		out = append(out, digits...)
	}
	return string(out)
}

// ParseMessageID reads an unsigned decimal number of at most 128 bits.
func ParseMessageID(s string) (MessageID, error) {
	if s == "" {
		return MessageID{}, fmt.Errorf("%w: empty", ErrMessageIDText)
	}
	var id MessageID
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return MessageID{}, fmt.Errorf("%w: %q is not a decimal number", ErrMessageIDText, s)
		}
		// id = id·10 + d, refusing what does not fit in 128 bits.
		hiCarry, hi := bits.Mul64(id.High, 10)
		loCarry, lo := bits.Mul64(id.Low, 10)
		hi, c1 := bits.Add64(hi, loCarry, 0)
		lo, c2 := bits.Add64(lo, uint64(d), 0)
		hi, c3 := bits.Add64(hi, 0, c2)
		if hiCarry != 0 || c1 != 0 || c3 != 0 {
			return MessageID{}, fmt.Errorf("%w: %q does not fit in 128 bits", ErrMessageIDRange, s)
		}
		id = MessageID{Low: lo, High: hi}
	}
	return id, nil
}

// ErrMessageIDRange is wrapped by ParseMessageID for a number of more than
// 128 bits (it wraps ErrMessageIDText too).
var ErrMessageIDRange = fmt.Errorf("%w: out of range", ErrMessageIDText)
