package httpapi

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkHTTPSend measures one POST of a 10-message batch (100-byte
// payloads) through the gateway to a real broker.
func BenchmarkHTTPSend(b *testing.B) {
	h := start(b, Config{})
	tok := h.root()
	h.expect(http.StatusOK, "POST", "/streams", tok, `{"name":"bench"}`)
	h.expect(http.StatusOK, "POST", "/streams/bench/topics", tok, `{"name":"t","partitions_count":1}`)
	payload := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 100)))
	var body strings.Builder
	body.WriteString(`{"partitioning":{"kind":"partition_id","value":0},"messages":[`)
	for i := range 10 {
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteString(`{"payload":"` + payload + `"}`)
	}
	body.WriteString(`]}`)
	send := body.String()
	for b.Loop() {
		h.expect(http.StatusCreated, "POST", "/streams/bench/topics/t/messages", tok, send)
	}
}

// BenchmarkHTTPPoll measures one GET of 10 messages.
func BenchmarkHTTPPoll(b *testing.B) {
	h := start(b, Config{})
	tok := h.root()
	h.expect(http.StatusOK, "POST", "/streams", tok, `{"name":"bench"}`)
	h.expect(http.StatusOK, "POST", "/streams/bench/topics", tok, `{"name":"t","partitions_count":1}`)
	messages := make([]map[string]any, 10)
	for i := range messages {
		messages[i] = map[string]any{"payload": base64.StdEncoding.EncodeToString([]byte(strings.Repeat("y", 100)))}
	}
	h.expect(http.StatusCreated, "POST", "/streams/bench/topics/t/messages", tok, map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": 0}, "messages": messages})
	for b.Loop() {
		h.expect(http.StatusOK, "GET", "/streams/bench/topics/t/messages?count=10", tok, nil)
	}
}

// BenchmarkDecodePolled measures turning a poll reply into JSON records.
func BenchmarkDecodePolled(b *testing.B) {
	reply := samplePollReply(b)
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if _, err := decodePolled(reply); err != nil {
			b.Fatal(err)
		}
	}
}
