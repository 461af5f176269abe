package httpapi

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// Message limits on the HTTP path.
const (
	// defaultPollCount is the poll count when the query omits it.
	defaultPollCount = 10
	// messagesPerSendMax bounds the messages of one POST.
	messagesPerSendMax = 100_000
)

// pollingKinds maps the kind query value to a strategy kind.
var pollingKinds = map[string]wire.PollingKind{
	"offset": wire.PollOffset, "timestamp": wire.PollTimestamp, "first": wire.PollFirst,
	"last": wire.PollLast, "next": wire.PollNext,
}

// offsetTargetFromQuery reads {stream_id} and {topic_id}, and the query
// values consumer_id (default 0) as an individual consumer (groups are not
// served over HTTP, §11) and partition_id (Present when given).
func offsetTargetFromQuery(r *http.Request) (wire.OffsetTarget, error) {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return wire.OffsetTarget{}, err
	}
	s := r.URL.Query().Get("consumer_id")
	if s == "" {
		s = "0"
	}
	id, err := parseIdentifier(s, "consumer_id")
	if err != nil {
		return wire.OffsetTarget{}, err
	}
	partition, present, err := queryU32(r, "partition_id", 0)
	if err != nil {
		return wire.OffsetTarget{}, err
	}
	return wire.OffsetTarget{Consumer: wire.Consumer{Kind: wire.ConsumerKindSingle, ID: id}, StreamID: stream,
		TopicID: topic, Partition: wire.OptionalPartition{Present: present, ID: partition}}, nil
}

// messageHeaderJSON is a polled message's header (the consumer view of
// §6.2: absolute offset, batch timestamp, producer timestamp).
type messageHeaderJSON struct {
	Checksum          uint64      `json:"checksum"`
	ID                json.Number `json:"id"`
	Offset            uint64      `json:"offset"`
	Timestamp         uint64      `json:"timestamp"`
	OriginTimestamp   uint64      `json:"origin_timestamp"`
	UserHeadersLength uint32      `json:"user_headers_length"`
	PayloadLength     uint32      `json:"payload_length"`
	Reserved          uint64      `json:"reserved"`
}

// messageJSON is one polled message. UserHeaders is a list of
// {key, value} entries when the block parses as TLV pairs, else the raw
// block in base64.
type messageJSON struct {
	Header      messageHeaderJSON `json:"header"`
	Payload     string            `json:"payload"`
	UserHeaders any               `json:"user_headers"`
}

// headerItemJSON is one TLV item of a user header: its kind name and its
// bytes in base64.
type headerItemJSON struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// headerEntryJSON is one user-header pair.
type headerEntryJSON struct {
	Key   headerItemJSON `json:"key"`
	Value headerItemJSON `json:"value"`
}

// polledMessagesJSON is the reply of a poll.
type polledMessagesJSON struct {
	PartitionID   uint32        `json:"partition_id"`
	CurrentOffset uint64        `json:"current_offset"`
	Count         uint32        `json:"count"`
	Messages      []messageJSON `json:"messages"`
}

// messageIDText renders a 128-bit id in decimal.
func messageIDText(id wire.MessageID) json.Number { return json.Number(id.String()) }

// userHeadersJSON renders a user-headers block.
func userHeadersJSON(block []byte) any {
	entries := []headerEntryJSON{}
	it := wire.NewTLVIterator(block)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		entries = append(entries, headerEntryJSON{
			Key:   headerItemJSON{Kind: tlvKindName(k.Kind), Value: base64.StdEncoding.EncodeToString(k.Data)},
			Value: headerItemJSON{Kind: tlvKindName(v.Kind), Value: base64.StdEncoding.EncodeToString(v.Data)},
		})
	}
	if it.Err() != nil {
		return base64.StdEncoding.EncodeToString(block)
	}
	return entries
}

