package server_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestWebSocketTransport(t *testing.T) {
	ts := startServer(t, t.TempDir(), "STRATA_WEBSOCKET_ENABLED=true", "STRATA_WEBSOCKET_ADDRESS=127.0.0.1:0")
	current := readCurrentConfig(t, ts.dir)
	addr := boundAddress(t, current, "websocket")
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(c, "ws://"+addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	r := &rawConn{t: t, counter: 1}
	r.client[0] = 7
	roundTrip := func(frame []byte) rawReply {
		t.Helper()
		if err := ws.Write(c, websocket.MessageBinary, frame); err != nil {
			t.Fatal(err)
		}
		typ, data, err := ws.Read(c)
		if err != nil || typ != websocket.MessageBinary || len(data) < 256 {
			t.Fatalf("reply: %v %v %d bytes", typ, err, len(data))
		}
		if size := binary.LittleEndian.Uint32(data[48:]); int(size) != len(data) {
			t.Fatalf("reply message of %d bytes carries size %d", len(data), size)
		}
		return rawReply{command: data[60], request: binary.LittleEndian.Uint64(data[200:]), operation: data[208],
			status: binary.LittleEndian.Uint32(data[216:]), reason: data[255], body: data[256:]}
	}
	if reply := roundTrip(r.requestFrame(2, 1, 1, 0, false, nil)); reply.command != 8 || reply.status != 0 {
		t.Fatalf("ping over websocket: %+v", reply)
	}
	login := roundTrip(r.requestFrame(1, 0, 0, 0, true, loginBody("iggy", "iggy")))
	if login.status != 0 || len(login.body) < 16 {
		t.Fatalf("login over websocket: %+v", login)
	}
	session := binary.LittleEndian.Uint64(login.body[8:])
	created := roundTrip(r.requestFrame(128, 0, 1, session, true, []byte{2, 'w', 's'}))
	if created.status != 0 || binary.LittleEndian.Uint32(created.body) != 0 {
		t.Fatalf("create stream over websocket: %+v", created)
	}
	if streams, err := ts.connect().GetStreams(ctx(t)); err != nil || len(streams) != 1 || streams[0].Name != "ws" {
		t.Fatalf("stream created over websocket not seen over tcp: %+v %v", streams, err)
	}
	// A text message closes the connection.
	if err := ws.Write(c, websocket.MessageText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(c); websocket.CloseStatus(err) != websocket.StatusUnsupportedData {
		t.Fatalf("text message: %v", err)
	}
}
