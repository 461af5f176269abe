package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// golden builds a 256-byte header from explicit (offset, bytes) pieces.
func golden(pieces map[int][]byte) [HeaderSize]byte {
	var b [HeaderSize]byte
	for off, p := range pieces {
		copy(b[off:], p)
	}
	return b
}

func TestRequestHeaderGolden(t *testing.T) {
	h := RequestHeader{
		Size:      256 + 3,
		Client:    Uint128{Lo: 0x0102030405060708, Hi: 0x1112131415161718},
		Request:   7,
		Operation: OpNonReplicated,
		Session:   9,
		Code:      CodeGetStream,
	}
	var got [HeaderSize]byte
	h.Encode(&got)
	want := golden(map[int][]byte{
		48:  {0x03, 0x01, 0, 0}, // size 259
		60:  {5},                // command Request
		128: {8, 7, 6, 5, 4, 3, 2, 1, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11},
		168: {7},
		176: {2},
		184: {9},
		196: {200, 0, 0, 0}, // code 200 GetStream in reserved[0..4]
	})
	if got != want {
		t.Fatalf("request header\n got % x\nwant % x", got, want)
	}
	var back RequestHeader
	if err := back.Decode(got[:]); err != nil || back != h {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	// A replicated operation never carries the code.
	h.Operation, h.Code = OpCreateStream, CodeCreateStream
	h.Encode(&got)
	if !bytes.Equal(got[196:200], []byte{0, 0, 0, 0}) || got[176] != 128 {
		t.Fatalf("code written for replicated op: % x", got[176:200])
	}
	if err := back.Decode(got[:]); err != nil || back.Code != 0 {
		t.Fatalf("decode: %v code %v", err, back.Code)
	}
}

func TestReplyHeaderGolden(t *testing.T) {
	h := ReplyHeader{
		Size:            256 + 12,
		RequestChecksum: Uint128{Lo: 0xAA},
		Client:          Uint128{Lo: 5},
		Op:              3,
		Commit:          4,
		Timestamp:       6,
		Request:         0x0807,
		Operation:       OpCreateTopicWithAssignments,
	}
	var got [HeaderSize]byte
	h.Encode(&got)
	want := golden(map[int][]byte{
		48: {12 + 0, 1, 0, 0}, 60: {8}, 128: {0xAA}, 160: {5}, 176: {3}, 184: {4}, 192: {6},
		200: {7, 8}, 208: {64},
	})
	if got != want {
		t.Fatalf("reply header\n got % x\nwant % x", got, want)
	}
	var back ReplyHeader
	if err := back.Decode(got[:]); err != nil || back != h {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	h.Status, h.Size = ErrStreamIdNotFound, 256
	h.Encode(&got)
	if !bytes.Equal(got[216:220], []byte{0xF1, 0x03, 0, 0}) {
		t.Fatalf("status bytes % x", got[216:220])
	}
	if err := back.Decode(got[:]); err != nil || back.Status != 1009 {
		t.Fatalf("status decode %v %v", err, back.Status)
	}
	h.Size = 300 // status with a body is malformed
	h.Encode(&got)
	if err := back.Decode(got[:]); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("status+body: %v", err)
	}
	h.Size, h.Status, h.Operation = 256, 0, 99
	h.Encode(&got)
	if err := back.Decode(got[:]); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("undefined operation: %v", err)
	}
}

func TestEvictionHeaderGolden(t *testing.T) {
	h := EvictionHeader{Client: Uint128{Lo: 1}, ServerProtocolVersion: ProtocolVersionMax,
		ServerProtocolVersionMin: ProtocolVersionMin, Reason: EvictIncompatibleProtocol}
	var got [HeaderSize]byte
	h.Encode(&got)
	want := golden(map[int][]byte{48: {0, 1, 0, 0}, 60: {13}, 128: {1}, 144: {0, 0x2C, 0, 0}, 148: {0, 0x2C, 0, 0}, 255: {14}})
	if got != want {
		t.Fatalf("eviction\n got % x\nwant % x", got, want)
	}
	var back EvictionHeader
	if err := back.Decode(got[:]); err != nil || back != h {
		t.Fatalf("round trip %v %+v", err, back)
	}
	bad := got
	bad[255] = byte(EvictNoSession) // window on a non-14 reason
	if err := back.Decode(bad[:]); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("window on reason 1: %v", err)
	}
	bad = got
	bad[200] = 1
	if err := back.Decode(bad[:]); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("reserved: %v", err)
	}
	bad = got
	bad[255] = 0
	if err := back.Decode(bad[:]); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("reason 0: %v", err)
	}
	bad = got
	bad[48] = 1 // size 257
	if err := back.Decode(bad[:]); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("size: %v", err)
	}
}

