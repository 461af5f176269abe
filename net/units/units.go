// Package units parses and formats the byte sizes and durations people
// write in Strata's configuration, on the command line and in the HTTP
// API, with the same rules everywhere, so that a value that works in one
// place works in all of them.
//
// The rules are those of Apache Iggy, whose config file and CLI read sizes
// with the Rust crate byte-unit and durations with humantime:
//
//   - a size is a number (a decimal fraction allowed, rounded up to a whole
//     byte) and an optional unit: B; K, M, G, T, P, E (powers of 1000,
//     with or without B: "4K" and "4 KB" are 4000 bytes); KiB, MiB, GiB,
//     TiB, PiB, EiB (powers of 1024, with or without B: "4Ki", "4 KiB").
//     The prefix letter and the i are case-insensitive; the B is not: in
//     byte-unit a lower-case b means bits ("1 kb" is 125 bytes there), so
//     Strata refuses a size in bits rather than read it differently;
//   - a duration is a sum of terms, each a number and a unit, with or
//     without spaces ("1h 30m", "1h30m", "15days 2min 2s"), units as in
//     humantime and case-sensitive like it (M is a month, m a minute):
//     ns, us, µs, ms, s, m, h, d, w, M, y and their long forms (nsec,
//     usec, msec, sec, secs, second(s), min, mins, minute(s), hr, hrs,
//     hour(s), day(s), week(s), month(s), year(s), nanos, millis); a month
//     is 30.44 days and a year 365.25 days. Strata also takes Go's
//     duration syntax, so a term may have a fraction ("1.5s") and μs
//     (Greek mu) is a microsecond; a bare "0" is zero.
//
// Words with a meaning of their own where a value is read ("unlimited",
// "never", "server_default") are the callers' business. The package is
// pure (no OS, no clock) so that every layer, the consensus core's
// codecs included, can use it.
package units

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// ErrSyntax is wrapped by every parse failure.
var ErrSyntax = errors.New("units: invalid value")

// fractionDigitsMax bounds the digits after a decimal point, so that the
// fraction fits a uint64 and scales exactly.
const fractionDigitsMax = 18

// number is a parsed decimal: whole + fraction/scale.
type number struct {
	whole    uint64
	fraction uint64
	scale    uint64 // 10^digits of the fraction; 1 without one
}

// readNumber reads digits and an optional fraction at the start of s and
// returns the rest; s must start with a digit.
func readNumber(s string) (n number, rest string, err error) {
	i := 0
	n.scale = 1
	for i < len(s) && isDigit(s[i]) {
		hi, lo := bits.Mul64(n.whole, 10)
		sum, carry := bits.Add64(lo, uint64(s[i]-'0'), 0)
		if hi != 0 || carry != 0 {
			return n, "", fmt.Errorf("number %q is too large", s[:i+1])
		}
		n.whole = sum
		i++
	}
	if i == 0 {
		return n, "", errors.New("expected a number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			if i-start == fractionDigitsMax {
				return n, "", fmt.Errorf("more than %d digits after the decimal point", fractionDigitsMax)
			}
			n.fraction = n.fraction*10 + uint64(s[i]-'0')
			n.scale *= 10
			i++
		}
		if i == start {
			return n, "", errors.New("expected digits after the decimal point")
		}
	}
	return n, s[i:], nil
}

