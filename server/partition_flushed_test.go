package server

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stratabroker/strata/server/group"
)

// TestFlushedStateCodec: flushed.state decodes to what was encoded, and
// every cut or flipped byte of it is refused (errFlushedFormat), never
// trusted.
func TestFlushedStateCodec(t *testing.T) {
	s := group.FlushedState{Op: 42, FlushedEnd: 1000, PurgeGeneration: 3, Data: []byte("CKPT and a descriptor")}
	image := encodeFlushedState(s)
	got, err := decodeFlushedState(image)
	if err != nil || got.Op != s.Op || got.FlushedEnd != s.FlushedEnd || got.PurgeGeneration != s.PurgeGeneration || !bytes.Equal(got.Data, s.Data) {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", s, got, err)
	}
	for n := 0; n < len(image); n++ {
		if _, err := decodeFlushedState(image[:n]); !errors.Is(err, errFlushedFormat) {
			t.Fatalf("a flushed state cut at %d of %d bytes: %v, want refused", n, len(image), err)
		}
	}
	for i := range image {
		flipped := bytes.Clone(image)
		flipped[i] ^= 0x40
		if _, err := decodeFlushedState(flipped); !errors.Is(err, errFlushedFormat) {
			t.Fatalf("a flushed state with byte %d flipped: %v, want refused", i, err)
		}
	}
}

// FuzzDecodeFlushedState: decoding never panics, and what decodes
// encodes back to the same bytes.
func FuzzDecodeFlushedState(f *testing.F) {
	f.Add(encodeFlushedState(group.FlushedState{Op: 1, Data: []byte{1, 2, 3}}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeFlushedState(b)
		if err != nil {
			return
		}
		if again := encodeFlushedState(s); !bytes.Equal(again, b) {
			t.Fatalf("decode then encode changed the image")
		}
	})
}
