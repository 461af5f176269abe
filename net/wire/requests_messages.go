package wire

import (
	"encoding/binary"
	"fmt"
)

// SendMessagesRequest is code 101 (operation 160, §6.4):
// `[metadata_length u32]`, then `Id stream`, `Id topic`, Partitioning,
// `[messages_count u32]` (metadata_length bytes), then the batch (256-byte
// batch header and frames, §6.1-6.2) to the end of the body.
type SendMessagesRequest struct {
	StreamID      Identifier
	TopicID       Identifier
	Partitioning  Partitioning
	MessagesCount uint32
	// Batch is the batch record as opaque bytes; Decode returns a
	// subslice of its input (no copy). The batch codec validates it.
	Batch []byte
}

// Code returns CodeSendMessages.
func (*SendMessagesRequest) Code() Code { return CodeSendMessages }

// AppendMetadataTo appends the metadata prefix only (metadata_length and
// the four fields), so a client can write the batch from its own buffer.
func (r *SendMessagesRequest) AppendMetadataTo(dst []byte) ([]byte, error) {
	at := len(dst)
	dst = appendU32(dst, 0)
	dst, err := appendIDs(dst, r.StreamID, r.TopicID)
	if err != nil {
		return dst[:at], err
	}
	if dst, err = r.Partitioning.AppendTo(dst); err != nil {
		return dst[:at], err
	}
	dst = appendU32(dst, r.MessagesCount)
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst, nil
}

// AppendTo appends the metadata prefix and the batch.
func (r *SendMessagesRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.AppendMetadataTo(dst)
	if err != nil {
		return dst, err
	}
	return append(dst, r.Batch...), nil
}

// Decode decodes the metadata from the metadata_length bytes after the
// length (bytes left in them after the fields are ignored, as Iggy's
// server does) and takes the rest as Batch. A failure here is Deny 20 at
// the server (§5). It allocates only for string identifiers.
func (r *SendMessagesRequest) Decode(b []byte) error {
	if len(b) < 4 {
		return fmt.Errorf("send messages: metadata length: %w", ErrTruncated)
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return fmt.Errorf("send messages: metadata of %d bytes in a %d-byte body: %w", n, len(b), ErrTruncated)
	}
	d := newDecoder(b[4 : 4+n])
	r.StreamID = d.identifier("stream id")
	r.TopicID = d.identifier("topic id")
	r.Partitioning = d.partitioning("partitioning")
	r.MessagesCount = d.u32("messages count")
	if d.err != nil {
		return d.err
	}
	r.Batch = b[4+n : len(b) : len(b)]
	return nil
}

// PollMessagesRequest is code 100 (§6.6): Consumer, `Id stream`,
// `Id topic`, `[has_partition u8][partition_id u32]`, strategy (9 bytes),
// `[count u32]`, `[auto_commit u8]` (non-zero = true).
type PollMessagesRequest struct {
	Consumer   Consumer
	StreamID   Identifier
	TopicID    Identifier
	Partition  OptionalPartition
	Strategy   PollingStrategy
	Count      uint32
	AutoCommit bool
}

// Code returns CodePollMessages.
func (*PollMessagesRequest) Code() Code { return CodePollMessages }

// AppendTo appends the body.
func (r *PollMessagesRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.Consumer.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	if dst, err = appendIDs(dst, r.StreamID, r.TopicID); err != nil {
		return dst, err
	}
	if dst, err = r.Strategy.AppendTo(r.Partition.AppendTo(dst)); err != nil {
		return dst, err
	}
	return appendBool(appendU32(dst, r.Count), r.AutoCommit), nil
}

// Decode decodes the body. It allocates only for string identifiers.
func (r *PollMessagesRequest) Decode(b []byte) error {
	d := newDecoder(b)
	r.Consumer = d.consumer("consumer")
	r.StreamID = d.identifier("stream id")
	r.TopicID = d.identifier("topic id")
	r.Partition = d.optionalPartition("partition")
	r.Strategy = d.pollingStrategy("strategy")
	r.Count = d.u32("count")
	r.AutoCommit = d.boolean("auto commit")
	return d.err
}

// FlushUnsavedBufferRequest is code 102: `Id stream`, `Id topic`,
// `[partition_id u32]`, `[fsync u8]`. Servers deny it (status 5).
type FlushUnsavedBufferRequest struct {
	StreamID    Identifier
	TopicID     Identifier
	PartitionID uint32
	Fsync       bool
}

