package units

import (
	"errors"
	"go/parser"
	"go/token"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParseBytes checks the byte-unit rules: K is 1000, Ki 1024, the
// prefix letter and the i in any case, a fraction rounded up.
func TestParseBytes(t *testing.T) {
	cases := map[string]uint64{
		"0": 0, "4096": 4096, "10 B": 10, "10B": 10, " 7  B ": 7,
		"4K": 4000, "4k": 4000, "4 KB": 4000, "4kB": 4000, "4Ki": 4096, "4 KiB": 4096, "4 KIB": 4096,
		"512 MB": 512e6, "1GB": 1e9, "1 GiB": 1 << 30, "4 GiB": 4 << 30, "1 TiB": 1 << 40, "1 PB": 1e15, "1 EiB": 1 << 60,
		"1.5 GiB": 3 << 29, "1.5 MiB": 3 << 19, "1.5 KiB": 1536, "1.5 KB": 1500, "0.5 B": 1, "1.0001 KB": 1001, "1.5": 2,
		"15 EiB": 15 << 60, "18446744073709551615": math.MaxUint64,
	}
	for s, want := range cases {
		if got, err := ParseBytes(s); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for s, part := range map[string]string{
		"": "expected a number", "GiB": "expected a number", "-1 KB": "expected a number", ".5 KB": "expected a number",
		"1 XB": "unknown unit", "1.": "digits after", "1 GiBs": "unknown unit", "1 i": "unknown unit", "1 iB": "unknown unit",
		"16 EiB": "above", "18446744073709551616": "too large", "1.0000000000000000001 KB": "digits after",
		"1 kb": "bits", "1 b": "bits", "1 Kbit": "bits", "1 MiBit": "bits", "100 bits": "bits", "2 mib": "bits",
	} {
		_, err := ParseBytes(s)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), part) {
			t.Errorf("ParseBytes(%q): %v; want ErrSyntax saying %q", s, err, part)
		}
	}
}

// TestParseDuration checks humantime's units (case-sensitive, M a month)
// and Go's syntax.
func TestParseDuration(t *testing.T) {
	cases := map[string]time.Duration{
		"0": 0, "0s": 0, "30 s": 30 * time.Second, "30s": 30 * time.Second, "250 ms": 250 * time.Millisecond,
		"7 days": 7 * 24 * time.Hour, "30 days": 30 * 24 * time.Hour, "1h 30m": 90 * time.Minute, "1h30m": 90 * time.Minute,
		"15days 2min 2s": 15*24*time.Hour + 122*time.Second, "2 weeks": 14 * 24 * time.Hour, "1w": 7 * 24 * time.Hour,
		"1 M": 2_630_016 * time.Second, "1month": 2_630_016 * time.Second, "1y": 31_557_600 * time.Second,
		"5 min": 5 * time.Minute, "5 mins": 5 * time.Minute, "1 minute": time.Minute, "10 minutes": 10 * time.Minute,
		"2 hours": 2 * time.Hour, "1hr": time.Hour, "3hrs": 3 * time.Hour, "1 sec": time.Second, "2 secs": 2 * time.Second,
		"1 second": time.Second, "17nsec": 17, "17nanos": 17, "33ns": 33, "3usec": 3 * time.Microsecond,
		"78us": 78 * time.Microsecond, "163µs": 163 * time.Microsecond, "163μs": 163 * time.Microsecond,
		"31msec": 31 * time.Millisecond, "31millis": 31 * time.Millisecond, "1.5s": 1500 * time.Millisecond,
		"1m30s": 90 * time.Second, "1h2m3.5s": time.Hour + 2*time.Minute + 3500*time.Millisecond, " 20 min 17 nsec ": 20*time.Minute + 17,
		"292y": 292 * 31_557_600 * time.Second,
	}
	for s, want := range cases {
		if got, err := ParseDuration(s); err != nil || time.Duration(got) != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, time.Duration(got), err, want)
		}
	}
	for s, part := range map[string]string{
		"": "empty", "  ": "empty", "7": "unit is needed", "days": "expected a number", "7 parsecs": "unknown unit",
		"1h x": "expected a number", "99999999999999999999s": "too large", "300y": "above", "5 MIN": "case-sensitive",
		"30 S": "case-sensitive", "-1s": "expected a number", "+1s": "expected a number", "1..5s": "digits after",
		"1 hour and 30 minutes": "expected a number",
	} {
		_, err := ParseDuration(s)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), part) {
			t.Errorf("ParseDuration(%q): %v; want ErrSyntax saying %q", s, err, part)
		}
	}
}

// TestFormatDurationRoundTrips: what FormatDuration writes parses back to
// the same value.
func TestFormatDurationRoundTrips(t *testing.T) {
	for _, d := range []Duration{0, 1, 999, Second, 30 * Second, 90 * Minute, 1500 * Millisecond, 7 * Day, Month, Year + 3*Nanosecond, math.MaxInt64} {
		s := FormatDuration(d)
		got, err := ParseDuration(s)
		if err != nil || got != d {
			t.Errorf("FormatDuration(%d) = %q, parsed back as %d, %v", d, s, got, err)
		}
		if d > 0 && strings.Contains(s, ".") {
			t.Errorf("FormatDuration(%d) = %q has a fraction humantime cannot read", d, s)
		}
	}
	if got := FormatDuration(90 * Minute); got != "1h 30m" {
		t.Errorf("FormatDuration(90m) = %q", got)
	}
	if got := FormatDuration(-Second); got != "-1s" {
		t.Errorf("FormatDuration(-1s) = %q", got)
	}
	if got := (1500 * Nanosecond).Micros(); got != 1 {
		t.Errorf("Micros = %d", got)
	}
}

// TestPackageIsPure: the consensus core's codecs use this package, so it
// imports nothing that touches the OS or the clock (STYLE.md rule 1).
func TestPackageIsPure(t *testing.T) {
	allowed := map[string]bool{"errors": true, "fmt": true, "math": true, "math/bits": true, "strings": true}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %s", e.Name(), path)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no file checked")
	}
}

// FuzzParse: parsing never panics, and a duration that parses formats
// and parses back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1 GiB", "1.5 KB", "4K", "7 days", "1h 30m", "1.5s", "163µs", "0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseBytes(s)
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		back, err := ParseDuration(FormatDuration(d))
		if err != nil || back != d {
			t.Fatalf("%q = %d formats as %q = %d, %v", s, d, FormatDuration(d), back, err)
		}
	})
}
