package client

import (
	"context"
	"fmt"

	"github.com/stratabroker/strata/net/wire"
)

// PartitionsPerRequestMax is the most partitions one create or delete may
// name (PROTOCOL.md §5.5, §5.6).
const PartitionsPerRequestMax = 1000

// CreateTopic creates a topic with partitions partitions (command 302).
// options may carry the topic keys of §4.8 and Strata's durability keys
// (OptionDurability, OptionConsumerOffsetDurability).
func (c *Client) CreateTopic(ctx context.Context, stream Identifier, name string, partitions uint32, options Options) (*TopicDetails, error) {
	if partitions > PartitionsPerRequestMax {
		return nil, fmt.Errorf("%w: %d partitions, at most %d", ErrInvalidArgument, partitions, PartitionsPerRequestMax)
	}
	var out *TopicDetails
	err := c.exec(ctx, wire.CodeCreateTopic, func(dst []byte) ([]byte, error) {
		dst, err := appendIdentifier(dst, stream)
		if err != nil {
			return nil, err
		}
		dst = appendU32(dst, partitions)
		if dst, err = appendName(dst, "topic name", name); err != nil {
			return nil, err
		}
		return appendOptions(dst, options)
	}, func(p []byte) (err error) {
		out, err = decodeTopicDetails(p)
		return err
	})
	return out, err
}

// GetTopic returns a topic with its partitions (command 300); ErrNotFound
// when the stream or topic does not exist.
func (c *Client) GetTopic(ctx context.Context, stream, topic Identifier) (*TopicDetails, error) {
	var out *TopicDetails
	err := c.exec(ctx, wire.CodeGetTopic, identifierBody(stream, topic), func(p []byte) (err error) {
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
	err := c.exec(ctx, wire.CodeGetTopics, identifierBody(stream), func(p []byte) error {
		r := reader{b: p}
		n := boundedCount(&r, r.u32("topics count"), topicRecordMin)
		for i := 0; i < n && r.err == nil; i++ {
			out = append(out, readTopic(&r))
		}
		return finish(&r)
	})
	return out, err
}

// UpdateTopic renames a topic and patches its options (command 304; only
// compression_algorithm, message_expiry and max_topic_size may be sent).
func (c *Client) UpdateTopic(ctx context.Context, stream, topic Identifier, name string, options Options) error {
	return c.exec(ctx, wire.CodeUpdateTopic, func(dst []byte) ([]byte, error) {
		dst, err := identifierBody(stream, topic)(dst)
		if err != nil {
			return nil, err
		}
		if dst, err = appendName(dst, "topic name", name); err != nil {
			return nil, err
		}
		return appendOptions(dst, options)
	}, nil)
}

// DeleteTopic deletes a topic (command 303).
func (c *Client) DeleteTopic(ctx context.Context, stream, topic Identifier) error {
	return c.exec(ctx, wire.CodeDeleteTopic, identifierBody(stream, topic), nil)
}

// PurgeTopic empties every partition of a topic (command 305).
func (c *Client) PurgeTopic(ctx context.Context, stream, topic Identifier) error {
	return c.exec(ctx, wire.CodePurgeTopic, identifierBody(stream, topic), nil)
}

// CreatePartitions adds count partitions to a topic (command 402).
func (c *Client) CreatePartitions(ctx context.Context, stream, topic Identifier, count uint32) error {
	return c.exec(ctx, wire.CodeCreatePartitions, partitionsBody(stream, topic, count), nil)
}

// DeletePartitions removes the count highest-numbered partitions of a
// topic (command 403).
func (c *Client) DeletePartitions(ctx context.Context, stream, topic Identifier, count uint32) error {
	return c.exec(ctx, wire.CodeDeletePartitions, partitionsBody(stream, topic, count), nil)
}

func partitionsBody(stream, topic Identifier, count uint32) func([]byte) ([]byte, error) {
	return func(dst []byte) ([]byte, error) {
		dst, err := identifierBody(stream, topic)(dst)
		if err != nil {
			return nil, err
		}
		return appendU32(dst, count), nil
	}
}

// DeleteSegments deletes the count oldest sealed segments of a partition
// (command 503).
func (c *Client) DeleteSegments(ctx context.Context, stream, topic Identifier, partition, count uint32) error {
	return c.exec(ctx, wire.CodeDeleteSegments, func(dst []byte) ([]byte, error) {
		dst, err := identifierBody(stream, topic)(dst)
		if err != nil {
			return nil, err
		}
		dst = appendU32(dst, partition)
		return appendU32(dst, count), nil
	}, nil)
}