// decodePolled converts a poll reply into JSON, walking its batch records.
func decodePolled(payload []byte) (polledMessagesJSON, error) {
	head, records, err := wire.DecodePolledMessages(payload)
	if err != nil {
		return polledMessagesJSON{}, err
	}
	// The count sizes the slice only as far as the bytes could hold it.
	capacity := min(int(head.Count), len(records)/wire.MessageHeaderSize)
	out := polledMessagesJSON{PartitionID: head.PartitionID, CurrentOffset: head.CurrentOffset,
		Count: head.Count, Messages: make([]messageJSON, 0, capacity)}
	for len(records) > 0 {
		h, err := wire.DecodeBatchHeader(records)
		if err != nil {
			return out, err
		}
		if h.BatchLength < wire.BatchHeaderSize || h.BatchLength > uint64(len(records)) {
			return out, fail(wire.ErrInvalidMessagesSize, "", "poll reply batch of %d bytes in %d", h.BatchLength, len(records))
		}
		batch := wire.BatchView(records[:h.BatchLength])
		records = records[h.BatchLength:]
		frames := batch.Frames()
		for {
			f, ok := frames.Next()
			if !ok {
				break
			}
			out.Messages = append(out.Messages, messageJSON{
				Header: messageHeaderJSON{
					Checksum: f.Checksum(), ID: messageIDText(f.ID()),
					Offset:            batch.BaseOffset() + uint64(f.OffsetDelta()),
					Timestamp:         batch.BaseTimestamp(),
					OriginTimestamp:   batch.OriginTimestamp() + uint64(f.TimestampDelta()),
					UserHeadersLength: f.UserHeadersLength(), PayloadLength: f.PayloadLength(),
					Reserved: f.Reserved(),
				},
				Payload:     base64.StdEncoding.EncodeToString(f.Payload()),
				UserHeaders: userHeadersJSON(f.UserHeaders()),
			})
		}
		if err := frames.Err(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// pollMessages handles GET .../topics/{topic_id}/messages.
func (a *api) pollMessages(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	target, err := offsetTargetFromQuery(r)
	if err != nil {
		return err
	}
	kindName := strings.ToLower(r.URL.Query().Get("kind"))
	if kindName == "" {
		kindName = "offset"
	}
	kind, ok := pollingKinds[kindName]
	if !ok {
		return badRequest("kind", "kind must be offset, timestamp, first, last or next")
	}
	value, err := queryU64(r, "value", 0)
	if err != nil {
		return err
	}
	count, _, err := queryU32(r, "count", defaultPollCount)
	if err != nil {
		return err
	}
	autoCommit, err := queryBool(r, "auto_commit")
	if err != nil {
		return err
	}
	// An absent partition_id polls partition 0.
	req := wire.PollMessagesRequest{Consumer: target.Consumer, StreamID: target.StreamID, TopicID: target.TopicID,
		Partition: wire.SomePartition(target.Partition.ID), Strategy: wire.PollingStrategy{Kind: kind, Value: value},
		Count: count, AutoCommit: autoCommit}
	payload, err := ls.Do(&req)
	if err != nil {
		return err
	}
	out, err := decodePolled(payload)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// partitioningJSON is the partitioning of a send: kind balanced,
// partition_id or messages_key; value is the key bytes in base64
// (messages_key) or the partition id as a number or as 4 little-endian
// bytes in base64 (partition_id).
type partitioningJSON struct {
	Kind  string          `json:"kind"`
	Value json.RawMessage `json:"value"`
}

// sendMessageJSON is one message to send: id (a number, a decimal string,
// or 32 hex digits / a UUID; 0 or absent = 0), payload in base64, and
// user headers as entries or a base64 TLV block.
type sendMessageJSON struct {
	ID          json.RawMessage `json:"id"`
	Payload     string          `json:"payload"`
	UserHeaders json.RawMessage `json:"user_headers"`
}

// sendMessagesRequest is the body of POST .../messages.
type sendMessagesRequest struct {
	Partitioning partitioningJSON  `json:"partitioning"`
	Messages     []sendMessageJSON `json:"messages"`
}

// confirmationJSON says where a sent batch landed.
type confirmationJSON struct {
	StreamID    uint32 `json:"stream_id"`
	TopicID     uint32 `json:"topic_id"`
	PartitionID uint32 `json:"partition_id"`
	BaseOffset  uint64 `json:"base_offset"`
}

// toWire converts the partitioning.
func (p *partitioningJSON) toWire() (wire.Partitioning, error) {
	switch strings.ToLower(p.Kind) {
	case "", "balanced":
		return wire.Balanced(), nil
	case "partition_id":
		var n json.Number
		if err := json.Unmarshal(p.Value, &n); err == nil {
			id, err := requiredU32(&n, "partitioning.value")
			return wire.PartitionIDPartitioning(id), err
		}
		raw, err := base64Field(p.Value, "partitioning.value")
		if err != nil {
			return wire.Partitioning{}, err
		}
		if len(raw) != 4 {
			return wire.Partitioning{}, badRequest("partitioning.value", "partition id must be 4 bytes")
		}
		return wire.PartitionIDPartitioning(binary.LittleEndian.Uint32(raw)), nil
	case "messages_key":
		raw, err := base64Field(p.Value, "partitioning.value")
		if err != nil {
			return wire.Partitioning{}, err
		}
		if len(raw) == 0 || len(raw) > wire.MaxNameLength {
			return wire.Partitioning{}, badRequest("partitioning.value", "messages key must be 1 to 255 bytes")
		}
		return wire.MessagesKey(raw), nil
	}
	return wire.Partitioning{}, badRequest("partitioning.kind", "kind must be balanced, partition_id or messages_key")
}

// base64Field decodes a JSON string holding base64.
func base64Field(raw json.RawMessage, field string) ([]byte, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, badRequest(field, "%s must be a base64 string", field)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, badRequest(field, "%s is not valid base64", field)
	}
	return b, nil
}

// parseMessageID reads a message id.
func parseMessageID(raw json.RawMessage) (wire.MessageID, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return wire.MessageID{}, nil
	}
	text := string(raw)
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		text = s
	}
	id, err := wire.ParseMessageID(text)
	switch {
	case err == nil:
		return id, nil
	case errors.Is(err, wire.ErrMessageIDRange):
		return wire.MessageID{}, badRequest("id", "message id must fit in 128 bits")
	}
	hex := strings.ReplaceAll(text, "-", "")
	if len(hex) != 32 {
		return wire.MessageID{}, badRequest("id", "message id must be a number or 32 hex digits")
	}
	high, errHigh := strconv.ParseUint(hex[:16], 16, 64)
	low, errLow := strconv.ParseUint(hex[16:], 16, 64)
	if errHigh != nil || errLow != nil {
		return wire.MessageID{}, badRequest("id", "message id must be a number or 32 hex digits")
	}
	return wire.MessageID{Low: low, High: high}, nil
}

// parseUserHeaders reads user headers: a base64 TLV block, or a list of
// {key: {kind, value}, value: {kind, value}} entries with base64 values.
func parseUserHeaders(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var block string
	if err := json.Unmarshal(raw, &block); err == nil {
		b, err := base64.StdEncoding.DecodeString(block)
		if err != nil {
			return nil, badRequest("user_headers", "user_headers is not valid base64")
		}
		if err := wire.ValidateUserHeaders(b); err != nil {
			return nil, fail(wire.ErrorCode(wire.BatchErrorCode(err)), "user_headers", "user headers: %v", err)
		}
		return b, nil
	}
	var entries []headerEntryJSON
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, badRequest("user_headers", "user_headers must be a base64 block or a list of entries")
	}
	var out []byte
	for _, e := range entries {
		for i, item := range []headerItemJSON{e.Key, e.Value} {
			kind, ok := tlvKindByName(strings.ToLower(item.Kind))
			if !ok {
				return nil, fail(wire.ErrInvalidHeaderKind, "user_headers", "unknown header kind %q", item.Kind)
			}
			data, err := base64.StdEncoding.DecodeString(item.Value)
			if err != nil {
				return nil, badRequest("user_headers", "header value is not valid base64")
			}
			if out, err = wire.AppendTLVItem(out, kind, data); err != nil {
				code := wire.ErrInvalidHeaderValue
				if i == 0 {
					code = wire.ErrInvalidHeaderKey
				}
				return nil, fail(code, "user_headers", "user header: %v", err)
			}
		}
	}
	// The per-kind value sizes, with the codes the broker would answer.
	if err := wire.ValidateUserHeaders(out); err != nil {
		return nil, fail(wire.ErrorCode(wire.BatchErrorCode(err)), "user_headers", "user headers: %v", err)
	}
	return out, nil
}

