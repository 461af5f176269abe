package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/stratabroker/strata/net/wire"
)

// Message limits the SDKs enforce (PROTOCOL.md §6.4).
const (
	// PayloadSizeMax is the largest payload a message may carry.
	PayloadSizeMax = 64_000_000
	// UserHeadersSizeMax is the largest encoded user-headers block.
	UserHeadersSizeMax = 100_000
)

// MessageID is a message's 128-bit id (Low = bytes 0..8 of the field).
type MessageID = wire.MessageID

// Partitioning chooses the partition a send lands in (§4.4). The zero
// value is Balanced.
type Partitioning struct {
	w wire.Partitioning
}

// Balanced lets the server pick partitions round-robin.
func Balanced() Partitioning { return Partitioning{wire.Balanced()} }

// PartitionID sends to one partition.
func PartitionID(id uint32) Partitioning { return Partitioning{wire.PartitionIDPartitioning(id)} }

// MessagesKey sends to the partition the server derives from key (1..255
// bytes).
func MessagesKey(key []byte) Partitioning { return Partitioning{wire.MessagesKey(key)} }

func (p Partitioning) toWire() wire.Partitioning {
	if p.w.Kind == 0 {
		return wire.Balanced()
	}
	return p.w
}

// Message is a message to send or a polled message.
type Message struct {
	// Offset is the message's offset in its partition (polled only).
	Offset uint64
	// ID is the client-chosen id (0 is allowed and kept).
	ID MessageID
	// Timestamp is the server append time of the message's batch, micros
	// (polled only).
	Timestamp uint64
	// OriginTimestamp is the producer's timestamp, micros. On send, 0 means
	// "now".
	OriginTimestamp uint64
	// Checksum is the stored frame checksum (polled only).
	Checksum uint64
	// Headers are the user headers.
	Headers []Header
	// RawHeaders is the encoded user-headers block of a polled message
	// (PROTOCOL.md §4.7), aliasing the poll buffer like Payload. Over HTTP
	// it is set only when the server sent the block undecoded. Ignored on
	// send.
	RawHeaders []byte
	// HeadersErr is set on a polled message whose user headers do not
	// decode (written by a broker that did not validate them): Headers is
	// then nil and RawHeaders holds the bytes. The rest of the poll, and
	// the message's payload, decode normally, so one bad message does not
	// block a consumer.
	HeadersErr error
	// Payload is the message body. In a poll result it aliases the
	// PolledMessages buffer.
	Payload []byte
}

// SendMessages sends messages as one batch to a topic (command 101,
// request number unchanged). The batch is built with wire.BatchBuilder in a
// buffer the client reuses.
func (c *Client) SendMessages(ctx context.Context, stream, topic Identifier, partitioning Partitioning, messages []Message) ([]SendConfirmation, error) {
	if len(messages) == 0 {
		return nil, fmt.Errorf("%w: no messages to send", ErrInvalidArgument)
	}
	var out []SendConfirmation
	now := uint64(time.Now().UnixMicro())
	body := sendBody{c: c, stream: stream, topic: topic, partitioning: partitioning, messages: messages, now: now}
	err := c.exec(ctx, &body, func(p []byte) (err error) {
		out, err = decodeSendConfirmations(p)
		return err
	})
	return out, err
}

// decodeSendConfirmations decodes the SendMessages reply (§6.5) straight
// into the client's type: wire.SendMessagesReply.Decode has the same
// rules but would cost a second slice on the send path.
func decodeSendConfirmations(p []byte) ([]SendConfirmation, error) {
	if len(p) < 4 || uint64(binary.LittleEndian.Uint32(p))*wire.SendConfirmationSize != uint64(len(p)-4) {
		return nil, fmt.Errorf("send reply of %d bytes: %w", len(p), wire.ErrTruncated)
	}
	out := make([]SendConfirmation, binary.LittleEndian.Uint32(p))
	for i := range out {
		b := p[4+i*wire.SendConfirmationSize:]
		out[i] = SendConfirmation{StreamID: binary.LittleEndian.Uint32(b), TopicID: binary.LittleEndian.Uint32(b[4:]),
			PartitionID: binary.LittleEndian.Uint32(b[8:]), BaseOffset: binary.LittleEndian.Uint64(b[12:])}
	}
	return out, nil
}

