package server_test

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/stratabroker/strata/server"
)

func TestQUICTransport(t *testing.T) {
	ts := startServer(t, t.TempDir(), "STRATA_QUIC_ENABLED=true", "STRATA_QUIC_ADDRESS=127.0.0.1:0")
	addr := boundAddress(t, readCurrentConfig(t, ts.dir), "quic")
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(c, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{server.QUICProtocol}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	r := &rawConn{t: t, counter: 1}
	r.client[0] = 9
	roundTrip := func(frame []byte) rawReply {
		t.Helper()
		stream, err := qc.OpenStreamSync(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Write(frame); err != nil {
			t.Fatal(err)
		}
		_ = stream.Close()
		data, err := io.ReadAll(stream)
		if err != nil || len(data) < 256 {
			t.Fatalf("reply: %v, %d bytes", err, len(data))
		}
		if size := binary.LittleEndian.Uint32(data[48:]); int(size) != len(data) {
			t.Fatalf("stream carried %d bytes, frame size %d", len(data), size)
		}
		return rawReply{command: data[60], request: binary.LittleEndian.Uint64(data[200:]), operation: data[208],
			status: binary.LittleEndian.Uint32(data[216:]), reason: data[255], body: data[256:]}
	}
	if reply := roundTrip(r.requestFrame(2, 1, 1, 0, false, nil)); reply.command != 8 || reply.status != 0 {
		t.Fatalf("ping over quic: %+v", reply)
	}
	login := roundTrip(r.requestFrame(1, 0, 0, 0, true, loginBody("iggy", "iggy")))
	if login.status != 0 || len(login.body) < 16 {
		t.Fatalf("login over quic: %+v", login)
	}
	session := binary.LittleEndian.Uint64(login.body[8:])
	created := roundTrip(r.requestFrame(128, 0, 1, session, true, []byte{4, 'q', 'u', 'i', 'c'}))
	if created.status != 0 || binary.LittleEndian.Uint32(created.body) != 0 {
		t.Fatalf("create stream over quic: %+v", created)
	}
	// The session lives with the QUIC connection across streams.
	me := roundTrip(r.requestFrame(2, 20, 2, session, false, nil))
	if me.status != 0 || me.body[8] != 2 {
		t.Fatalf("GetMe over quic: status %d transport %d", me.status, me.body[8])
	}
}