func TestHeaderDecodeRejects(t *testing.T) {
	var h RequestHeader
	if err := h.Decode(make([]byte, 255)); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short: %v", err)
	}
	var b [HeaderSize]byte
	(&RequestHeader{Size: 256, Operation: OpNonReplicated, Client: Uint128{Lo: 1}}).Encode(&b)
	b[60] = 8
	if err := h.Decode(b[:]); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("command: %v", err)
	}
	b[60] = 5
	b[48], b[49] = 255, 0 // size 255
	if err := h.Decode(b[:]); !errors.Is(err, ErrBadFrameSize) {
		t.Fatalf("size: %v", err)
	}
}

func TestValidateRequest(t *testing.T) {
	ok := []RequestHeader{
		{Client: Uint128{Hi: 1}, Operation: OpRegister},
		{Client: Uint128{Lo: 1}, Operation: OpNonReplicated},
		{Client: Uint128{Lo: 1}, Operation: OpNonReplicated, Session: 3, Request: 9},
		{Client: Uint128{Lo: 1}, Operation: OpCreateStream, Session: 1, Request: 1},
		{Client: Uint128{Lo: 1}, Operation: OpLogout, Session: 1, Request: 1},
		{Client: Uint128{Lo: 1}, Operation: OpTruncatePartition, Session: 1, Request: 1},
	}
	for i := range ok {
		if err := ValidateRequest(&ok[i]); err != nil {
			t.Errorf("valid %d rejected: %v", i, err)
		}
	}
	bad := []RequestHeader{
		{Operation: OpNonReplicated},
		{Client: Uint128{Lo: 1}, Operation: OpReserved},
		{Client: Uint128{Lo: 1}, Operation: 4, Session: 1, Request: 1},
		{Client: Uint128{Lo: 1}, Operation: OpRegister, Session: 1},
		{Client: Uint128{Lo: 1}, Operation: OpRegister, Request: 1},
		{Client: Uint128{Lo: 1}, Operation: OpCreateStream, Request: 1},
		{Client: Uint128{Lo: 1}, Operation: OpSendMessages, Session: 1},
		{Client: Uint128{Lo: 1}, Operation: OpLogout},
	}
	for i := range bad {
		if err := ValidateRequest(&bad[i]); !errors.Is(err, ErrBadHeader) {
			t.Errorf("invalid %d accepted: %v", i, err)
		}
	}
}

