package httpapi

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"testing"
)

func TestPingNeedsNoToken(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	r := h.expect(http.StatusOK, "GET", "/ping", "", nil)
	if string(r.body) != "pong" {
		t.Fatalf("ping body %q", r.body)
	}
	e := h.expectError(http.StatusUnauthorized, 77, "GET", "/streams", "", nil)
	if e.Code != "access_token_missing" || e.Field != nil {
		t.Fatalf("missing token error %+v", e)
	}
	h.expectError(http.StatusUnauthorized, 78, "GET", "/streams", "not-a-jwt", nil)
}

// topicOptionValue reads one rendered topic option.
func topicOptionValue(t *testing.T, topic topicJSON, key string) optionValueJSON {
	t.Helper()
	v, ok := topic.Options[key]
	if !ok {
		t.Fatalf("topic options lack %s: %+v", key, topic.Options)
	}
	return v
}

func TestStreamTopicSendPollRoundTrip(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()

	var stream streamJSON
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "orders"}).decode(t, &stream)
	if stream.Name != "orders" || stream.TopicsCount != 0 || stream.Topics == nil {
		t.Fatalf("created stream %+v", stream)
	}
	var topic topicJSON
	h.expect(http.StatusOK, "POST", "/streams/orders/topics", tok, map[string]any{
		"name": "events", "partitions_count": 2, "compression_algorithm": "none",
		"message_expiry": "7 days", "max_topic_size": 0,
		"options": map[string]string{"durability": "persisted"},
	}).decode(t, &topic)
	if topic.Name != "events" || topic.PartitionsCount != 2 || topic.Partitions == nil || len(*topic.Partitions) != 2 {
		t.Fatalf("created topic %+v", topic)
	}
	if v := topicOptionValue(t, topic, "durability"); v.Value != "persisted" || !v.Explicit {
		t.Fatalf("durability option %+v", v)
	}
	if v := topicOptionValue(t, topic, "segment_size"); v.Explicit || v.Value != "1073741824" {
		t.Fatalf("derived segment_size %+v", v)
	}
	if topic.MessageExpiry != 7*24*3600*1_000_000 {
		t.Fatalf("message_expiry %d", topic.MessageExpiry)
	}

	// Send 5 messages to partition 1, one with user headers.
	const n = 5
	headers := []map[string]any{{
		"key":   map[string]string{"kind": "string", "value": base64.StdEncoding.EncodeToString([]byte("trace"))},
		"value": map[string]string{"kind": "uint32", "value": base64.StdEncoding.EncodeToString([]byte{7, 0, 0, 0})},
	}}
	messages := make([]map[string]any, 0, n)
	for i := range n {
		m := map[string]any{"id": i + 1, "payload": base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "payload-%d", i))}
		if i == 2 {
			m["user_headers"] = headers
		}
		messages = append(messages, m)
	}
	var sent struct {
		Confirmations []confirmationJSON `json:"confirmations"`
	}
	h.expect(http.StatusCreated, "POST", "/streams/orders/topics/events/messages", tok, map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": 1}, "messages": messages,
	}).decode(t, &sent)
	if len(sent.Confirmations) != 1 || sent.Confirmations[0].PartitionID != 1 || sent.Confirmations[0].BaseOffset != 0 {
		t.Fatalf("confirmations %+v", sent.Confirmations)
	}
	// A bad id is refused; a second batch with ?ack=none continues the
	// offsets (a UUID id, no headers).
	h.expectError(http.StatusBadRequest, 4, "POST", "/streams/0/topics/0/messages", tok, map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": 1},
		"messages":     []map[string]any{{"id": "0x", "payload": "eA=="}},
	})
	h.expect(http.StatusCreated, "POST", "/streams/0/topics/0/messages?ack=none", tok, map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": base64.StdEncoding.EncodeToString([]byte{1, 0, 0, 0})},
		"messages":     []map[string]any{{"id": "0f0e0d0c-0b0a-0908-0706-050403020100", "payload": "eA=="}},
	})

	var polled polledMessagesJSON
	h.expect(http.StatusOK, "GET", "/streams/orders/topics/events/messages?consumer_id=1&partition_id=1&kind=offset&value=0&count=100&consistency=linearizable", tok, nil).decode(t, &polled)
	if polled.PartitionID != 1 || polled.Count != n+1 || len(polled.Messages) != n+1 || polled.CurrentOffset != n {
		t.Fatalf("poll head %+v with %d messages", polled, len(polled.Messages))
	}
	for i, m := range polled.Messages[:n] {
		payload, err := base64.StdEncoding.DecodeString(m.Payload)
		if err != nil || string(payload) != fmt.Sprintf("payload-%d", i) {
			t.Fatalf("message %d payload %q %v", i, payload, err)
		}
		if m.Header.Offset != uint64(i) || m.Header.ID.String() != strconv.Itoa(i+1) || m.Header.PayloadLength != uint32(len(payload)) {
			t.Fatalf("message %d header %+v", i, m.Header)
		}
		entries, _ := m.UserHeaders.([]any)
		if (i == 2) != (len(entries) == 1) {
			t.Fatalf("message %d user headers %#v", i, m.UserHeaders)
		}
	}
	hdr := polled.Messages[2].UserHeaders.([]any)[0].(map[string]any)
	key := hdr["key"].(map[string]any)
	value := hdr["value"].(map[string]any)
	if key["kind"] != "string" || key["value"] != base64.StdEncoding.EncodeToString([]byte("trace")) ||
		value["kind"] != "uint32" || value["value"] != "BwAAAA==" {
		t.Fatalf("user header %#v", hdr)
	}
	if id := polled.Messages[n].Header.ID.String(); id != "20011376718272490338853433276725592320" {
		t.Fatalf("uuid id rendered as %s", id)
	}

	// Slices, strategies and partitions.
	h.expect(http.StatusOK, "GET", "/streams/orders/topics/events/messages?partition_id=1&kind=last&count=2", tok, nil).decode(t, &polled)
	if len(polled.Messages) != 2 || polled.Messages[0].Header.Offset != n-1 {
		t.Fatalf("last 2: %+v", polled.Messages)
	}
	h.expect(http.StatusOK, "GET", "/streams/orders/topics/events/messages?partition_id=1&kind=offset&value=3&count=1", tok, nil).decode(t, &polled)
	if len(polled.Messages) != 1 || polled.Messages[0].Header.Offset != 3 {
		t.Fatalf("offset 3: %+v", polled.Messages)
	}
	h.expect(http.StatusOK, "GET", "/streams/orders/topics/events/messages", tok, nil).decode(t, &polled)
	if polled.PartitionID != 0 || polled.Count != 0 || len(polled.Messages) != 0 {
		t.Fatalf("partition 0 should be empty: %+v", polled)
	}
	h.expectError(http.StatusBadRequest, 4, "GET", "/streams/orders/topics/events/messages?kind=sideways", tok, nil)
	h.expectError(http.StatusBadRequest, 5, "GET", "/streams/orders/topics/events/messages/flush/1/true", tok, nil)
	h.expectError(http.StatusNotFound, 3007, "GET", "/streams/orders/topics/events/messages?partition_id=9", tok, nil)

	// Keyed and balanced sends land somewhere valid.
	for _, p := range []map[string]any{{"kind": "balanced"}, {"kind": "messages_key", "value": base64.StdEncoding.EncodeToString([]byte("user-42"))}} {
		var c struct {
			Confirmations []confirmationJSON `json:"confirmations"`
		}
		h.expect(http.StatusCreated, "POST", "/streams/orders/topics/events/messages", tok, map[string]any{
			"partitioning": p, "messages": []map[string]any{{"payload": "eA=="}},
		}).decode(t, &c)
		if len(c.Confirmations) != 1 || c.Confirmations[0].PartitionID > 1 {
			t.Fatalf("%v: %+v", p, c.Confirmations)
		}
	}

	// Reads reflect the writes.
	var details streamJSON
	h.expect(http.StatusOK, "GET", "/streams/orders", tok, nil).decode(t, &details)
	if details.TopicsCount != 1 || details.Topics == nil || (*details.Topics)[0].Name != "events" || details.MessagesCount != n+3 {
		t.Fatalf("stream details %+v", details)
	}
	var tdetails topicJSON
	h.expect(http.StatusOK, "GET", "/streams/0/topics/events", tok, nil).decode(t, &tdetails)
	if (*tdetails.Partitions)[1].CurrentOffset < n {
		t.Fatalf("topic details %+v", tdetails)
	}
	var streams []streamJSON
	h.expect(http.StatusOK, "GET", "/streams", tok, nil).decode(t, &streams)
	if len(streams) != 1 || streams[0].Topics != nil {
		t.Fatalf("streams %+v", streams)
	}
	var topics []topicJSON
	h.expect(http.StatusOK, "GET", "/streams/orders/topics", tok, nil).decode(t, &topics)
	if len(topics) != 1 || topics[0].Partitions != nil {
		t.Fatalf("topics %+v", topics)
	}
}

