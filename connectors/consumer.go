package connectors

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// consumerBinding is how a sink task consumes a topic: as a member of its
// consumer group, or, only when the server answers FeatureUnavailable to
// group commands, as an individual consumer of the same name polling every
// partition (logged as a warning: it does not share partitions between
// runtimes).
type consumerBinding struct {
	stream, topic client.Identifier
	group         string
	consumer      client.Consumer
	isGroup       bool
	// assigned is the last group assignment seen (logged on change).
	assigned []uint32
}

// bindConsumer creates (if needed) and joins the consumer group.
func bindConsumer(ctx context.Context, cl *client.Client, stream, topic, group string, log *zap.Logger) (*consumerBinding, error) {
	b := &consumerBinding{stream: client.ParseIdentifier(stream), topic: client.ParseIdentifier(topic), group: group}
	_, err := cl.CreateConsumerGroup(ctx, b.stream, b.topic, group)
	if err == nil || errors.Is(err, wire.ErrConsumerGroupNameAlreadyExists) {
		err = cl.JoinConsumerGroup(ctx, b.stream, b.topic, client.Named(group))
	}
	switch {
	case err == nil:
		b.consumer, b.isGroup = client.GroupConsumer(client.Named(group)), true
		log.Info("joined consumer group", zap.String("group", group))
		return b, nil
	case errors.Is(err, wire.ErrFeatureUnavailable):
		b.fallback(log)
		return b, nil
	}
	return nil, err
}

// fallback switches to an individual consumer named like the group.
func (b *consumerBinding) fallback(log *zap.Logger) {
	b.consumer, b.isGroup = client.IndividualConsumer(client.Named(b.group)), false
	log.Warn("server does not support consumer groups (FeatureUnavailable); falling back to an individual consumer polling every partition",
		zap.String("consumer", b.group))
}

// partitions returns the partitions to poll now: the group's assignment,
// or every partition of the topic for an individual consumer.
func (b *consumerBinding) partitions(ctx context.Context, cl *client.Client, log *zap.Logger) ([]uint32, error) {
	if b.isGroup {
		a, err := cl.SyncConsumerGroup(ctx, b.stream, b.topic, client.Named(b.group))
		if err == nil {
			if !slices.Equal(a.Partitions, b.assigned) {
				log.Info("consumer group assignment", zap.String("group", b.group), zap.Uint64("generation", a.Generation), zap.Any("partitions", a.Partitions))
				b.assigned = append(b.assigned[:0], a.Partitions...)
			}
			return a.Partitions, nil
		}
		if !errors.Is(err, wire.ErrFeatureUnavailable) {
			if errors.Is(err, client.ErrNotFound) {
				// Membership lost (e.g. after a reconnect): join again.
				if jerr := cl.JoinConsumerGroup(ctx, b.stream, b.topic, client.Named(b.group)); jerr != nil {
					return nil, fmt.Errorf("rejoin group %s: %w", b.group, jerr)
				}
			}
			return nil, err
		}
		b.fallback(log)
	}
	t, err := cl.GetTopic(ctx, b.stream, b.topic)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		out = append(out, p.ID)
	}
	return out, nil
}

// leave leaves the group at the end of a run (best effort: closing the
// connection ends the membership on the server too).
func (b *consumerBinding) leave(ctx context.Context, cl *client.Client, log *zap.Logger) {
	if !b.isGroup {
		return
	}
	if err := cl.LeaveConsumerGroup(ctx, b.stream, b.topic, client.Named(b.group)); err != nil {
		log.Warn("leaving consumer group failed", zap.String("group", b.group), zap.Error(err))
	}
}
