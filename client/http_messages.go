package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/stratabroker/strata/net/wire"
)

// headerItemJSON is one side of a user header on the REST API: the TLV
// kind's name and the value bytes in base64.
type headerItemJSON struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

type headerEntryJSON struct {
	Key   headerItemJSON `json:"key"`
	Value headerItemJSON `json:"value"`
}

func headerItem(v Value) headerItemJSON {
	return headerItemJSON{Kind: v.Kind.String(), Value: base64.StdEncoding.EncodeToString(v.Data)}
}

// kindByName inverts Kind.String.
func kindByName(name string) (Kind, bool) {
	for k := KindRaw; k <= KindFloat64; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

func (h headerItemJSON) value() (Value, error) {
	kind, ok := kindByName(h.Kind)
	if !ok {
		return Value{}, fmt.Errorf("header kind %q", h.Kind)
	}
	data, err := base64.StdEncoding.DecodeString(h.Value)
	if err != nil {
		return Value{}, fmt.Errorf("header value: %w", err)
	}
	return Value{Kind: kind, Data: data}, nil
}

// decodeHeadersJSON reads a polled message's user headers into m: a list
// of entries, or the raw TLV block in base64 (what the server sends for a
// block it cannot decode), or null. It fails only when the value has none
// of these shapes; a raw block that does not decode sets m.RawHeaders and
// m.HeadersErr instead, so the rest of the poll still decodes.
func decodeHeadersJSON(raw json.RawMessage, m *Message) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var block string
	if json.Unmarshal(raw, &block) == nil {
		b, err := base64.StdEncoding.DecodeString(block)
		if err != nil {
			return fmt.Errorf("user headers block: %w", err)
		}
		if len(b) == 0 {
			return nil
		}
		m.RawHeaders = b
		if m.Headers, err = ParseHeaders(b); err != nil {
			m.HeadersErr = fmt.Errorf("message at offset %d: %w", m.Offset, err)
		}
		return nil
	}
	var entries []headerEntryJSON
	if err := json.Unmarshal(raw, &entries); err != nil {
		return fmt.Errorf("user headers: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	out := make([]Header, 0, len(entries))
	for _, e := range entries {
		k, err := e.Key.value()
		if err != nil {
			return err
		}
		v, err := e.Value.value()
		if err != nil {
			return err
		}
		out = append(out, Header{Key: k, Value: v})
	}
	m.Headers = out
	return nil
}

type sendMessageJSON struct {
	ID          string            `json:"id"`
	Payload     string            `json:"payload"`
	UserHeaders []headerEntryJSON `json:"user_headers,omitempty"`
}

type partitioningJSON struct {
	Kind  string `json:"kind"`
	Value any    `json:"value,omitempty"`
}

func (p Partitioning) json() partitioningJSON {
	switch p.w.Kind {
	case wire.PartitioningPartitionID:
		return partitioningJSON{Kind: "partition_id", Value: p.w.PartitionID}
	case wire.PartitioningMessagesKey:
		return partitioningJSON{Kind: "messages_key", Value: base64.StdEncoding.EncodeToString(p.w.Key)}
	}
	return partitioningJSON{Kind: "balanced"}
}

// SendMessages sends messages as one batch (POST .../messages).
func (c *HTTPClient) SendMessages(ctx context.Context, stream, topic Identifier, partitioning Partitioning, messages []Message) ([]SendConfirmation, error) {
	if len(messages) == 0 {
		return nil, fmt.Errorf("%w: no messages to send", ErrInvalidArgument)
	}
	body := struct {
		Partitioning partitioningJSON  `json:"partitioning"`
		Messages     []sendMessageJSON `json:"messages"`
	}{Partitioning: partitioning.json(), Messages: make([]sendMessageJSON, 0, len(messages))}
	for _, m := range messages {
		if len(m.Payload) > PayloadSizeMax {
			return nil, fmt.Errorf("%w: payload of %d bytes", ErrInvalidArgument, len(m.Payload))
		}
		sm := sendMessageJSON{ID: messageIDText(m.ID), Payload: base64.StdEncoding.EncodeToString(m.Payload)}
		for _, h := range m.Headers {
			sm.UserHeaders = append(sm.UserHeaders, headerEntryJSON{Key: headerItem(h.Key), Value: headerItem(h.Value)})
		}
		body.Messages = append(body.Messages, sm)
	}
	var out struct {
		Confirmations []SendConfirmation `json:"confirmations"`
	}
	if err := c.call(ctx, http.MethodPost, topicPath(stream, topic, "messages"), nil, body, &out, false); err != nil {
		return nil, err
	}
	return out.Confirmations, nil
}

// pollKindNames names the polling strategies in the query string.
var pollKindNames = map[uint8]string{StrategyOffset: "offset", StrategyTimestamp: "timestamp",
	StrategyFirst: "first", StrategyLast: "last", StrategyNext: "next"}

// consumerQuery renders an individual consumer's id; groups are not
// served over HTTP.
func consumerQuery(consumer Consumer) (string, error) {
	if consumer.kind == wire.ConsumerKindGroup {
		return "", fmt.Errorf("%w: consumer groups are not served over HTTP", ErrInvalidArgument)
	}
	return consumer.id.String(), nil
}

type polledJSON struct {
	PartitionID   uint32 `json:"partition_id"`
	CurrentOffset uint64 `json:"current_offset"`
	Messages      []struct {
		Header struct {
			Checksum        uint64      `json:"checksum"`
			ID              json.Number `json:"id"`
			Offset          uint64      `json:"offset"`
			Timestamp       uint64      `json:"timestamp"`
			OriginTimestamp uint64      `json:"origin_timestamp"`
		} `json:"header"`
		Payload     string          `json:"payload"`
		UserHeaders json.RawMessage `json:"user_headers"`
	} `json:"messages"`
}

// PollMessages polls messages (GET .../messages).
func (c *HTTPClient) PollMessages(ctx context.Context, req PollRequest) (*PolledMessages, error) {
	kind, ok := pollKindNames[req.Strategy.Kind]
	if !ok {
		return nil, fmt.Errorf("%w: polling strategy kind %d", ErrInvalidArgument, req.Strategy.Kind)
	}
	consumer, err := consumerQuery(req.Consumer)
	if err != nil {
		return nil, err
	}
	q := url.Values{
		"consumer_id":  {consumer},
		"partition_id": {strconv.FormatUint(uint64(req.Partition), 10)},
		"kind":         {kind},
		"value":        {strconv.FormatUint(req.Strategy.Value, 10)},
		"count":        {strconv.FormatUint(uint64(req.Count), 10)},
		"auto_commit":  {strconv.FormatBool(req.AutoCommit)},
	}
	var raw json.RawMessage
	if err := c.call(ctx, http.MethodGet, topicPath(req.Stream, req.Topic, "messages"), q, nil, &raw, false); err != nil {
		return nil, err
	}
	out, err := decodePolledJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: poll reply: %w", ErrProtocol, err)
	}
	return out, nil
}

// decodePolledJSON decodes a poll reply of the REST API.
func decodePolledJSON(data []byte) (*PolledMessages, error) {
	var in polledJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, err
	}
	out := &PolledMessages{PartitionID: in.PartitionID, CurrentOffset: in.CurrentOffset,
		Messages: make([]Message, 0, len(in.Messages))}
	for i, m := range in.Messages {
		id, err := parseMessageID(m.Header.ID.String())
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		payload, err := base64.StdEncoding.DecodeString(m.Payload)
		if err != nil {
			return nil, fmt.Errorf("message %d payload: %w", i, err)
		}
		msg := Message{Offset: m.Header.Offset, ID: id, Timestamp: m.Header.Timestamp,
			OriginTimestamp: m.Header.OriginTimestamp, Checksum: m.Header.Checksum, Payload: payload}
		if err := decodeHeadersJSON(m.UserHeaders, &msg); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out.Messages = append(out.Messages, msg)
	}
	return out, nil
}