// sendBody is the SendMessages body: appendSendBody encodes it into the
// request frame, with the client's reused batch builder.
type sendBody struct {
	c             *Client
	stream, topic Identifier
	partitioning  Partitioning
	messages      []Message
	now           uint64
}

func (*sendBody) Code() wire.Code { return wire.CodeSendMessages }

func (b *sendBody) AppendTo(dst []byte) ([]byte, error) {
	return b.c.appendSendBody(dst, b.stream, b.topic, b.partitioning, b.messages, b.now)
}

// appendSendBody appends the §6.4 body. Called under c.mu (it uses the
// client's batch builder and header scratch buffer).
func (c *Client) appendSendBody(dst []byte, stream, topic Identifier, partitioning Partitioning, messages []Message, now uint64) ([]byte, error) {
	meta := wire.SendMessagesRequest{StreamID: stream.toWire(), TopicID: topic.toWire(),
		Partitioning: partitioning.toWire(), MessagesCount: uint32(len(messages))}
	dst, err := meta.AppendMetadataTo(dst)
	if err != nil {
		return nil, err
	}

	c.batch.Reset()
	for i := range messages {
		m := &messages[i]
		if len(m.Payload) == 0 || len(m.Payload) > PayloadSizeMax {
			return nil, fmt.Errorf("%w: message %d payload of %d bytes (1..%d)", ErrInvalidArgument, i, len(m.Payload), PayloadSizeMax)
		}
		c.headerScratch, err = AppendHeaders(c.headerScratch[:0], m.Headers)
		if err != nil {
			return nil, fmt.Errorf("message %d headers: %w", i, err)
		}
		if len(c.headerScratch) > UserHeadersSizeMax {
			return nil, fmt.Errorf("%w: message %d headers of %d bytes (at most %d)", ErrInvalidArgument, i, len(c.headerScratch), UserHeadersSizeMax)
		}
		origin := m.OriginTimestamp
		if origin == 0 {
			origin = now
		}
		if err := c.batch.Add(m.ID, m.Payload, c.headerScratch, origin); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
		}
	}
	batch, err := c.batch.Finish()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return append(dst, batch...), nil
}

// Consumer identifies who polls or owns an offset (§4.3). The zero value
// is the individual consumer with numeric id 0.
type Consumer struct {
	kind wire.ConsumerKind
	id   Identifier
}

// IndividualConsumer is a plain consumer (kind 1); a named one is keyed by
// XXH32 of its name on the server.
func IndividualConsumer(id Identifier) Consumer {
	return Consumer{kind: wire.ConsumerKindSingle, id: id}
}

// GroupConsumer is a consumer group (kind 2).
func GroupConsumer(group Identifier) Consumer {
	return Consumer{kind: wire.ConsumerKindGroup, id: group}
}

func (c Consumer) toWire() wire.Consumer {
	kind := c.kind
	if kind == 0 {
		kind = wire.ConsumerKindSingle
	}
	return wire.Consumer{Kind: kind, ID: c.id.toWire()}
}

// PollingStrategy says where a poll starts (§4.5).
type PollingStrategy struct {
	Kind  uint8
	Value uint64
}

// Polling strategy kinds (§4.5).
const (
	StrategyOffset    = 1
	StrategyTimestamp = 2
	StrategyFirst     = 3
	StrategyLast      = 4
	StrategyNext      = 5
)

// PollOffset starts at an absolute offset.
func PollOffset(offset uint64) PollingStrategy { return PollingStrategy{StrategyOffset, offset} }

// PollTimestamp starts at the first batch appended at or after micros.
func PollTimestamp(micros uint64) PollingStrategy { return PollingStrategy{StrategyTimestamp, micros} }

// PollFirst starts at offset 0.
func PollFirst() PollingStrategy { return PollingStrategy{Kind: StrategyFirst} }

// PollLast returns the last count messages.
func PollLast() PollingStrategy { return PollingStrategy{Kind: StrategyLast} }

// PollNext starts after the consumer's stored offset.
func PollNext() PollingStrategy { return PollingStrategy{Kind: StrategyNext} }

