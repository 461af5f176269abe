package plugin

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	var stream bytes.Buffer
	bodies := [][]byte{nil, []byte(`{"a":1}`), bytes.Repeat([]byte("x"), 70000)}
	var scratch []byte
	var err error
	for i, b := range bodies {
		if scratch, err = WriteFrame(&stream, scratch, KindOk+uint8(i%2), b); err != nil {
			t.Fatal(err)
		}
	}
	fr := NewFrameReader(&stream)
	for i, b := range bodies {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind != KindOk+uint8(i%2) || !bytes.Equal(f.Body, b) {
			t.Fatalf("frame %d: kind %d body %d bytes", i, f.Kind, len(f.Body))
		}
	}
	if _, err := fr.ReadFrame(); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
}

func TestFrameRejectsBadInput(t *testing.T) {
	huge := []byte{0xff, 0xff, 0xff, 0xff, KindOk}
	if _, _, err := DecodeFrame(huge); !errors.Is(err, ErrFrame) {
		t.Fatalf("huge length: %v", err)
	}
	if _, err := NewFrameReader(bytes.NewReader(huge)).ReadFrame(); !errors.Is(err, ErrFrame) {
		t.Fatalf("reader huge length: %v", err)
	}
	if _, _, err := DecodeFrame([]byte{0, 0, 0, 0, 77}); !errors.Is(err, ErrFrame) {
		t.Fatalf("unknown kind: %v", err)
	}
	if _, err := NewFrameReader(bytes.NewReader([]byte{3, 0, 0, 0, KindOk, 'a'})).ReadFrame(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short body: %v", err)
	}
}

func FuzzDecodeFrame(f *testing.F) {
	good, _ := AppendFrame(nil, KindBatch, []byte(`{"messages":[]}`))
	f.Add(good)
	f.Add([]byte{0, 0, 0, 0, KindOk})
	f.Add([]byte{1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := DecodeFrame(b)
		if err != nil {
			return
		}
		again, err := AppendFrame(nil, fr.Kind, fr.Body)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b[:n]) {
			t.Fatalf("re-encode differs")
		}
		rf, err := NewFrameReader(bytes.NewReader(b)).ReadFrame()
		if err != nil || rf.Kind != fr.Kind || !bytes.Equal(rf.Body, fr.Body) {
			t.Fatalf("reader disagrees: %v", err)
		}
	})
}

// BenchmarkFrameRoundTrip writes and reads one 4 KiB frame.
func BenchmarkFrameRoundTrip(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 4096)
	var stream bytes.Buffer
	fr := NewFrameReader(&stream)
	var scratch []byte
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if scratch, err = WriteFrame(&stream, scratch, KindConsume, body); err != nil {
			b.Fatal(err)
		}
		if _, err := fr.ReadFrame(); err != nil {
			b.Fatal(err)
		}
	}
}
