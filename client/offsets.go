package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// offsetTarget names the consumer's offset in one partition.
func offsetTarget(consumer Consumer, stream, topic Identifier, partition uint32) wire.OffsetTarget {
	return wire.OffsetTarget{Consumer: consumer.toWire(), StreamID: stream.toWire(), TopicID: topic.toWire(),
		Partition: wire.SomePartition(partition)}
}

// GetConsumerOffset returns a consumer's stored offset in a partition
// (command 120); ErrNotFound when nothing is stored.
func (c *Client) GetConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32) (*ConsumerOffset, error) {
	var out *ConsumerOffset
	req := wire.GetConsumerOffsetRequest{OffsetTarget: offsetTarget(consumer, stream, topic, partition)}
	err := c.exec(ctx, &req, func(p []byte) error {
		if len(p) == 0 {
			return ErrNotFound
		}
		var w wire.ConsumerOffset
		if err := w.Decode(p); err != nil {
			return err
		}
		out = (*ConsumerOffset)(&w)
		return nil
	})
	return out, err
}

// StoreConsumerOffset stores offset as the last processed message of the
// consumer in a partition (command 121, replicated: ack level Quorum).
func (c *Client) StoreConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32, offset uint64) error {
	return c.exec(ctx, &wire.StoreConsumerOffsetRequest{OffsetTarget: offsetTarget(consumer, stream, topic, partition),
		Offset: offset, Ack: wire.AckQuorum}, nil)
}

// DeleteConsumerOffset deletes a consumer's stored offset (command 122).
func (c *Client) DeleteConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition uint32) error {
	return c.exec(ctx, &wire.DeleteConsumerOffsetRequest{OffsetTarget: offsetTarget(consumer, stream, topic, partition),
		Ack: wire.AckQuorum}, nil)
}
