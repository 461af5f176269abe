package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestNewRequestHeader(t *testing.T) {
	client := Uint128{Lo: 9}
	h, err := NewRequestHeader(CodeGetStream, client, 4, 2)
	if err != nil || h.Operation != OpNonReplicated || h.Code != CodeGetStream || h.Session != 4 || h.Request != 2 {
		t.Fatalf("NR header %+v %v", h, err)
	}
	h, _ = NewRequestHeader(CodeCreateTopic, client, 4, 2)
	if h.Operation != OpCreateTopic || h.Code != 0 {
		t.Fatalf("metadata header %+v", h)
	}
	h, _ = NewRequestHeader(CodeLoginRegisterWithPat, client, 4, 2)
	if h.Operation != OpRegister || h.Session != 0 || h.Request != 0 || ValidateRequest(&h) != nil {
		t.Fatalf("register header %+v", h)
	}
	if _, err := NewRequestHeader(7, client, 0, 0); !errors.Is(err, ErrBadValue) {
		t.Fatal("unknown code accepted")
	}
}

func TestAppendRequestFrame(t *testing.T) {
	h, _ := NewRequestHeader(CodeCreateStream, Uint128{Lo: 1}, 3, 1)
	req := CreateStreamRequest{Name: "orders"}
	frame, err := AppendRequest([]byte("prefix"), &h, &req, true)
	if err != nil {
		t.Fatal(err)
	}
	frame = frame[len("prefix"):]
	header, body, err := ReadFrame(bytes.NewReader(frame), nil)
	if err != nil {
		t.Fatal(err)
	}
	var back RequestHeader
	if err := back.Decode(header); err != nil || back != h || back.Size != uint32(len(frame)) {
		t.Fatalf("header %+v %v", back, err)
	}
	if back.RequestChecksum != RequestChecksum(body) || back.RequestChecksum.IsZero() || !VerifyRequestChecksum(back.RequestChecksum, body) {
		t.Fatal("checksum not stamped")
	}
	var got CreateStreamRequest
	if err := got.Decode(body); err != nil || got.Name != "orders" {
		t.Fatal("body")
	}
	dst := make([]byte, 0, 4096)
	ping, _ := NewRequestHeader(CodePing, Uint128{Lo: 1}, 0, 1)
	if n := testing.AllocsPerRun(100, func() {
		if dst, err = AppendRequest(dst[:0], &ping, &PingRequest{}, false); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("AppendRequest allocates %v", n)
	}
	if len(dst) != 256 || dst[176] != 2 || dst[196] != 1 {
		t.Fatalf("ping frame % x", dst[170:200])
	}
}

func TestAppendReplies(t *testing.T) {
	h := ReplyHeader{Request: 5, Operation: ResultReplyOperation(OpCreateStream)}
	details := StreamDetails{Stream: Stream{ID: 0, Name: "s"}}
	frame, err := AppendResultReply(nil, &h, details.AppendTo)
	if err != nil {
		t.Fatal(err)
	}
	header, body, err := ReadFrame(bytes.NewReader(frame), nil)
	if err != nil {
		t.Fatal(err)
	}
	var rh ReplyHeader
	if err := rh.Decode(header); err != nil || rh.Request != 5 || rh.Operation != OpCreateStream {
		t.Fatal(err)
	}
	payload, err := ReplyPayload(rh.Operation, rh.Status, body)
	if err != nil {
		t.Fatal(err)
	}
	var back StreamDetails
	if err := back.Decode(payload); err != nil || back.Name != "s" {
		t.Fatal("payload")
	}
	h = ReplyHeader{Request: 6, Operation: ResultReplyOperation(OpDeleteSegments)}
	frame, _ = AppendRejectionReply(nil, &h, ErrTransientNotAccepted)
	if frame[208] != 68 || len(frame) != 268 {
		t.Fatalf("rejection frame op %d len %d", frame[208], len(frame))
	}
	if _, err := ReplyPayload(Operation(frame[208]), 0, frame[256:]); !errors.Is(err, ErrTransientNotAccepted) {
		t.Fatal("rejection payload")
	}
	h = ReplyHeader{Request: 7, Operation: OpSendMessages}
	frame = AppendDenialReply(nil, &h, ErrUnauthorized)
	if err := rh.Decode(frame); err != nil || rh.Status != ErrUnauthorized || len(frame) != 256 {
		t.Fatal("denial")
	}
	h = ReplyHeader{Status: ErrUnauthorized}
	if _, err := AppendRawReply(nil, &h, func(dst []byte) ([]byte, error) { return append(dst, 1), nil }); !errors.Is(err, ErrBadHeader) {
		t.Fatal("status with body accepted")
	}
	h = ReplyHeader{Operation: OpSendMessages}
	confirm := SendMessagesReply{}
	frame, err = AppendRawReply(nil, &h, func(dst []byte) ([]byte, error) { return confirm.AppendTo(dst), nil })
	if err != nil || len(frame) != 260 {
		t.Fatalf("send reply frame %d %v", len(frame), err)
	}
}