func requestFrame(t *testing.T, body []byte) []byte {
	t.Helper()
	h := RequestHeader{Client: Uint128{Lo: 42}, Operation: OpNonReplicated, Code: CodePing, Request: 1}
	frame, err := AppendRequestFrame(nil, &h, body)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

func TestReadFrame(t *testing.T) {
	body := []byte("hello body")
	frame := requestFrame(t, body)
	stream := append(append([]byte{}, frame...), frame...)
	r := bytes.NewReader(stream)
	buf := make([]byte, 1024)
	for i := 0; i < 2; i++ {
		header, gotBody, err := ReadFrame(r, buf)
		if err != nil {
			t.Fatal(err)
		}
		if &header[0] != &buf[0] || !bytes.Equal(gotBody, body) || !bytes.Equal(header, frame[:256]) {
			t.Fatalf("frame %d: buffer not reused or content wrong", i)
		}
	}
	if _, _, err := ReadFrame(r, buf); err != io.EOF {
		t.Fatalf("clean end: %v", err)
	}
	// A small buffer grows to exactly the frame size.
	header, gotBody, err := ReadFrame(bytes.NewReader(frame), make([]byte, 10))
	if err != nil || len(header) != 256 || !bytes.Equal(gotBody, body) || cap(gotBody) != len(body) {
		t.Fatalf("grow: %v", err)
	}
	// Cut anywhere inside the frame.
	for _, cut := range []int{1, 255, 256, len(frame) - 1} {
		if _, _, err := ReadFrame(bytes.NewReader(frame[:cut]), nil); !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
	for _, size := range []uint32{0, 255, MaxFrameSize + 1} {
		bad := append([]byte{}, frame...)
		bad[48], bad[49], bad[50], bad[51] = byte(size), byte(size>>8), byte(size>>16), byte(size>>24)
		if _, _, err := ReadFrame(bytes.NewReader(bad), nil); !errors.Is(err, ErrBadFrameSize) {
			t.Fatalf("size %d: %v", size, err)
		}
	}
	bad := append([]byte{}, frame...)
	bad[60] = 30
	if _, _, err := ReadFrame(bytes.NewReader(bad), nil); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("command 30: %v", err)
	}
	if _, _, err := ReadFrameLimit(bytes.NewReader(frame), nil, 260); !errors.Is(err, ErrBadFrameSize) {
		t.Fatalf("limit: %v", err)
	}
}

func TestRequestChecksum(t *testing.T) {
	body := []byte("abc")
	c := RequestChecksum(body)
	if c.Hi != 0 || c.Lo == 0 {
		t.Fatalf("checksum %+v", c)
	}
	// XXH3-64 of the empty input, seed 0, is a published constant.
	if RequestChecksum(nil).Lo != 0x2D06800538D394C2 {
		t.Fatalf("xxh3(\"\") = %x", RequestChecksum(nil).Lo)
	}
	if !VerifyRequestChecksum(Uint128{}, body) || !VerifyRequestChecksum(c, body) || VerifyRequestChecksum(c, []byte("abd")) {
		t.Fatal("verify")
	}
}

type repeatReader struct {
	frame []byte
	pos   int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.frame[r.pos:])
	r.pos = (r.pos + n) % len(r.frame)
	return n, nil
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	var out [HeaderSize]byte
	req := RequestHeader{Size: 300, Client: Uint128{Lo: 1}, Operation: OpNonReplicated, Code: CodePollMessages, Request: 1}
	reply := ReplyHeader{Size: 256, Request: 1, Operation: OpNonReplicated}
	var rb RequestHeader
	var pb ReplyHeader
	if n := testing.AllocsPerRun(100, func() {
		req.Encode(&out)
		if err := rb.Decode(out[:]); err != nil {
			t.Fatal(err)
		}
		reply.Encode(&out)
		if err := pb.Decode(out[:]); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("header encode/decode allocates %v", n)
	}
	r := &repeatReader{frame: requestFrame(t, make([]byte, 500))}
	buf := make([]byte, 4096)
	if n := testing.AllocsPerRun(100, func() {
		if _, _, err := ReadFrame(r, buf); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("ReadFrame allocates %v", n)
	}
	dst := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { dst = req.AppendTo(dst[:0]) }); n != 0 {
		t.Fatalf("AppendTo allocates %v", n)
	}
}

func BenchmarkReadFrame(b *testing.B) {
	h := RequestHeader{Client: Uint128{Lo: 42}, Operation: OpNonReplicated, Code: CodePing, Request: 1}
	frame, _ := AppendRequestFrame(nil, &h, make([]byte, 1000))
	r := &repeatReader{frame: frame}
	buf := make([]byte, 4096)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ReadFrame(r, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRequestHeaderRoundTrip(b *testing.B) {
	var out [HeaderSize]byte
	h := RequestHeader{Size: 300, Client: Uint128{Lo: 1}, Operation: OpSendMessages, Session: 1, Request: 1}
	var back RequestHeader
	b.ReportAllocs()
	for b.Loop() {
		h.Encode(&out)
		if err := back.Decode(out[:]); err != nil {
			b.Fatal(err)
		}
	}
}
