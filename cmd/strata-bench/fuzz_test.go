package main

import (
	"errors"
	"testing"
)

// FuzzCheckPayload: checkPayload never panics, fails only with ErrVerify,
// and accepts and decodes what fillPayload writes.
func FuzzCheckPayload(f *testing.F) {
	good := make([]byte, 100)
	fillPayload(good, 1, 2, 3, 4)
	f.Add(good, uint32(1), uint64(2), uint16(100))
	f.Add([]byte{}, uint32(0), uint64(0), uint16(32))
	f.Add([]byte("STRB"), uint32(9), uint64(1<<40), uint16(33))
	f.Fuzz(func(t *testing.T, raw []byte, partition uint32, key uint64, size uint16) {
		if _, err := checkPayload(raw); err != nil && !errors.Is(err, ErrVerify) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if int(size) < payloadHeaderSize {
			return
		}
		p := make([]byte, size)
		fillPayload(p, partition, key, 5, 6)
		got, err := checkPayload(p)
		if err != nil {
			t.Fatal(err)
		}
		if got.partition != partition || got.key != key || got.index != 5 || got.producer != 6 {
			t.Fatalf("decoded %+v", got)
		}
	})
}