func TestTopicLifecycle(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "s"})
	h.expect(http.StatusOK, "POST", "/streams/s/topics", tok, map[string]any{"name": "t", "partitions_count": 1})
	h.expect(http.StatusNoContent, "PUT", "/streams/s", tok, map[string]any{"name": "s2"})
	h.expect(http.StatusNoContent, "PUT", "/streams/s2/topics/t", tok, map[string]any{"name": "t2", "compression_algorithm": "gzip", "max_topic_size": "2 GiB"})
	var topic topicJSON
	h.expect(http.StatusOK, "GET", "/streams/s2/topics/t2", tok, nil).decode(t, &topic)
	if topic.CompressionAlgorithm != "gzip" || topic.MaxTopicSize != 2<<30 {
		t.Fatalf("updated topic %+v", topic)
	}
	h.expect(http.StatusCreated, "POST", "/streams/s2/topics/t2/partitions", tok, map[string]any{"partitions_count": 3})
	h.expect(http.StatusOK, "GET", "/streams/s2/topics/t2", tok, nil).decode(t, &topic)
	if topic.PartitionsCount != 4 {
		t.Fatalf("after create partitions: %d", topic.PartitionsCount)
	}
	h.expect(http.StatusNoContent, "DELETE", "/streams/s2/topics/t2/partitions?partitions_count=2", tok, nil)
	h.expect(http.StatusOK, "GET", "/streams/s2/topics/t2", tok, nil).decode(t, &topic)
	if topic.PartitionsCount != 2 {
		t.Fatalf("after delete partitions: %d", topic.PartitionsCount)
	}
	h.expectError(http.StatusBadRequest, 4, "DELETE", "/streams/s2/topics/t2/partitions", tok, nil)
	h.expect(http.StatusNoContent, "DELETE", "/streams/s2/topics/t2/partitions/0?segments_count=1", tok, nil)
	h.expect(http.StatusCreated, "POST", "/streams/s2/topics/t2/messages", tok, map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": 0}, "messages": []map[string]any{{"payload": "eA=="}},
	})
	h.expect(http.StatusNoContent, "DELETE", "/streams/s2/topics/t2/purge", tok, nil)
	h.expect(http.StatusOK, "GET", "/streams/s2/topics/t2", tok, nil).decode(t, &topic)
	if topic.MessagesCount != 0 {
		t.Fatalf("purged topic holds %d messages", topic.MessagesCount)
	}
	h.expect(http.StatusNoContent, "DELETE", "/streams/s2/purge", tok, nil)
	h.expect(http.StatusNoContent, "DELETE", "/streams/s2/topics/t2", tok, nil)
	h.expectError(http.StatusNotFound, 2010, "GET", "/streams/s2/topics/t2", tok, nil)
	h.expect(http.StatusNoContent, "DELETE", "/streams/s2", tok, nil)
	e := h.expectError(http.StatusNotFound, 1009, "GET", "/streams/s2/topics", tok, nil)
	if e.Field == nil || *e.Field != "stream_id" {
		t.Fatalf("missing stream field %+v", e)
	}
}