// scaled returns n × mult in 128 bits (hi, lo) and whether a fraction of
// one was cut off (the result is then rounded down).
func (n number) scaled(mult uint64) (hi, lo uint64, inexact bool) {
	hi, lo = bits.Mul64(n.whole, mult)
	fhi, flo := bits.Mul64(n.fraction, mult)
	// fraction < scale, so fhi < scale and the division cannot overflow.
	q, r := bits.Div64(fhi, flo, n.scale)
	var carry uint64
	lo, carry = bits.Add64(lo, q, 0)
	hi += carry
	return hi, lo, r != 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ParseBytes parses a byte size ("4096", "512 MB", "1.5 GiB", "4K") into
// bytes, by the rules in the package comment.
func ParseBytes(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	n, rest, err := readNumber(t)
	if err != nil {
		return 0, fmt.Errorf("%w: size %q: %v", ErrSyntax, s, err)
	}
	unit := strings.TrimLeft(rest, " ")
	mult, err := byteMultiplier(unit)
	if err != nil {
		return 0, fmt.Errorf("%w: size %q: %v", ErrSyntax, s, err)
	}
	hi, lo, inexact := n.scaled(mult)
	if inexact { // byte-unit rounds a fractional byte up
		var carry uint64
		lo, carry = bits.Add64(lo, 1, 0)
		hi += carry
	}
	if hi != 0 {
		return 0, fmt.Errorf("%w: size %q is above %d bytes", ErrSyntax, s, uint64(math.MaxUint64))
	}
	return lo, nil
}

// bytePrefixes are the unit prefixes, in order of their power.
const bytePrefixes = "KMGTPE"

// byteMultiplier reads a unit as byte-unit does (prefix letter in any
// case, an optional i, then B) and refuses units in bits.
func byteMultiplier(unit string) (uint64, error) {
	if unit == "" || unit == "B" {
		return 1, nil
	}
	power := strings.IndexByte(bytePrefixes, upper(unit[0]))
	rest := unit
	if power >= 0 {
		rest = unit[1:]
	}
	base := uint64(1000)
	if power >= 0 && rest != "" && (rest[0] == 'i' || rest[0] == 'I') {
		base, rest = 1024, rest[1:]
	}
	switch {
	case rest == "" && power >= 0, rest == "B":
	case rest == "b" || strings.EqualFold(rest, "bit") || strings.EqualFold(rest, "bits"):
		return 0, fmt.Errorf("unit %q is in bits (a lower-case b means bits in Iggy's byte-unit); sizes are in bytes: write %sB", unit, unit[:len(unit)-len(rest)])
	default:
		return 0, fmt.Errorf("unknown unit %q (B, KB, MB, GB, TB, PB, EB, KiB, MiB, GiB, TiB, PiB, EiB)", unit)
	}
	mult := uint64(1)
	for k := 0; k <= power; k++ {
		mult *= base
	}
	return mult, nil
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// Duration is a length of time in nanoseconds, the representation of
// time.Duration (convert with time.Duration(d)); the package does not
// import time so that the pure core may use it.
type Duration int64

// Lengths of the duration units, in nanoseconds.
const (
	Nanosecond  Duration = 1
	Microsecond          = 1000 * Nanosecond
	Millisecond          = 1000 * Microsecond
	Second               = 1000 * Millisecond
	Minute               = 60 * Second
	Hour                 = 60 * Minute
	Day                  = 24 * Hour
	Week                 = 7 * Day
	// Month and Year are humantime's: 30.44 and 365.25 days.
	Month = 2_630_016 * Second
	Year  = 31_557_600 * Second
)

// durationUnits maps every unit word to its length (case-sensitive).
var durationUnits = map[string]Duration{
	"nanos": Nanosecond, "nsec": Nanosecond, "ns": Nanosecond,
	"usec": Microsecond, "us": Microsecond, "µs": Microsecond, "μs": Microsecond,
	"millis": Millisecond, "msec": Millisecond, "ms": Millisecond,
	"seconds": Second, "second": Second, "secs": Second, "sec": Second, "s": Second,
	"minutes": Minute, "minute": Minute, "mins": Minute, "min": Minute, "m": Minute,
	"hours": Hour, "hour": Hour, "hrs": Hour, "hr": Hour, "h": Hour,
	"days": Day, "day": Day, "d": Day,
	"weeks": Week, "week": Week, "w": Week,
	"months": Month, "month": Month, "M": Month,
	"years": Year, "year": Year, "y": Year,
}

// Micros returns d in whole microseconds (the unit of Iggy's wire
// format), rounded down; a negative d is 0.
func (d Duration) Micros() uint64 {
	if d < 0 {
		return 0
	}
	return uint64(d / Microsecond)
}

// ParseDuration parses a duration ("30 s", "7 days", "1h 30m", "250ms",
// "1.5s") by the rules in the package comment. It is at most
// math.MaxInt64 nanoseconds (about 292 years).
func ParseDuration(s string) (Duration, error) {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return 0, fmt.Errorf("%w: empty duration", ErrSyntax)
	}
	if rest == "0" {
		return 0, nil
	}
	var totalHi, totalLo uint64
	for rest != "" {
		n, after, err := readNumber(rest)
		if err != nil {
			return 0, fmt.Errorf("%w: duration %q: %v", ErrSyntax, s, err)
		}
		after = strings.TrimLeft(after, " ")
		j := 0
		for j < len(after) && after[j] != ' ' && after[j] != '.' && !isDigit(after[j]) {
			j++
		}
		word := after[:j]
		unit, ok := durationUnits[word]
		if !ok {
			return 0, fmt.Errorf("%w: duration %q: %s", ErrSyntax, s, unknownUnit(word))
		}
		hi, lo, _ := n.scaled(uint64(unit)) // sub-nanosecond parts are dropped
		var carry uint64
		totalLo, carry = bits.Add64(totalLo, lo, 0)
		totalHi, carry = bits.Add64(totalHi, hi, carry)
		if totalHi != 0 || carry != 0 || totalLo > math.MaxInt64 {
			return 0, fmt.Errorf("%w: duration %q is above %s", ErrSyntax, s, FormatDuration(math.MaxInt64))
		}
		rest = strings.TrimLeft(after[j:], " ")
	}
	return Duration(totalLo), nil
}

// unknownUnit explains a unit word that is not one.
func unknownUnit(word string) string {
	if word == "" {
		return "a unit is needed after the number, for example 30s, 250ms or 7 days"
	}
	if _, ok := durationUnits[strings.ToLower(word)]; ok {
		return fmt.Sprintf("unknown unit %q (units are case-sensitive: %q?)", word, strings.ToLower(word))
	}
	return fmt.Sprintf("unknown unit %q (ns, us, ms, s, m, h, d, w, M, y or their long forms)", word)
}

// formatUnits are the units FormatDuration writes, largest first.
var formatUnits = []struct {
	name string
	unit Duration
}{
	{"d", Day}, {"h", Hour}, {"m", Minute}, {"s", Second}, {"ms", Millisecond}, {"us", Microsecond}, {"ns", Nanosecond},
}

// FormatDuration writes d as terms ParseDuration (and humantime) reads
// back exactly: "30s", "1h 30m", "1s 500ms", "0s". A negative d is
// written with a leading "-" (which ParseDuration refuses).
func FormatDuration(d Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	u := uint64(d)
	if d < 0 {
		b.WriteByte('-')
		u = -u
	}
	first := true
	for _, f := range formatUnits {
		n := u / uint64(f.unit)
		if n == 0 {
			continue
		}
		u -= n * uint64(f.unit)
		if !first {
			b.WriteByte(' ')
		}
		first = false
		fmt.Fprintf(&b, "%d%s", n, f.name)
	}
	return b.String()
}
