package client

import (
	"context"
	"fmt"

	"github.com/stratabroker/strata/net/wire"
)

// PartitionsPerRequestMax is the most partitions one create or delete may
// name (PROTOCOL.md §5.5, §5.6).
const PartitionsPerRequestMax = wire.PartitionsCountMax

// CreateTopic creates a topic with partitions partitions (command 302).
// options may carry the topic keys of §4.8 and Strata's durability keys
// (OptionDurability, OptionConsumerOffsetDurability).
func (c *Client) CreateTopic(ctx context.Context, stream Identifier, name string, partitions uint32, options Options) (*TopicDetails, error) {
	if partitions > PartitionsPerRequestMax {
		return nil, fmt.Errorf("%w: %d partitions, at most %d", ErrInvalidArgument, partitions, PartitionsPerRequestMax)
	}
	wireOptions, err := options.toWire()
	if err != nil {
		return nil, err
	}
	var out *TopicDetails
	err = c.exec(ctx, &wire.CreateTopicRequest{StreamID: stream.toWire(), PartitionsCount: partitions,
		Name: name, Options: wireOptions}, func(p []byte) (err error) {
		out, err = decodeTopicDetails(p)
		return err
	})
	return out, err
}

// GetTopic returns a topic with its partitions (command 300); ErrNotFound
// when the stream or topic does not exist.
func (c *Client) GetTopic(ctx context.Context, stream, topic Identifier) (*TopicDetails, error) {
	var out *TopicDetails
	err := c.exec(ctx, &wire.GetTopicRequest{StreamID: stream.toWire(), TopicID: topic.toWire()}, func(p []byte) (err error) {
		if len(p) == 0 {
			return ErrNotFound
		}
		out, err = decodeTopicDetails(p)
		return err
	})
	return out, err
}

// GetTopics lists the topics of a stream (command 301); an unknown stream
// gives an empty list.
func (c *Client) GetTopics(ctx context.Context, stream Identifier) ([]Topic, error) {
	var out []Topic
	err := c.exec(ctx, &wire.GetTopicsRequest{StreamID: stream.toWire()}, func(p []byte) error {
		topics, err := wire.DecodeTopicList(p)
		out = fromWire(topics, topicFromWire)
		return err
	})
	return out, err
}

// UpdateTopic renames a topic and patches its options (command 304; only
// compression_algorithm, message_expiry and max_topic_size may be sent).
func (c *Client) UpdateTopic(ctx context.Context, stream, topic Identifier, name string, options Options) error {
	wireOptions, err := options.toWire()
	if err != nil {
		return err
	}
	return c.exec(ctx, &wire.UpdateTopicRequest{StreamID: stream.toWire(), TopicID: topic.toWire(),
		Name: name, Options: wireOptions}, nil)
}

// DeleteTopic deletes a topic (command 303).
func (c *Client) DeleteTopic(ctx context.Context, stream, topic Identifier) error {
	return c.exec(ctx, &wire.DeleteTopicRequest{StreamID: stream.toWire(), TopicID: topic.toWire()}, nil)
}

// PurgeTopic empties every partition of a topic (command 305).
func (c *Client) PurgeTopic(ctx context.Context, stream, topic Identifier) error {
	return c.exec(ctx, &wire.PurgeTopicRequest{StreamID: stream.toWire(), TopicID: topic.toWire()}, nil)
}

// CreatePartitions adds count partitions to a topic (command 402).
func (c *Client) CreatePartitions(ctx context.Context, stream, topic Identifier, count uint32) error {
	return c.exec(ctx, &wire.CreatePartitionsRequest{StreamID: stream.toWire(), TopicID: topic.toWire(),
		PartitionsCount: count}, nil)
}

// DeletePartitions removes the count highest-numbered partitions of a
// topic (command 403).
func (c *Client) DeletePartitions(ctx context.Context, stream, topic Identifier, count uint32) error {
	return c.exec(ctx, &wire.DeletePartitionsRequest{StreamID: stream.toWire(), TopicID: topic.toWire(),
		PartitionsCount: count}, nil)
}

// DeleteSegments deletes the count oldest sealed segments of a partition
// (command 503).
func (c *Client) DeleteSegments(ctx context.Context, stream, topic Identifier, partition, count uint32) error {
	return c.exec(ctx, &wire.DeleteSegmentsRequest{StreamID: stream.toWire(), TopicID: topic.toWire(),
		PartitionID: partition, SegmentsCount: count}, nil)
}
