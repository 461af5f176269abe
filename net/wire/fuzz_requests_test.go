package wire

import (
	"bytes"
	"testing"
)

// FuzzRequestBodies decodes data[1:] as the body of the command whose
// index in Codes() is data[0] (mod the count). Whatever decodes must
// re-encode, and the re-encoding must decode and re-encode to the same
// bytes.
func FuzzRequestBodies(f *testing.F) {
	codes := Codes()
	index := map[Code]byte{}
	for i, c := range codes {
		index[c] = byte(i)
	}
	for _, r := range sampleRequests() {
		body, err := r.AppendTo(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte{index[r.Code()]}, body...))
		// Trailing bytes after the last field (ignored, as by Iggy's
		// server; DeleteTopic is sent so with a partitions count).
		f.Add(append(append([]byte{index[r.Code()]}, body...), 3, 0, 0, 0))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		code := codes[int(data[0])%len(codes)]
		r, ok := NewRequest(code)
		if !ok {
			_, _ = ParseLogin(data[1:])
			return
		}
		if r.Decode(data[1:]) != nil {
			return
		}
		first, err := r.AppendTo(nil)
		if err != nil {
			t.Fatalf("%v: decoded request does not encode: %v", code, err)
		}
		if len(first) > len(data)-1 {
			t.Fatalf("%v: decoded from %d bytes, re-encodes to %d", code, len(data)-1, len(first))
		}
		again, _ := NewRequest(code)
		if err := again.Decode(first); err != nil {
			t.Fatalf("%v: re-encoded body does not decode: %v", code, err)
		}
		second, err := again.AppendTo(nil)
		if err != nil || !bytes.Equal(first, second) {
			t.Fatalf("%v: encode(decode(encode(x))) != encode(x): %v", code, err)
		}
		if code == CodeCreateTopic {
			if block, err := r.(*CreateTopicRequest).OptionsBlock(); err == nil {
				_, _ = ParseTopicOptions(block, r.(*CreateTopicRequest).PartitionsCount)
			}
		}
		if code == CodeLoginRegister || code == CodeLoginRegisterWithPat {
			if _, err := ParseLogin(data[1:]); err != nil {
				t.Fatalf("login decoded but ParseLogin failed: %v", err)
			}
		}
	})
}
