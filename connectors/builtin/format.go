package builtin

import (
	"encoding/json"

	"github.com/stratabroker/strata/connectors/plugin"
)

// Line formats of the file and stdout sinks.
const (
	formatJSONL = "jsonl"
	formatRaw   = "raw"
)

// messageLine is one message as a JSON line: payload is the JSON document
// itself for schema json, a string for text, base64 for raw.
type messageLine struct {
	Stream          string            `json:"stream"`
	Topic           string            `json:"topic"`
	Partition       uint32            `json:"partition"`
	Offset          uint64            `json:"offset"`
	ID              uint64            `json:"id"`
	Timestamp       uint64            `json:"timestamp"`
	OriginTimestamp uint64            `json:"origin_timestamp"`
	Headers         map[string]string `json:"headers,omitempty"`
	Payload         json.RawMessage   `json:"payload"`
}

// appendLine appends m as one line in format to dst.
func appendLine(dst []byte, format string, b *plugin.SinkBatch, m *plugin.ConsumedMessage) ([]byte, error) {
	if format == formatRaw {
		dst = append(dst, m.Payload...)
		return append(dst, '\n'), nil
	}
	var payload json.RawMessage
	switch b.Schema {
	case "json":
		payload = m.Payload
	case "text":
		q, err := json.Marshal(string(m.Payload))
		if err != nil {
			return dst, err
		}
		payload = q
	default:
		q, err := json.Marshal(m.Payload)
		if err != nil {
			return dst, err
		}
		payload = q
	}
	line, err := json.Marshal(messageLine{Stream: b.Stream, Topic: b.Topic, Partition: b.Partition, Offset: m.Offset,
		ID: m.ID, Timestamp: m.Timestamp, OriginTimestamp: m.OriginTimestamp, Headers: m.Headers, Payload: payload})
	if err != nil {
		return dst, err
	}
	dst = append(dst, line...)
	return append(dst, '\n'), nil
}
