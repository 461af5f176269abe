package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

func TestResolveTransport(t *testing.T) {
	cases := []struct {
		address  string
		opts     []Option
		want     Transport
		hostPort string
	}{
		{"127.0.0.1:8090", nil, TransportTCP, "127.0.0.1:8090"},
		{"tcp://h:1", nil, TransportTCP, "h:1"},
		{"tls://h:1", nil, TransportTLS, "h:1"},
		{"ws://h:1/", nil, TransportWebSocket, "h:1"},
		{"WSS://h:1", nil, TransportWebSocketTLS, "h:1"},
		{"quic://h:1", nil, TransportQUIC, "h:1"},
		{"h:1", []Option{WithTLS(nil)}, TransportTLS, "h:1"},
		{"h:1", []Option{WithQUIC(nil)}, TransportQUIC, "h:1"},
		{"h:1", []Option{WithTransport(TransportWebSocket)}, TransportWebSocket, "h:1"},
		// The scheme wins over options.
		{"ws://h:1", []Option{WithQUIC(nil)}, TransportWebSocket, "h:1"},
	}
	for _, c := range cases {
		o := defaultOptions()
		for _, opt := range c.opts {
			opt(&o)
		}
		got, hostPort, err := resolveTransport(c.address, &o)
		if err != nil || got != c.want || hostPort != c.hostPort {
			t.Errorf("%s: %q %q %v, want %q %q", c.address, got, hostPort, err, c.want, c.hostPort)
		}
	}
	if _, _, err := resolveTransport("udp://h:1", &options{}); !errors.Is(err, ErrUnknownTransport) {
		t.Errorf("udp scheme: %v", err)
	}
}

func TestTLSConfigServerName(t *testing.T) {
	o := defaultOptions()
	if cfg := tlsConfigFor(&o, "broker.example:8090"); cfg.ServerName != "broker.example" {
		t.Fatalf("server name %q", cfg.ServerName)
	}
}

func TestMessageIDText(t *testing.T) {
	for _, id := range []MessageID{{}, {Low: 1}, {Low: ^uint64(0)}, {Low: 5, High: 7}, {Low: ^uint64(0), High: ^uint64(0)}} {
		got, err := parseMessageID(messageIDText(id))
		if err != nil || got != id {
			t.Fatalf("%v: round trip %v, %v", id, got, err)
		}
	}
	for _, bad := range []string{"", "-1", "x", "340282366920938463463374607431768211456"} {
		if _, err := parseMessageID(bad); err == nil {
			t.Fatalf("%q parsed", bad)
		}
	}
}

func TestDecodeHTTPError(t *testing.T) {
	e, err := decodeHTTPError(404, []byte(`{"id":1009,"code":"stream_id_not_found","reason":"stream 7 not found","field":"stream_id"}`))
	if err != nil || e.Status != 404 || e.Reason != "stream 7 not found" || CodeOf(e) != wire.ErrStreamIdNotFound {
		t.Fatalf("%+v, %v", e, err)
	}
	if !errors.Is(e, wire.ErrStreamIdNotFound) {
		t.Fatal("HTTPError does not match its code")
	}
	for _, bad := range []string{"", "<html>", `{"id":0}`, `{"code":"x"}`} {
		if _, err := decodeHTTPError(502, []byte(bad)); err == nil {
			t.Fatalf("%q decoded as an Iggy error", bad)
		}
	}
}

