package wire

import (
	"bytes"
	"errors"
	"testing"
)

func readOne(t *testing.T, frame []byte) (header, body []byte) {
	t.Helper()
	header, body, err := ReadFrame(bytes.NewReader(frame), nil)
	if err != nil {
		t.Fatal(err)
	}
	return header, body
}

func TestDecodeServerFrame(t *testing.T) {
	ev := EvictionHeader{Client: Uint128{Lo: 1}, Reason: EvictInvalidCredentials}
	_, _, err := DecodeServerFrame(readOne(t, ev.AppendTo(nil)))
	var evErr *EvictionError
	if !errors.As(err, &evErr) || !errors.Is(err, ErrInvalidCredentials) || evErr.Header.Reason != EvictInvalidCredentials {
		t.Fatalf("eviction: %v", err)
	}
	ev = EvictionHeader{Client: Uint128{Lo: 1}, Reason: EvictIncompatibleProtocol, ServerProtocolVersion: ProtocolVersion, ServerProtocolVersionMin: ProtocolVersion}
	if _, _, err := DecodeServerFrame(readOne(t, ev.AppendTo(nil))); !errors.Is(err, ErrIncompatibleProtocolVersion) {
		t.Fatalf("eviction 14: %v", err)
	}

	h := ReplyHeader{Request: 0, Operation: OpRegister}
	reg := RegisterReply{UserID: 0, Session: 5, ServerProtocolVersion: ProtocolVersion, ServerVersion: ServerVersion}
	frame, err := AppendResultReply(nil, &h, reg.AppendTo)
	if err != nil {
		t.Fatal(err)
	}
	got, payload, err := DecodeServerFrame(readOne(t, frame))
	if err != nil || got.Operation != OpRegister {
		t.Fatal(err)
	}
	var back RegisterReply
	if err := back.Decode(payload); err != nil || back.Session != 5 {
		t.Fatalf("register payload %v", err)
	}

	h = ReplyHeader{Request: 3, Operation: OpCreateStream}
	frame, _ = AppendRejectionReply(nil, &h, ErrStreamNameAlreadyExists)
	if got, _, err := DecodeServerFrame(readOne(t, frame)); !errors.Is(err, ErrStreamNameAlreadyExists) || got.Request != 3 {
		t.Fatalf("rejection: %v", err)
	}
	h = ReplyHeader{Request: 4, Operation: OpNonReplicated}
	frame = AppendDenialReply(nil, &h, ErrUnauthenticated)
	if _, _, err := DecodeServerFrame(readOne(t, frame)); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("denial: %v", err)
	}
	header, body := readOne(t, frame)
	if _, _, err := DecodeServerFrame(header, append(body, 1)); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("size mismatch: %v", err)
	}
	req := RequestHeader{Size: 256, Client: Uint128{Lo: 1}, Operation: OpNonReplicated}
	if _, _, err := DecodeServerFrame(req.AppendTo(nil), nil); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("request from server: %v", err)
	}
	if _, _, err := DecodeServerFrame(nil, nil); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short: %v", err)
	}
	if v := DefaultClientVersionInfo(); !AcceptsProtocolVersion(v.ProtocolVersion) || v.SDKName == "" {
		t.Fatal("default client version")
	}
}
