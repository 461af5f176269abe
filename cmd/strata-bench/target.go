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
