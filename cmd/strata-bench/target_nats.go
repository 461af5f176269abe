package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/stratabroker/strata/client"
)

// NATS mapping limits.
const (
	// natsFetchWait bounds one pull when nothing is pending.
	natsFetchWait = 5 * time.Millisecond
	// natsConsumerInactive lets the server drop abandoned bench consumers.
	natsConsumerInactive = time.Minute
)

// errNATSTarget wraps nats.go failures.
var errNATSTarget = errors.New("nats")

// natsTarget benchmarks NATS JetStream with nats.go. Each (stream,
// partition) slot of the workload is one JetStream stream with one subject
// and file storage, so a pinned producer owns a stream as it owns a
// partition on Strata, and stream sequence - 1 plays the offset. A batch
// is published with PublishAsync and complete when every ack arrived; a
// poll is a pull-consumer fetch of up to a batch. NATS messages carry no
// Iggy frame, so the Verifier checks offsets and payloads only.
type natsTarget struct {
	url   string
	admin *nats.Conn
	w     *Workload
	// names[slot] is the JetStream stream name, subjects[slot] its subject.
	names, subjects []string
}

func newNATSTarget(url string) *natsTarget { return &natsTarget{url: url} }

func (t *natsTarget) Name() string           { return "nats" }
func (t *natsTarget) FramesVerifiable() bool { return false }

func (t *natsTarget) connect() (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(t.url)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: connect %s: %w", errNATSTarget, t.url, err)
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(2*messagesPerBatchMax))
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("%w: %w", errNATSTarget, err)
	}
	return nc, js, nil
}

// Setup creates one file-storage JetStream stream per slot.
func (t *natsTarget) Setup(ctx context.Context, w *Workload) error {
	if t.admin != nil {
		t.admin.Close()
	}
	nc, js, err := t.connect()
	if err != nil {
		return err
	}
	t.admin, t.w = nc, w
	t.names, t.subjects = t.names[:0], t.subjects[:0]
	stamp := time.Now().UnixNano()
	for slot := 0; slot < w.slots(); slot++ {
		name := fmt.Sprintf("BENCH_%d_%d", stamp, slot)
		subject := fmt.Sprintf("bench.%d.%d", stamp, slot)
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject},
			Storage: jetstream.FileStorage, Replicas: 1}); err != nil {
			return fmt.Errorf("%w: create stream: %w", errNATSTarget, err)
		}
		t.names, t.subjects = append(t.names, name), append(t.subjects, subject)
	}
	return nil
}

func (t *natsTarget) Producer(_ context.Context, _ int) (ProducerConn, error) {
	nc, js, err := t.connect()
	if err != nil {
		return nil, err
	}
	return &natsProducer{t: t, nc: nc, js: js}, nil
}

func (t *natsTarget) Consumer(_ context.Context, i int) (ConsumerConn, error) {
	nc, js, err := t.connect()
	if err != nil {
		return nil, err
	}
	return &natsConsumer{t: t, nc: nc, js: js, id: i}, nil
}

func (t *natsTarget) Close() error {
	if t.admin != nil {
		t.admin.Close()
		t.admin = nil
	}
	return nil
}

type natsProducer struct {
	t       *natsTarget
	nc      *nats.Conn
	js      jetstream.JetStream
	futures []jetstream.PubAckFuture
	// rotate picks the next slot for balanced sends.
	rotate int
}

func (p *natsProducer) Send(ctx context.Context, stream int, partition uint32, balanced bool, msgs []client.Message) error {
	slot := p.t.w.slotIndex(stream, partition)
	if balanced {
		slot = p.t.w.slotIndex(stream, uint32(p.rotate%p.t.w.Partitions))
		p.rotate++
	}
	subject := p.t.subjects[slot]
	p.futures = p.futures[:0]
	for i := range msgs {
		f, err := p.js.PublishAsync(subject, msgs[i].Payload)
		if err != nil {
			return fmt.Errorf("%w: publish: %w", errNATSTarget, err)
		}
		p.futures = append(p.futures, f)
	}
	for _, f := range p.futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("%w: publish ack: %w", errNATSTarget, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (p *natsProducer) Close() error {
	p.nc.Close()
	return nil
}

type natsConsumer struct {
	t    *natsTarget
	nc   *nats.Conn
	js   jetstream.JetStream
	id   int
	cons jetstream.Consumer
	// slot and next say where cons delivers from.
	slot int
	next uint64
}

// Poll fetches up to count messages from offset. The pull consumer is
// created at the first poll (and again if a poll asks for another place).
func (c *natsConsumer) Poll(ctx context.Context, stream int, partition uint32, offset uint64, count int, dst []client.Message) ([]client.Message, error) {
	slot := c.t.w.slotIndex(stream, partition)
	if c.cons == nil || slot != c.slot || offset != c.next {
		cons, err := c.js.CreateOrUpdateConsumer(ctx, c.t.names[slot], jetstream.ConsumerConfig{
			Name:              fmt.Sprintf("bench-%d-%d", c.id, offset),
			DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
			OptStartSeq:       offset + 1,
			AckPolicy:         jetstream.AckNonePolicy,
			InactiveThreshold: natsConsumerInactive,
		})
		if err != nil {
			return dst[:0], fmt.Errorf("%w: create consumer: %w", errNATSTarget, err)
		}
		c.cons, c.slot, c.next = cons, slot, offset
	}
	batch, err := c.cons.Fetch(count, jetstream.FetchMaxWait(natsFetchWait))
	if err != nil {
		return dst[:0], fmt.Errorf("%w: fetch: %w", errNATSTarget, err)
	}
	dst = dst[:0]
	for m := range batch.Messages() {
		md, err := m.Metadata()
		if err != nil {
			return dst, fmt.Errorf("%w: message metadata: %w", errNATSTarget, err)
		}
		dst = append(dst, client.Message{Offset: md.Sequence.Stream - 1, Payload: m.Data()})
	}
	if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
		return dst, fmt.Errorf("%w: fetch: %w", errNATSTarget, err)
	}
	c.next += uint64(len(dst))
	return dst, nil
}

func (c *natsConsumer) Close() error {
	c.nc.Close()
	return nil
}
