// Package plugin is the contract between the Strata connectors runtime and
// a connector: the Source and Sink interfaces, the messages that cross the
// boundary, and the framed wire protocol (PROTOCOL.md in the parent
// directory) that carries them to and from an external plugin process.
//
// The same interfaces serve built-in connectors (compiled into
// strata-connect and registered by name) and external ones (separate
// executables written with the sdk package). It imports nothing of the
// runtime, so an external plugin stays small.
package plugin

import (
	"context"
	"encoding/json"
)

// OpenRequest is what a connector instance receives when it starts.
type OpenRequest struct {
	// ID is the instance's plugin id: unique in the runtime's lifetime,
	// never reused, so several instances of one connector coexist.
	ID uint32 `json:"id"`
	// Key is the connector key from its configuration.
	Key string `json:"key"`
	// Config is the connector's [plugin_config] table as JSON.
	Config json.RawMessage `json:"config,omitempty"`
	// State is the last state the runtime saved for this source (nil for a
	// fresh start and for sinks).
	State []byte `json:"state,omitempty"`
	// Verbose asks for per-batch logs at info level.
	Verbose bool `json:"verbose,omitempty"`
}

// ProducedMessage is one message a source produced.
type ProducedMessage struct {
	// ID is the message id; 0 is kept as 0.
	ID uint64 `json:"id,omitempty"`
	// Headers are string headers attached to the message.
	Headers map[string]string `json:"headers,omitempty"`
	// Payload is the message body, in the stream's configured schema.
	Payload []byte `json:"payload"`
}

// ProducedBatch is the answer to one Poll: messages and the source state
// after them. The runtime saves State only once every message of the batch
// was sent; a nil State leaves the saved state unchanged.
type ProducedBatch struct {
	Messages []ProducedMessage `json:"messages,omitempty"`
	State    []byte            `json:"state,omitempty"`
}

// BatchResult tells a source what became of the batch it produced.
type BatchResult struct {
	// Sent is true when every message reached the stream and the state was
	// handled.
	Sent bool `json:"sent"`
	// Messages is how many messages were sent (after filtering).
	Messages int `json:"messages"`
	// Error describes a failure (state save); empty on success.
	Error string `json:"error,omitempty"`
}

// ConsumedMessage is one message a sink receives, its payload already
// decoded by the configured schema and transformed.
type ConsumedMessage struct {
	ID              uint64            `json:"id"`
	Offset          uint64            `json:"offset"`
	Timestamp       uint64            `json:"timestamp"`
	OriginTimestamp uint64            `json:"origin_timestamp"`
	Headers         map[string]string `json:"headers,omitempty"`
	// Payload is the message body after transforms: a JSON document for
	// schema json, UTF-8 text for text, the raw bytes for raw.
	Payload []byte `json:"payload"`
}

// SinkBatch is one delivery to a sink: messages of one partition of one
// topic, in offset order.
type SinkBatch struct {
	Stream    string            `json:"stream"`
	Topic     string            `json:"topic"`
	Partition uint32            `json:"partition"`
	Schema    string            `json:"schema"`
	Messages  []ConsumedMessage `json:"messages"`
}

// Source produces messages from the outside world. The runtime calls Open
// once, then Poll repeatedly from one goroutine, Report from another (for
// each polled batch, in order), and Close once after polling stopped.
type Source interface {
	Open(ctx context.Context, req OpenRequest) error
	// Poll returns the next batch; it should return within a second or
	// so, with an empty batch when there is nothing to send. It returns
	// ctx.Err() when ctx ends.
	Poll(ctx context.Context) (ProducedBatch, error)
	// Report gives the outcome of a batch Poll returned earlier.
	Report(ctx context.Context, result BatchResult) error
	Close(ctx context.Context) error
}

// Sink writes messages to the outside world. Consume returning nil means
// the batch is accepted; under at-least-once delivery the runtime then
// commits its offsets, and on an error it delivers the batch again.
type Sink interface {
	Open(ctx context.Context, req OpenRequest) error
	Consume(ctx context.Context, batch SinkBatch) error
	Close(ctx context.Context) error
}
