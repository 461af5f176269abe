package config

import (
	"fmt"
	"strconv"
	"time"

	"github.com/stratabroker/strata/net/units"
)

// ByteSize is a size in bytes, written in TOML as an integer or a string
// such as "1 MiB", "512 KB" or "1.5 GiB", read by net/units (the parser
// the CLI, the connectors and the HTTP API use too).
type ByteSize uint64

// UnmarshalText implements encoding.TextUnmarshaler (TOML strings and
// environment overrides).
func (b *ByteSize) UnmarshalText(text []byte) error {
	n, err := units.ParseBytes(string(text))
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

// Duration is a time span written as a string such as "30 s", "5 min",
// "250 ms" or "1h 30m", read by net/units.
type Duration time.Duration

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := units.ParseDuration(string(text))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// UnmarshalTOML accepts a string, or the integer 0: any other bare
// number has no unit to say what it counts.
func (d *Duration) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		return d.UnmarshalText([]byte(x))
	case int64:
		if x == 0 {
			*d = 0
			return nil
		}
		return fmt.Errorf("duration %d has no unit: write a string such as \"%d s\" or \"%d ms\"", x, x, x)
	default:
		return fmt.Errorf("duration must be a string such as \"30 s\", not %T", v)
	}
}

// MarshalText writes the duration as units.FormatDuration does ("30s",
// "1h 30m"), which reads back exactly.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(units.FormatDuration(units.Duration(d))), nil
}