// encodePolledJSON renders messages the way the REST API does (headers as
// entries), for round-trip tests.
func encodePolledJSON(partition uint32, current uint64, msgs []Message) []byte {
	type header struct {
		Checksum        uint64 `json:"checksum"`
		ID              string `json:"id"`
		Offset          uint64 `json:"offset"`
		Timestamp       uint64 `json:"timestamp"`
		OriginTimestamp uint64 `json:"origin_timestamp"`
	}
	type message struct {
		Header      header            `json:"header"`
		Payload     []byte            `json:"payload"`
		UserHeaders []headerEntryJSON `json:"user_headers"`
	}
	out := struct {
		PartitionID   uint32    `json:"partition_id"`
		CurrentOffset uint64    `json:"current_offset"`
		Messages      []message `json:"messages"`
	}{PartitionID: partition, CurrentOffset: current}
	for _, m := range msgs {
		mj := message{Header: header{m.Checksum, messageIDText(m.ID), m.Offset, m.Timestamp, m.OriginTimestamp}, Payload: m.Payload}
		for _, h := range m.Headers {
			mj.UserHeaders = append(mj.UserHeaders, headerEntryJSON{Key: headerItem(h.Key), Value: headerItem(h.Value)})
		}
		out.Messages = append(out.Messages, mj)
	}
	data, err := json.Marshal(out)
	if err != nil {
		panic(fmt.Sprintf("test encoder: %v", err)) // our own bug
	}
	return data
}

func TestDecodePolledJSONRoundTrip(t *testing.T) {
	msgs := []Message{
		{Offset: 3, ID: MessageID{Low: 9, High: 1}, Timestamp: 10, OriginTimestamp: 11, Checksum: 12, Payload: []byte("a"),
			Headers: []Header{StringHeader("k", "v"), {Key: StringValue("n"), Value: Uint32Value(5)}}},
		{Offset: 4, Payload: []byte{}},
	}
	got, err := decodePolledJSON(encodePolledJSON(2, 4, msgs))
	if err != nil || got.PartitionID != 2 || got.CurrentOffset != 4 || len(got.Messages) != 2 {
		t.Fatalf("%+v, %v", got, err)
	}
	for i := range msgs {
		g, w := got.Messages[i], msgs[i]
		if g.Offset != w.Offset || g.ID != w.ID || g.Timestamp != w.Timestamp || g.OriginTimestamp != w.OriginTimestamp ||
			g.Checksum != w.Checksum || !bytes.Equal(g.Payload, w.Payload) || len(g.Headers) != len(w.Headers) {
			t.Fatalf("message %d: %+v, want %+v", i, g, w)
		}
		for j := range w.Headers {
			if g.Headers[j].Key.Kind != w.Headers[j].Key.Kind || !bytes.Equal(g.Headers[j].Value.Data, w.Headers[j].Value.Data) {
				t.Fatalf("message %d header %d: %+v", i, j, g.Headers[j])
			}
		}
	}
	// The raw TLV form of user headers decodes to the same headers.
	block, err := AppendHeaders(nil, msgs[0].Headers)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(block)
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := decodeHeadersJSON(raw, &m); err != nil || m.HeadersErr != nil || len(m.Headers) != 2 || m.Headers[1].Value.Kind != KindUint32 {
		t.Fatalf("raw header block: %+v, %v", m, err)
	}
}

// FuzzDecodeHTTPReplies: the REST reply decoders never panic on any body,
// and a decoded poll reply re-encodes to one that decodes the same.
func FuzzDecodeHTTPReplies(f *testing.F) {
	f.Add(encodePolledJSON(0, 1, []Message{{Offset: 1, ID: MessageID{Low: 2}, Payload: []byte("p"), Headers: []Header{StringHeader("a", "b")}}}))
	f.Add([]byte(`{"partition_id":1,"current_offset":0,"messages":[{"header":{"id":"1"},"payload":"","user_headers":"AA=="}]}`))
	f.Add([]byte(`{"id":1009,"code":"stream_id_not_found","reason":"r"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = decodeHTTPError(400, data) // only must not panic
		polled, err := decodePolledJSON(data)
		if err != nil {
			return
		}
		again, err := decodePolledJSON(encodePolledJSON(polled.PartitionID, polled.CurrentOffset, polled.Messages))
		if err != nil || len(again.Messages) != len(polled.Messages) {
			t.Fatalf("re-decode: %v", err)
		}
		for i := range polled.Messages {
			if again.Messages[i].ID != polled.Messages[i].ID || !bytes.Equal(again.Messages[i].Payload, polled.Messages[i].Payload) ||
				len(again.Messages[i].Headers) != len(polled.Messages[i].Headers) {
				t.Fatalf("message %d changed on re-decode", i)
			}
		}
	})
}
