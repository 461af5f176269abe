package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func FuzzReadFrame(f *testing.F) {
	h := RequestHeader{Client: Uint128{Lo: 1}, Operation: OpNonReplicated, Code: CodePing, Request: 1}
	frame, _ := AppendRequestFrame(nil, &h, []byte("body"))
	f.Add(frame)
	f.Add(frame[:100])
	f.Add(append(append([]byte{}, frame...), frame...))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		buf := make([]byte, 300)
		consumed := 0
		for {
			header, body, err := ReadFrame(r, buf)
			if err != nil {
				if err == io.EOF && consumed != len(data) {
					t.Fatalf("EOF after %d of %d bytes", consumed, len(data))
				}
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrBadFrameSize) && !errors.Is(err, ErrBadHeader) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			size := int(PeekSize(header))
			if len(header) != HeaderSize || len(body) != size-HeaderSize {
				t.Fatalf("frame lengths %d/%d for size %d", len(header), len(body), size)
			}
			if !bytes.Equal(header, data[consumed:consumed+HeaderSize]) || !bytes.Equal(body, data[consumed+HeaderSize:consumed+size]) {
				t.Fatal("frame content differs from input")
			}
			consumed += size
		}
	})
}

func FuzzDecodeRequestHeader(f *testing.F) {
	var b [HeaderSize]byte
	(&RequestHeader{Size: 256, Client: Uint128{Lo: 1}, Operation: OpNonReplicated, Code: CodeGetStats}).Encode(&b)
	f.Add(b[:])
	(&ReplyHeader{Size: 260, Operation: OpCreateStream, Request: 3}).Encode(&b)
	f.Add(b[:])
	(&EvictionHeader{Client: Uint128{Lo: 1}, Reason: EvictStaleClient}).Encode(&b)
	f.Add(b[:])
	f.Fuzz(func(t *testing.T, data []byte) {
		var out [HeaderSize]byte
		var req RequestHeader
		if err := req.Decode(data); err == nil {
			_ = ValidateRequest(&req)
			req.Encode(&out)
			var again RequestHeader
			if err := again.Decode(out[:]); err != nil || again != req {
				t.Fatalf("request round trip: %v %+v != %+v", err, again, req)
			}
		}
		var reply ReplyHeader
		if err := reply.Decode(data); err == nil {
			reply.Encode(&out)
			var again ReplyHeader
			if err := again.Decode(out[:]); err != nil || again != reply {
				t.Fatalf("reply round trip: %v", err)
			}
		}
		if len(data) >= HeaderSize {
			_, _, _ = DecodeServerFrame(data[:HeaderSize], data[HeaderSize:])
		}
		var ev EvictionHeader
		if err := ev.Decode(data); err == nil {
			ev.Encode(&out)
			var again EvictionHeader
			if err := again.Decode(out[:]); err != nil || again != ev {
				t.Fatalf("eviction round trip: %v", err)
			}
			_ = ev.Reason.SDKError(ev.ServerProtocolVersion, ev.ServerProtocolVersionMin)
		}
	})
}
