package main

import (
	"context"

	"github.com/stratabroker/strata/client"
)

// Target is a broker under test: Strata through the Go client, or NATS
// JetStream for the comparison. The runner drives every target through the
// same loops, so workloads are measured identically.
type Target interface {
	// Name labels the target in results ("strata", "nats").
	Name() string
	// Setup creates the streams and topics (or their equivalent) of w.
	Setup(ctx context.Context, w *Workload) error
	// Producer opens producer i's own connection.
	Producer(ctx context.Context, i int) (ProducerConn, error)
	// Consumer opens consumer i's own connection.
	Consumer(ctx context.Context, i int) (ConsumerConn, error)
	// FramesVerifiable reports whether polled messages carry ids and frame
	// checksums the Verifier can re-check.
	FramesVerifiable() bool
	// Close releases what Setup created (not the server).
	Close() error
}

// ProducerConn sends batches for one producer.
type ProducerConn interface {
	// Send sends msgs to (stream index, partition); balanced lets the
	// broker choose the partition.
	Send(ctx context.Context, stream int, partition uint32, balanced bool, msgs []client.Message) error
	Close() error
}

// ConsumerConn polls for one consumer.
type ConsumerConn interface {
	// Poll reads up to count messages of (stream index, partition) from
	// offset into dst (reusing its backing array) and returns them.
	Poll(ctx context.Context, stream int, partition uint32, offset uint64, count int, dst []client.Message) ([]client.Message, error)
	Close() error
}

// GroupTarget is a Target that also runs consumer groups (Strata does;
// the NATS mapping has no equivalent, so balanced-consumer-group is not
// compared).
type GroupTarget interface {
	Target
	// CreateGroup creates the consumer group name on stream 0's topic.
	CreateGroup(ctx context.Context, name string) error
	// GroupMember opens member i's own connection to group name.
	GroupMember(ctx context.Context, i int, name string) (GroupMemberConn, error)
}

// GroupMemberConn is one consumer-group member. Partitions are indexes
// 0..partitions-1, as elsewhere in the workload.
type GroupMemberConn interface {
	// Join makes this connection a member of the group.
	Join(ctx context.Context) error
	// Sync returns the group generation and the partitions this member may
	// poll now, appended to dst[:0].
	Sync(ctx context.Context, dst []uint32) (generation uint64, partitions []uint32, err error)
	// Poll reads up to count messages of partition after the group's
	// committed offset into dst (reusing its backing array). fenced is set
	// when the broker refused the partition to this member (re-sync).
	Poll(ctx context.Context, partition uint32, count int, dst []client.Message) (msgs []client.Message, fenced bool, err error)
	// Commit stores offset as the group's offset of partition.
	Commit(ctx context.Context, partition uint32, offset uint64) error
	// Leave ends the membership.
	Leave(ctx context.Context) error
	Close() error
}