// PollRequest describes one poll (§6.6).
type PollRequest struct {
	Consumer      Consumer
	Stream, Topic Identifier
	// Partition is the partition to poll; always sent (a plain consumer's
	// default is partition 0 anyway; a group consumer must name one).
	Partition  uint32
	Strategy   PollingStrategy
	Count      uint32
	AutoCommit bool
}

// PolledMessages is a poll result. Message payloads and headers alias buf,
// which PollMessagesInto reuses.
type PolledMessages struct {
	PartitionID   uint32
	CurrentOffset uint64
	Messages      []Message
	buf           []byte
}

// PollMessages polls messages (command 100).
func (c *Client) PollMessages(ctx context.Context, req PollRequest) (*PolledMessages, error) {
	out := &PolledMessages{}
	if err := c.PollMessagesInto(ctx, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// PollMessagesInto polls into dst, reusing its buffers; the previous
// contents of dst become invalid.
func (c *Client) PollMessagesInto(ctx context.Context, req PollRequest, dst *PolledMessages) error {
	if req.Strategy.Kind < StrategyOffset || req.Strategy.Kind > StrategyNext {
		return fmt.Errorf("%w: polling strategy kind %d", ErrInvalidArgument, req.Strategy.Kind)
	}
	body := wire.PollMessagesRequest{Consumer: req.Consumer.toWire(), StreamID: req.Stream.toWire(),
		TopicID: req.Topic.toWire(), Partition: wire.SomePartition(req.Partition),
		Strategy: wire.PollingStrategy{Kind: wire.PollingKind(req.Strategy.Kind), Value: req.Strategy.Value},
		Count:    req.Count, AutoCommit: req.AutoCommit}
	return c.exec(ctx, &body, func(p []byte) error {
		dst.buf = append(dst.buf[:0], p...)
		return decodePolled(dst)
	})
}

// pollHeaderSize is the fixed head of a poll reply.
const pollHeaderSize = wire.PolledMessagesHeaderSize

// decodePolled parses dst.buf (§6.6): the 16-byte head, then batch records
// whose frames give offset = base_offset + offset_delta (not assumed to
// start at 0), timestamp = base_timestamp and origin timestamp =
// origin_timestamp + timestamp_delta.
func decodePolled(dst *PolledMessages) error {
	dst.Messages = dst.Messages[:0]
	head, b, err := wire.DecodePolledMessages(dst.buf)
	if err != nil {
		return err
	}
	dst.PartitionID, dst.CurrentOffset = head.PartitionID, head.CurrentOffset
	pos := 0
	for pos < len(b) {
		if len(b)-pos < wire.BatchHeaderSize {
			return fmt.Errorf("batch header at byte %d: %w", pos, wire.ErrTruncated)
		}
		view := wire.BatchView(b[pos:])
		length := view.BatchLength()
		if length < wire.BatchHeaderSize || length > uint64(len(b)-pos) {
			return fmt.Errorf("batch at byte %d claims %d bytes of %d: %w", pos, length, len(b)-pos, wire.ErrBatchMalformed)
		}
		view = view[:length]
		base, ts, origin := view.BaseOffset(), view.BaseTimestamp(), view.OriginTimestamp()
		it := view.Frames()
		for {
			f, ok := it.Next()
			if !ok {
				break
			}
			m := Message{Offset: base + uint64(f.OffsetDelta()), ID: f.ID(), Timestamp: ts,
				OriginTimestamp: origin + uint64(f.TimestampDelta()), Checksum: f.Checksum(),
				Payload: f.Payload()}
			if raw := f.UserHeaders(); len(raw) > 0 {
				m.RawHeaders = raw
				if m.Headers, err = ParseHeaders(raw); err != nil {
					m.HeadersErr = fmt.Errorf("message at offset %d: %w", m.Offset, err)
				}
			}
			dst.Messages = append(dst.Messages, m)
		}
		if err := it.Err(); err != nil {
			return err
		}
		pos += int(length)
	}
	if uint32(len(dst.Messages)) != head.Count {
		return fmt.Errorf("poll reply announces %d messages, carries %d: %w", head.Count, len(dst.Messages), wire.ErrBatchMalformed)
	}
	return nil
}