// GetConsumerOffset reads a consumer's stored offset; ErrNotFound when
// none is stored.
func (c *HTTPClient) GetConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32) (*ConsumerOffset, error) {
	id, err := consumerQuery(consumer)
	if err != nil {
		return nil, err
	}
	q := url.Values{"consumer_id": {id}, "partition_id": {strconv.FormatUint(uint64(partition), 10)}}
	var out ConsumerOffset
	if err := c.call(ctx, http.MethodGet, topicPath(stream, topic, "consumer-offsets"), q, nil, &out, true); err != nil {
		return nil, err
	}
	return &out, nil
}

// StoreConsumerOffset stores a consumer's offset (PUT .../consumer-offsets).
func (c *HTTPClient) StoreConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32, offset uint64) error {
	id, err := consumerQuery(consumer)
	if err != nil {
		return err
	}
	body := struct {
		ConsumerID  string `json:"consumer_id"`
		PartitionID uint32 `json:"partition_id"`
		Offset      uint64 `json:"offset"`
	}{id, partition, offset}
	return c.call(ctx, http.MethodPut, topicPath(stream, topic, "consumer-offsets"), nil, body, nil, false)
}

// DeleteConsumerOffset deletes a consumer's stored offset.
func (c *HTTPClient) DeleteConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32) error {
	id, err := consumerQuery(consumer)
	if err != nil {
		return err
	}
	q := url.Values{"partition_id": {strconv.FormatUint(uint64(partition), 10)}}
	return c.call(ctx, http.MethodDelete, topicPath(stream, topic, "consumer-offsets", id), q, nil, nil, false)
}