// Code returns CodeFlushUnsavedBuffer.
func (*FlushUnsavedBufferRequest) Code() Code { return CodeFlushUnsavedBuffer }

// AppendTo appends the body.
func (r *FlushUnsavedBufferRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := appendIDs(dst, r.StreamID, r.TopicID)
	if err != nil {
		return dst, err
	}
	return appendBool(appendU32(dst, r.PartitionID), r.Fsync), nil
}

// Decode decodes the body.
func (r *FlushUnsavedBufferRequest) Decode(b []byte) error {
	d := newDecoder(b)
	d.streamTopic(&r.StreamID, &r.TopicID)
	r.PartitionID = d.u32("partition id")
	r.Fsync = d.boolean("fsync")
	return d.err
}

// OffsetTarget is the `Consumer`, `Id stream`, `Id topic`,
// `[has_partition u8][partition_id u32]` prefix shared by the three
// consumer-offset commands.
type OffsetTarget struct {
	Consumer  Consumer
	StreamID  Identifier
	TopicID   Identifier
	Partition OptionalPartition
}

func (t *OffsetTarget) appendTo(dst []byte) ([]byte, error) {
	dst, err := t.Consumer.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	if dst, err = appendIDs(dst, t.StreamID, t.TopicID); err != nil {
		return dst, err
	}
	return t.Partition.AppendTo(dst), nil
}

func (d *decoder) offsetTarget(t *OffsetTarget) {
	t.Consumer = d.consumer("consumer")
	d.streamTopic(&t.StreamID, &t.TopicID)
	t.Partition = d.optionalPartition("partition")
}

// GetConsumerOffsetRequest is code 120 (absent partition → partition 0).
type GetConsumerOffsetRequest struct{ OffsetTarget }

// Code returns CodeGetConsumerOffset.
func (*GetConsumerOffsetRequest) Code() Code { return CodeGetConsumerOffset }

// AppendTo appends the body.
func (r *GetConsumerOffsetRequest) AppendTo(dst []byte) ([]byte, error) { return r.appendTo(dst) }

// Decode decodes the body.
func (r *GetConsumerOffsetRequest) Decode(b []byte) error {
	d := newDecoder(b)
	d.offsetTarget(&r.OffsetTarget)
	return d.err
}

// StoreConsumerOffsetRequest is code 121 (operation 161): target,
// `[offset u64]`, `[ack u8]`. The server denies 20 unless the partition is
// present (flag 1).
type StoreConsumerOffsetRequest struct {
	OffsetTarget
	Offset uint64
	Ack    AckLevel
}

// Code returns CodeStoreConsumerOffset.
func (*StoreConsumerOffsetRequest) Code() Code { return CodeStoreConsumerOffset }

// AppendTo appends the body.
func (r *StoreConsumerOffsetRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.appendTo(dst)
	if err != nil {
		return dst, err
	}
	if r.Ack > AckQuorum {
		return dst, fmt.Errorf("%w: %d", ErrBadAckLevel, r.Ack)
	}
	return append(appendU64(dst, r.Offset), byte(r.Ack)), nil
}

// Decode decodes the body.
func (r *StoreConsumerOffsetRequest) Decode(b []byte) error {
	d := newDecoder(b)
	d.offsetTarget(&r.OffsetTarget)
	r.Offset = d.u64("offset")
	r.Ack = d.ackLevel("ack")
	return d.err
}

// DeleteConsumerOffsetRequest is code 122 (operation 162): target,
// `[ack u8]`.
type DeleteConsumerOffsetRequest struct {
	OffsetTarget
	Ack AckLevel
}

// Code returns CodeDeleteConsumerOffset.
func (*DeleteConsumerOffsetRequest) Code() Code { return CodeDeleteConsumerOffset }

// AppendTo appends the body.
func (r *DeleteConsumerOffsetRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.appendTo(dst)
	if err != nil {
		return dst, err
	}
	if r.Ack > AckQuorum {
		return dst, fmt.Errorf("%w: %d", ErrBadAckLevel, r.Ack)
	}
	return append(dst, byte(r.Ack)), nil
}

// Decode decodes the body.
func (r *DeleteConsumerOffsetRequest) Decode(b []byte) error {
	d := newDecoder(b)
	d.offsetTarget(&r.OffsetTarget)
	r.Ack = d.ackLevel("ack")
	return d.err
}
