package connectors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Schema says how message payloads are read: json (a JSON object the
// transforms can edit), text (UTF-8) or raw (opaque bytes).
type Schema string

// The schemas.
const (
	SchemaJSON Schema = "json"
	SchemaText Schema = "text"
	SchemaRaw  Schema = "raw"
)

// parseSchema validates a configured schema; empty means json.
func parseSchema(s string) (Schema, error) {
	switch Schema(s) {
	case "", SchemaJSON:
		return SchemaJSON, nil
	case SchemaText, SchemaRaw:
		return Schema(s), nil
	}
	return "", fmt.Errorf("%w: schema %q (want json, text or raw)", ErrConfig, s)
}

// decodePayload checks payload against the schema; for json it returns the
// decoded object (nil when the document is not an object, which
// transforms then leave alone).
func decodePayload(s Schema, payload []byte) (map[string]any, error) {
	switch s {
	case SchemaJSON:
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: json: %w", ErrDecode, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%w: json: trailing data", ErrDecode)
		}
		obj, _ := v.(map[string]any)
		return obj, nil
	case SchemaText:
		if !utf8.Valid(payload) {
			return nil, fmt.Errorf("%w: text is not UTF-8", ErrDecode)
		}
	}
	return nil, nil
}

// encodeObject encodes a transformed JSON object back to bytes.
func encodeObject(obj map[string]any) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: encode json: %w", ErrDecode, err)
	}
	return b, nil
}
