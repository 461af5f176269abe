package main

import (
	"context"
	"fmt"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// errUnknownPartition: the broker named a partition the topic lacks.
var errUnknownPartition = fmt.Errorf("%w: broker assigned a partition the topic does not have", ErrVerify)

// CreateGroup creates consumer group name on stream 0's topic.
func (t *strataTarget) CreateGroup(ctx context.Context, name string) error {
	if t.admin == nil || len(t.streams) == 0 {
		return fmt.Errorf("%w: create a group after Setup", ErrConfig)
	}
	if _, err := t.admin.CreateConsumerGroup(ctx, client.ID(t.streams[0]), client.ID(t.topics[0]), name); err != nil {
		return fmt.Errorf("create consumer group: %w", err)
	}
	return nil
}

// GroupMember opens member i's connection; each connection is its own
// protocol client, so each is a distinct member.
func (t *strataTarget) GroupMember(ctx context.Context, _ int, name string) (GroupMemberConn, error) {
	c, err := t.dial(ctx)
	if err != nil {
		return nil, err
	}
	return &strataMember{t: t, c: c, group: client.Named(name)}, nil
}

// strataMember is one group member over its own TCP connection.
type strataMember struct {
	t      *strataTarget
	c      *client.Client
	group  client.Identifier
	polled client.PolledMessages
}

func (m *strataMember) stream() client.Identifier { return client.ID(m.t.streams[0]) }
func (m *strataMember) topic() client.Identifier  { return client.ID(m.t.topics[0]) }

func (m *strataMember) Join(ctx context.Context) error {
	if err := m.c.JoinConsumerGroup(ctx, m.stream(), m.topic(), m.group); err != nil {
		return fmt.Errorf("join consumer group: %w", err)
	}
	return nil
}

// Sync maps the broker's partition ids back to partition indexes.
func (m *strataMember) Sync(ctx context.Context, dst []uint32) (uint64, []uint32, error) {
	a, err := m.c.SyncConsumerGroup(ctx, m.stream(), m.topic(), m.group)
	if err != nil {
		return 0, dst[:0], fmt.Errorf("sync consumer group: %w", err)
	}
	dst = dst[:0]
	for _, id := range a.Partitions {
		index, ok := m.t.partitionIndex(id)
		if !ok {
			return 0, dst, fmt.Errorf("%w: id %d", errUnknownPartition, id)
		}
		dst = append(dst, index)
	}
	return a.Generation, dst, nil
}

func (m *strataMember) Poll(ctx context.Context, partition uint32, count int, dst []client.Message) ([]client.Message, bool, error) {
	err := m.c.PollMessagesInto(ctx, client.PollRequest{
		Consumer:  client.GroupConsumer(m.group),
		Stream:    m.stream(),
		Topic:     m.topic(),
		Partition: m.t.partitionIDs[partition],
		Strategy:  client.PollNext(),
		Count:     uint32(count),
	}, &m.polled)
	if err != nil {
		return dst[:0], false, err
	}
	if m.polled.PartitionID == wire.PartitionIDResync {
		return dst[:0], true, nil
	}
	return m.polled.Messages, false, nil
}

func (m *strataMember) Commit(ctx context.Context, partition uint32, offset uint64) error {
	return m.c.StoreConsumerOffset(ctx, client.GroupConsumer(m.group), m.stream(), m.topic(), m.t.partitionIDs[partition], offset)
}

func (m *strataMember) Leave(ctx context.Context) error {
	return m.c.LeaveConsumerGroup(ctx, m.stream(), m.topic(), m.group)
}

func (m *strataMember) Close() error { return m.c.Close() }

// partitionIndex maps a broker partition id to its index.
func (t *strataTarget) partitionIndex(id uint32) (uint32, bool) {
	for i, p := range t.partitionIDs {
		if p == id {
			return uint32(i), true
		}
	}
	return 0, false
}