// TestSendRefusesBadUserHeaders: user headers that are not valid header
// TLV are refused over HTTP with the broker's codes (4040 kind, 4018 key,
// 4019 value) and nothing is stored.
func TestSendRefusesBadUserHeaders(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "hdr"})
	h.expect(http.StatusOK, "POST", "/streams/hdr/topics", tok, map[string]any{"name": "t", "partitions_count": 1})
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	item := func(kind, value string) map[string]string { return map[string]string{"kind": kind, "value": value} }
	for _, c := range []struct {
		name    string
		headers any
		id      uint32
	}{
		{"raw block with kind 0", b64([]byte{0, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}), 4040},
		{"raw block key without value", b64([]byte{2, 1, 0, 0, 0, 'k'}), 4019},
		{"raw block key of length 0", b64([]byte{2, 0, 0, 0, 0, 2, 1, 0, 0, 0, 'v'}), 4018},
		{"unknown kind name", []map[string]any{{"key": item("text", b64([]byte("k"))), "value": item("string", b64([]byte("v")))}}, 4040},
		{"empty key", []map[string]any{{"key": item("string", ""), "value": item("string", b64([]byte("v")))}}, 4018},
		{"uint32 value of 3 bytes", []map[string]any{{"key": item("string", b64([]byte("k"))), "value": item("uint32", b64([]byte{1, 2, 3}))}}, 4019},
	} {
		e := h.expectError(http.StatusBadRequest, c.id, "POST", "/streams/hdr/topics/t/messages", tok, map[string]any{
			"partitioning": map[string]any{"kind": "partition_id", "value": 0},
			"messages":     []map[string]any{{"payload": b64([]byte("p")), "user_headers": c.headers}},
		})
		if e.Field == nil || *e.Field != "user_headers" {
			t.Errorf("%s: error %+v", c.name, e)
		}
	}
	var polled polledMessagesJSON
	h.expect(http.StatusOK, "GET", "/streams/hdr/topics/t/messages?partition_id=0&kind=first&count=10", tok, nil).decode(t, &polled)
	if len(polled.Messages) != 0 {
		t.Fatalf("refused sends stored %d messages", len(polled.Messages))
	}
}

