package vsr

import (
	"bytes"
	"errors"
	"testing"
)

func sampleMessage() *Message {
	m := &Message{Header: Header{
		Command: CommandPrepare, Cluster: 7, Replica: 2, View: 3, LogView: 2, Op: 99, Commit: 97,
		Timestamp: 12345, Request: 4, Session: 1, Operation: OperationUserMin, CheckpointOp: 64,
		Client: Uint128{Lo: 5, Hi: 6}, Parent: Uint128{Lo: 9}, Context: Uint128{Hi: 1},
	}, Body: []byte("hello")}
	m.Seal()
	return m
}

func TestMessageRoundTrip(t *testing.T) {
	m := sampleMessage()
	buf := m.Encode(nil)
	if len(buf) != m.EncodedSize() {
		t.Fatalf("encoded %d bytes, want %d", len(buf), m.EncodedSize())
	}
	var got Message
	if err := got.Decode(buf); err != nil {
		t.Fatal(err)
	}
	if got.Header != m.Header || !bytes.Equal(got.Body, m.Body) || !got.Valid() {
		t.Fatalf("round trip changed the message: %+v", got)
	}
	c := m.Clone()
	c.Body[0] = 'j'
	if m.Body[0] != 'h' {
		t.Fatal("Clone shares the body")
	}
	for i := range buf {
		bad := append([]byte(nil), buf...)
		bad[i] ^= 1
		if err := got.Decode(bad); err == nil {
			t.Fatalf("flipped bit in byte %d went unnoticed", i)
		}
	}
	if err := got.Decode(buf[:HeaderSize-1]); !errors.Is(err, ErrMessageShort) {
		t.Fatalf("short buffer: %v", err)
	}
}

func TestMessageEncodeAllocs(t *testing.T) {
	m := sampleMessage()
	buf := make([]byte, 0, 4096)
	var out Message
	allocs := testing.AllocsPerRun(100, func() {
		buf = m.Encode(buf[:0])
		if out.Decode(buf) != nil {
			t.Fatal("decode")
		}
	})
	if allocs > 1 {
		t.Fatalf("encode+decode allocates %.0f times", allocs)
	}
}

func FuzzMessageDecode(f *testing.F) {
	f.Add(sampleMessage().Encode(nil))
	f.Add(make([]byte, HeaderSize))
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if err := m.Decode(data); err != nil {
			return
		}
		again := m.Encode(nil)
		if !bytes.Equal(again, data[:m.Size]) {
			t.Fatalf("decode(encode) differs")
		}
		var m2 Message
		if err := m2.Decode(again); err != nil || m2.Header != m.Header {
			t.Fatalf("re-decode: %v", err)
		}
	})
}
