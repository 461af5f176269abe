package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ByteSize is a size in bytes, written in TOML as an integer or a string
// such as "1 MiB", "512 KB" or "4GiB".
type ByteSize uint64

// byteUnits maps unit suffixes (lower case) to their multipliers.
var byteUnits = []struct {
	suffix string
	factor uint64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000}, {"tb", 1000 * 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
}

// ParseByteSize parses "1048576", "1 MiB", "512KB" and similar.
func ParseByteSize(text string) (uint64, error) {
	s := strings.ToLower(strings.TrimSpace(text))
	factor := uint64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			factor = u.factor
			s = strings.TrimSpace(strings.TrimSuffix(s, u.suffix))
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a byte size", text)
	}
	if n != 0 && n*factor/n != factor {
		return 0, fmt.Errorf("%q overflows", text)
	}
	return n * factor, nil
}

// UnmarshalText implements encoding.TextUnmarshaler for TOML strings.
func (b *ByteSize) UnmarshalText(text []byte) error {
	n, err := ParseByteSize(string(text))
	if err != nil {
		return err
	}
	*b = ByteSize(n)
	return nil
}

// UnmarshalTOML accepts an integer or a string.
func (b *ByteSize) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("byte size %d is negative", x)
		}
		*b = ByteSize(x)
		return nil
	case string:
		return b.UnmarshalText([]byte(x))
	default:
		return fmt.Errorf("byte size must be an integer or a string, not %T", v)
	}
}

// MarshalText writes the size as a plain byte count.
func (b ByteSize) MarshalText() ([]byte, error) {
	return []byte(strconv.FormatUint(uint64(b), 10)), nil
}

// Duration is a time span written as "30 s", "5 min", "250 ms", "1h".
type Duration time.Duration

// durationUnits maps unit words to their length, longest first.
var durationUnits = []struct {
	suffix string
	unit   time.Duration
}{
	{"minutes", time.Minute}, {"minute", time.Minute}, {"min", time.Minute}, {"m", time.Minute},
	{"seconds", time.Second}, {"second", time.Second}, {"secs", time.Second}, {"sec", time.Second},
	{"ms", time.Millisecond}, {"us", time.Microsecond}, {"hours", time.Hour}, {"hour", time.Hour},
	{"h", time.Hour}, {"s", time.Second},
}

// ParseDuration parses "30 s", "5 min", "250ms" or a Go duration string.
func ParseDuration(text string) (time.Duration, error) {
	s := strings.ToLower(strings.TrimSpace(text))
	if d, err := time.ParseDuration(strings.ReplaceAll(s, " ", "")); err == nil {
		return d, nil
	}
	for _, u := range durationUnits {
		if strings.HasSuffix(s, u.suffix) {
			n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), 10, 32)
			if err != nil {
				break
			}
			return time.Duration(n) * u.unit, nil
		}
	}
	return 0, fmt.Errorf("%q is not a duration", text)
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := ParseDuration(string(text))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration in Go syntax.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}
