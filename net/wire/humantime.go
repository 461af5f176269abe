package wire

import (
	"fmt"
	"math/bits"
	"strings"
)

// humantimeUnits maps a humantime unit to its length in nanoseconds. Units
// are case-sensitive as in the Rust humantime crate Iggy uses ("M" is a
// month, "m" a minute); a month is 30.44 days and a year 365.25 days.
var humantimeUnits = map[string]uint64{
	"nsec": 1, "ns": 1,
	"usec": 1e3, "us": 1e3, "µs": 1e3,
	"msec": 1e6, "ms": 1e6,
	"seconds": 1e9, "second": 1e9, "sec": 1e9, "secs": 1e9, "s": 1e9,
	"minutes": 60e9, "minute": 60e9, "min": 60e9, "mins": 60e9, "m": 60e9,
	"hours": 3600e9, "hour": 3600e9, "hr": 3600e9, "hrs": 3600e9, "h": 3600e9,
	"days": 86400e9, "day": 86400e9, "d": 86400e9,
	"weeks": 604800e9, "week": 604800e9, "w": 604800e9,
	"months": 2_630_016e9, "month": 2_630_016e9, "M": 2_630_016e9,
	"years": 31_557_600e9, "year": 31_557_600e9, "y": 31_557_600e9,
}

// ParseHumantime parses a duration such as "7 days", "1h 30m" or
// "15days 2min 2s" into microseconds (sub-microsecond parts are dropped).
// Each term is an unsigned integer followed, with optional spaces, by a
// unit; terms add up. An empty string, a number without a unit, an unknown
// unit or an overflow is an error.
func ParseHumantime(s string) (uint64, error) {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return 0, fmt.Errorf("%w: empty duration", ErrBadValue)
	}
	var totalHi, totalLo uint64 // nanoseconds as a 128-bit sum
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%w: duration %q: expected a number", ErrBadValue, s)
		}
		n, err := parseUintDigits(rest[:i])
		if err != nil {
			return 0, fmt.Errorf("%w: duration %q", err, s)
		}
		rest = strings.TrimLeft(rest[i:], " ")
		j := 0
		for j < len(rest) && rest[j] != ' ' && (rest[j] < '0' || rest[j] > '9') {
			j++
		}
		unit, ok := humantimeUnits[rest[:j]]
		if !ok {
			return 0, fmt.Errorf("%w: duration %q: unknown unit %q", ErrBadValue, s, rest[:j])
		}
		rest = strings.TrimLeft(rest[j:], " ")
		hi, lo := bits.Mul64(n, unit)
		var carry uint64
		totalLo, carry = bits.Add64(totalLo, lo, 0)
		totalHi, _ = bits.Add64(totalHi, hi, carry)
		if totalHi >= 1000 {
			return 0, fmt.Errorf("%w: duration %q overflows", ErrBadValue, s)
		}
	}
	micros, _ := bits.Div64(totalHi, totalLo, 1000)
	return micros, nil
}

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

// ParseByteSize parses a byte size such as "1 GiB", "512 MB", "1.5GB" or
// "4096" into bytes. Units are case-insensitive: B or none = bytes;
// K, M, G, T, P, E (optionally followed by B) are powers of 1000; KiB,
// MiB, GiB, TiB, PiB, EiB powers of 1024. A fraction is allowed and the
// result is truncated to whole bytes.
func ParseByteSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%w: byte size %q: expected a number", ErrBadValue, s)
	}
	whole, err := parseUintDigits(t[:i])
	if err != nil {
		return 0, err
	}
	var frac, fracScale uint64 = 0, 1
	if i < len(t) && t[i] == '.' {
		i++
		start := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			if i-start < 18 {
				frac = frac*10 + uint64(t[i]-'0')
				fracScale *= 10
			}
			i++
		}
		if i == start {
			return 0, fmt.Errorf("%w: byte size %q: digits expected after '.'", ErrBadValue, s)
		}
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := byteSizeMultiplier(unit)
	if !ok {
		return 0, fmt.Errorf("%w: byte size %q: unknown unit %q", ErrBadValue, s, t[i:])
	}
	hi, bytes := bits.Mul64(whole, mult)
	if hi != 0 {
		return 0, fmt.Errorf("%w: byte size %q overflows", ErrBadValue, s)
	}
	fhi, flo := bits.Mul64(frac, mult)
	fracBytes, _ := bits.Div64(fhi, flo, fracScale)
	total, carry := bits.Add64(bytes, fracBytes, 0)
	if carry != 0 {
		return 0, fmt.Errorf("%w: byte size %q overflows", ErrBadValue, s)
	}
	return total, nil
}

func byteSizeMultiplier(unit string) (uint64, bool) {
	if unit == "" || unit == "b" {
		return 1, true
	}
	const prefixes = "kmgtpe"
	p := strings.IndexByte(prefixes, unit[0])
	if p < 0 {
		return 0, false
	}
	rest := unit[1:]
	base := uint64(1000)
	if strings.HasPrefix(rest, "i") {
		base, rest = 1024, rest[1:]
	}
	if rest != "" && rest != "b" {
		return 0, false
	}
	mult := uint64(1)
	for k := 0; k <= p; k++ {
		mult *= base
	}
	return mult, true
}
