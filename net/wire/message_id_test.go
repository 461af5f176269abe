package wire

import (
	"errors"
	"math/big"
	"testing"
)

// bigOf is the id as a big integer: the reference for the tests.
func bigOf(id MessageID) *big.Int {
	v := new(big.Int).SetUint64(id.High)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(id.Low))
}

func TestMessageIDText(t *testing.T) {
	max := MessageID{Low: ^uint64(0), High: ^uint64(0)}
	for _, id := range []MessageID{{}, {Low: 1}, {Low: ^uint64(0)}, {High: 1}, {Low: 7, High: 1 << 63}, max,
		{Low: 9_999_999_999_999_999_999, High: 0x21e19e0c9bab2400}} {
		text := id.String()
		if want := bigOf(id).String(); text != want {
			t.Fatalf("%+v renders %s, want %s", id, text, want)
		}
		back, err := ParseMessageID(text)
		if err != nil || back != id {
			t.Fatalf("%s parses to %+v %v", text, back, err)
		}
	}
	if _, err := ParseMessageID("340282366920938463463374607431768211456"); !errors.Is(err, ErrMessageIDRange) {
		t.Fatalf("2^128: %v", err)
	}
	for _, bad := range []string{"", "-1", "+1", "1e3", " 1", "0x10"} {
		if _, err := ParseMessageID(bad); !errors.Is(err, ErrMessageIDText) || errors.Is(err, ErrMessageIDRange) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

func FuzzMessageIDText(f *testing.F) {
	f.Add(uint64(0), uint64(0))
	f.Add(^uint64(0), ^uint64(0))
	f.Add(uint64(123), uint64(456))
	f.Fuzz(func(t *testing.T, low, high uint64) {
		id := MessageID{Low: low, High: high}
		text := id.String()
		if want := bigOf(id).String(); text != want {
			t.Fatalf("%+v renders %s, want %s", id, text, want)
		}
		if back, err := ParseMessageID(text); err != nil || back != id {
			t.Fatalf("%s parses to %+v %v", text, back, err)
		}
	})
}