// TestTopicOptionZeroIsServerDefault: over HTTP, a 0 for segment_size,
// size_of_messages_required_to_save, message_expiry or max_topic_size
// means "server default" at create and at update: the option is reported
// derived (explicit false) with the resolved value.
func TestTopicOptionZeroIsServerDefault(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "d"})
	var topic topicJSON
	h.expect(http.StatusOK, "POST", "/streams/d/topics", tok, map[string]any{
		"name": "t", "partitions_count": 1, "message_expiry": 0, "max_topic_size": "0",
		"options": map[string]string{"segment_size": "0", "size_of_messages_required_to_save": "0"},
	}).decode(t, &topic)
	const never = "18446744073709551615"
	want := map[string]string{"segment_size": "1073741824", "size_of_messages_required_to_save": "1048576",
		"message_expiry": never, "max_topic_size": never}
	check := func(topic topicJSON) {
		t.Helper()
		for key, value := range want {
			if v := topicOptionValue(t, topic, key); v.Explicit || v.Value != value {
				t.Errorf("%s: %+v, want derived %s", key, v, value)
			}
		}
	}
	check(topic)
	if topic.MessageExpiry != 1<<64-1 || topic.MaxTopicSize != 1<<64-1 {
		t.Fatalf("expiry %d max size %d", topic.MessageExpiry, topic.MaxTopicSize)
	}
	h.expect(http.StatusNoContent, "PUT", "/streams/d/topics/t", tok, map[string]any{"name": "t", "message_expiry": "1m"})
	h.expect(http.StatusOK, "GET", "/streams/d/topics/t", tok, nil).decode(t, &topic)
	if v := topicOptionValue(t, topic, "message_expiry"); !v.Explicit || topic.MessageExpiry != 60e6 {
		t.Fatalf("message_expiry after update: %+v (%d)", v, topic.MessageExpiry)
	}
	h.expect(http.StatusNoContent, "PUT", "/streams/d/topics/t", tok, map[string]any{"name": "t", "message_expiry": 0, "max_topic_size": 0})
	h.expect(http.StatusOK, "GET", "/streams/d/topics/t", tok, nil).decode(t, &topic)
	check(topic)
	if topic.MessageExpiry != 1<<64-1 {
		t.Fatalf("expiry after reset %d", topic.MessageExpiry)
	}
}
