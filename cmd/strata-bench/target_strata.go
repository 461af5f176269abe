package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// streamDeleteTimeout bounds deleting the streams of one run.
const streamDeleteTimeout = time.Minute

// strataTarget benchmarks a Strata server over TCP with the Go client.
// The streams a Setup creates are deleted by the next Setup and by Close,
// as Target promises, unless keep is set: a run against a user's server
// leaves nothing behind.
type strataTarget struct {
	address, username, password string
	admin                       *client.Client
	// keep leaves the created streams on the server.
	keep bool
	// streams and topic hold the ids Setup created, by stream index.
	streams []uint32
	topics  []uint32
	// createdNames names every stream created; deleted counts those
	// deleted again.
	createdNames []string
	deleted      int
	// partitionIDs maps a partition index (0..partitions-1, what the
	// workload and payloads use) to the broker's partition id.
	partitionIDs []uint32
}

// newStrataTarget returns a target for the server at address.
func newStrataTarget(address, username, password string) *strataTarget {
	return &strataTarget{address: address, username: username, password: password}
}

func (t *strataTarget) Name() string           { return "strata" }
func (t *strataTarget) FramesVerifiable() bool { return true }

func (t *strataTarget) dial(ctx context.Context) (*client.Client, error) {
	c, err := client.Dial(ctx, t.address, client.WithCredentials(t.username, t.password))
	if err != nil {
		return nil, fmt.Errorf("connect to strata at %s: %w", t.address, err)
	}
	return c, nil
}

// Setup creates w.Streams fresh streams, each with one topic of
// w.Partitions partitions and w.Durability.
func (t *strataTarget) Setup(ctx context.Context, w *Workload) error {
	if t.admin == nil {
		c, err := t.dial(ctx)
		if err != nil {
			return err
		}
		t.admin = c
	}
	if err := t.deleteStreams(); err != nil {
		return err
	}
	t.streams, t.topics = t.streams[:0], t.topics[:0]
	stamp := time.Now().UnixNano()
	for i := 0; i < w.Streams; i++ {
		name := fmt.Sprintf("bench-%d-%d", stamp, i)
		s, err := t.admin.CreateStream(ctx, name)
		if err != nil {
			return fmt.Errorf("create stream: %w", err)
		}
		t.streams = append(t.streams, s.ID)
		t.createdNames = append(t.createdNames, name)
		opts := client.Options{}.With(client.OptionDurability, client.StringValue(w.Durability))
		tp, err := t.admin.CreateTopic(ctx, client.ID(s.ID), "bench", uint32(w.Partitions), opts)
		if err != nil {
			return fmt.Errorf("create topic (%s): %w", w.Durability, err)
		}
		if len(tp.Partitions) != w.Partitions {
			return fmt.Errorf("%w: topic created with %d partitions, asked for %d", ErrVerify, len(tp.Partitions), w.Partitions)
		}
		t.partitionIDs = t.partitionIDs[:0]
		for _, p := range tp.Partitions {
			t.partitionIDs = append(t.partitionIDs, p.ID)
		}
		t.topics = append(t.topics, tp.ID)
	}
	return nil
}

func (t *strataTarget) Producer(ctx context.Context, _ int) (ProducerConn, error) {
	c, err := t.dial(ctx)
	if err != nil {
		return nil, err
	}
	return &strataProducer{t: t, c: c}, nil
}

func (t *strataTarget) Consumer(ctx context.Context, i int) (ConsumerConn, error) {
	c, err := t.dial(ctx)
	if err != nil {
		return nil, err
	}
	return &strataConsumer{t: t, c: c, id: uint32(i + 1)}, nil
}

// Close deletes the streams of the last Setup (unless keep) and closes the
// admin connection.
func (t *strataTarget) Close() error {
	if t.admin == nil {
		return nil
	}
	err := errors.Join(t.deleteStreams(), t.admin.Close())
	t.admin = nil
	return err
}

// deleteStreams deletes the streams of the last Setup, unless keep. It
// runs on its own context: an interrupted run still cleans up.
func (t *strataTarget) deleteStreams() error {
	if t.keep || t.admin == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), streamDeleteTimeout)
	defer cancel()
	var errs []error
	for _, id := range t.streams {
		if err := t.admin.DeleteStream(ctx, client.ID(id)); err != nil && !errors.Is(err, wire.ErrStreamIdNotFound) {
			errs = append(errs, fmt.Errorf("delete bench stream %d: %w", id, err))
			continue
		}
		t.deleted++
	}
	t.streams, t.topics = t.streams[:0], t.topics[:0]
	return errors.Join(errs...)
}

type strataProducer struct {
	t *strataTarget
	c *client.Client
}

func (p *strataProducer) Send(ctx context.Context, stream int, partition uint32, balanced bool, msgs []client.Message) error {
	part := client.PartitionID(p.t.partitionIDs[partition])
	if balanced {
		part = client.Balanced()
	}
	_, err := p.c.SendMessages(ctx, client.ID(p.t.streams[stream]), client.ID(p.t.topics[stream]), part, msgs)
	return err
}

func (p *strataProducer) Close() error { return p.c.Close() }

type strataConsumer struct {
	t      *strataTarget
	c      *client.Client
	id     uint32
	polled client.PolledMessages
}

func (s *strataConsumer) Poll(ctx context.Context, stream int, partition uint32, offset uint64, count int, dst []client.Message) ([]client.Message, error) {
	err := s.c.PollMessagesInto(ctx, client.PollRequest{
		Consumer:  client.IndividualConsumer(client.ID(s.id)),
		Stream:    client.ID(s.t.streams[stream]),
		Topic:     client.ID(s.t.topics[stream]),
		Partition: s.t.partitionIDs[partition],
		Strategy:  client.PollOffset(offset),
		Count:     uint32(count),
	}, &s.polled)
	if err != nil {
		return dst[:0], err
	}
	return s.polled.Messages, nil
}

func (s *strataConsumer) Close() error { return s.c.Close() }
