package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// Ack levels of offset writes (§4.6).
const (
	ackNoAck  = 0
	ackQuorum = 1
)

// offsetTarget appends Consumer, stream, topic and [has_partition=1][id].
func offsetTarget(dst []byte, consumer Consumer, stream, topic Identifier, partition uint32) ([]byte, error) {
	dst, err := appendConsumer(dst, consumer)
	if err != nil {
		return nil, err
	}
	if dst, err = identifierBody(stream, topic)(dst); err != nil {
		return nil, err
	}
	dst = append(dst, 1)
	return appendU32(dst, partition), nil
}

// GetConsumerOffset returns a consumer's stored offset in a partition
// (command 120); ErrNotFound when nothing is stored.
func (c *Client) GetConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32) (*ConsumerOffset, error) {
	var out *ConsumerOffset
	err := c.exec(ctx, wire.CodeGetConsumerOffset, func(dst []byte) ([]byte, error) {
		return offsetTarget(dst, consumer, stream, topic, partition)
	}, func(p []byte) error {
		if len(p) == 0 {
			return ErrNotFound
		}
		r := reader{b: p}
		out = &ConsumerOffset{PartitionID: r.u32("partition_id"), CurrentOffset: r.u64("current_offset"),
			StoredOffset: r.u64("stored_offset")}
		return finish(&r)
	})
	return out, err
}

// StoreConsumerOffset stores offset as the last processed message of the
// consumer in a partition (command 121, replicated: ack level Quorum).
func (c *Client) StoreConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32, offset uint64) error {
	return c.exec(ctx, wire.CodeStoreConsumerOffset, func(dst []byte) ([]byte, error) {
		dst, err := offsetTarget(dst, consumer, stream, topic, partition)
		if err != nil {
			return nil, err
		}
		dst = appendU64(dst, offset)
		return append(dst, ackQuorum), nil
	}, nil)
}

// DeleteConsumerOffset deletes a consumer's stored offset (command 122).
func (c *Client) DeleteConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32) error {
	return c.exec(ctx, wire.CodeDeleteConsumerOffset, func(dst []byte) ([]byte, error) {
		dst, err := offsetTarget(dst, consumer, stream, topic, partition)
		if err != nil {
			return nil, err
		}
		return append(dst, ackQuorum), nil
	}, nil)
}