// sendMessages handles POST .../topics/{topic_id}/messages. The ack query
// is accepted; both levels take the replicated path.
func (a *api) sendMessages(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	var body sendMessagesRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if len(body.Messages) == 0 || len(body.Messages) > messagesPerSendMax {
		return fail(wire.ErrInvalidMessagesCount, "messages", "send 1 to %d messages", messagesPerSendMax)
	}
	partitioning, err := body.Partitioning.toWire()
	if err != nil {
		return err
	}
	now := uint64(a.cfg.Now().UnixMicro())
	var bb wire.BatchBuilder
	for i := range body.Messages {
		m := &body.Messages[i]
		id, err := parseMessageID(m.ID)
		if err != nil {
			return err
		}
		payload, err := base64.StdEncoding.DecodeString(m.Payload)
		if err != nil {
			return badRequest("payload", "message %d payload is not valid base64", i)
		}
		if len(payload) == 0 {
			return fail(wire.ErrEmptyMessagePayload, "payload", "message %d has an empty payload", i)
		}
		headers, err := parseUserHeaders(m.UserHeaders)
		if err != nil {
			return err
		}
		if err := bb.Add(id, payload, headers, now); err != nil {
			return fail(wire.ErrTooBigMessagePayload, "messages", "%v", err)
		}
	}
	batch, err := bb.Finish()
	if err != nil {
		return fail(wire.ErrInvalidMessagesCount, "messages", "%v", err)
	}
	req := wire.SendMessagesRequest{StreamID: stream, TopicID: topic, Partitioning: partitioning,
		MessagesCount: uint32(bb.Count()), Batch: batch}
	var reply wire.SendMessagesReply
	if err := doDecode(ls, &req, &reply); err != nil {
		return err
	}
	out := struct {
		Confirmations []confirmationJSON `json:"confirmations"`
	}{Confirmations: make([]confirmationJSON, 0, len(reply.Confirmations))}
	for _, c := range reply.Confirmations {
		out.Confirmations = append(out.Confirmations, confirmationJSON{StreamID: c.StreamID, TopicID: c.TopicID,
			PartitionID: c.PartitionID, BaseOffset: c.BaseOffset})
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// flushUnsavedBuffer handles GET .../messages/flush/{partition_id}/{fsync}
// (code 102; the broker answers FeatureUnavailable, §5.7).
func (a *api) flushUnsavedBuffer(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	partition, err := pathU32(r, "partition_id")
	if err != nil {
		return err
	}
	fsync, err := strconv.ParseBool(r.PathValue("fsync"))
	if err != nil {
		return badRequest("fsync", "fsync must be true or false")
	}
	req := wire.FlushUnsavedBufferRequest{StreamID: stream, TopicID: topic, PartitionID: partition, Fsync: fsync}
	return doEmpty(w, ls, &req, http.StatusOK)
}
