package statecodec

import (
	"errors"
	"testing"
)

var errTestMalformed = errors.New("test: malformed")

func TestDecoderRoundTrip(t *testing.T) {
	env := Envelope{UserID: 7, ClientLo: 1, ClientHi: 2, Request: 3}
	b := env.AppendTo(nil)
	if len(b) != EnvelopeSize {
		t.Fatalf("envelope size %d, want %d", len(b), EnvelopeSize)
	}
	b = AppendFlag(b, true)
	b = AppendName(b, "name")
	b = AppendBlob(b, []byte{9})
	b = AppendText(b, "")
	b = AppendU32(b, 2)
	b = AppendU64(b, 5)
	b = append(b, 6)
	d := NewDecoder(b, errTestMalformed)
	if got := DecodeEnvelope(&d); got != env {
		t.Fatalf("envelope %+v, want %+v", got, env)
	}
	if !d.Flag() || d.Name() != "name" || string(d.Blob(1)) != "\x09" || d.Text(0) != "" {
		t.Fatal("fields differ")
	}
	if n := d.Count(4); n != 2 {
		t.Fatalf("count %d", n)
	}
	if d.U64() != 5 || string(d.Rest()) != "\x06" {
		t.Fatal("tail differs")
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
}

func TestDecoderFailureSticks(t *testing.T) {
	for name, b := range map[string][]byte{
		"short":      {1, 2},
		"bad flag":   {2, 0, 0, 0},
		"empty name": {0},
		"blob limit": {2, 0, 0, 0, 1, 2},
		"count":      {9, 0, 0, 0},
	} {
		d := NewDecoder(b, errTestMalformed)
		switch name {
		case "short":
			d.U32()
		case "bad flag":
			d.Flag()
		case "empty name":
			d.Name()
		case "blob limit":
			d.Blob(1)
		case "count":
			d.Count(1)
		}
		if !errors.Is(d.Err(), errTestMalformed) {
			t.Fatalf("%s: err %v", name, d.Err())
		}
		if d.U8() != 0 || d.Rest() != nil || !errors.Is(d.End(), errTestMalformed) {
			t.Fatalf("%s: reads after a failure must return zero values", name)
		}
	}
	d := NewDecoder([]byte{1}, errTestMalformed)
	if !errors.Is(d.End(), errTestMalformed) {
		t.Fatal("End accepted trailing bytes")
	}
}

func TestCheckpointFrame(t *testing.T) {
	errCorrupt := errors.New("test: corrupt")
	const magic = 0x54534554
	data := SealCheckpoint(append(AppendCheckpointHeader(nil, magic, 3), "body"...))
	version, body, err := OpenCheckpoint(data, magic, 1<<10, errCorrupt)
	if err != nil || version != 3 || string(body) != "body" {
		t.Fatalf("open: version %d body %q err %v", version, body, err)
	}
	flipped := append([]byte(nil), data...)
	flipped[CheckpointHeaderSize] ^= 1
	for name, tc := range map[string]struct {
		data    []byte
		magic   uint32
		sizeMax uint64
	}{
		"short":    {data[:CheckpointHeaderSize+CheckpointTrailerSize-1], magic, 1 << 10},
		"too big":  {data, magic, uint64(len(data) - 1)},
		"checksum": {flipped, magic, 1 << 10},
		"magic":    {data, magic + 1, 1 << 10},
	} {
		if _, _, err := OpenCheckpoint(tc.data, tc.magic, tc.sizeMax, errCorrupt); !errors.Is(err, errCorrupt) {
			t.Fatalf("%s: err %v", name, err)
		}
	}
}
