package connectors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/connectors/plugin"
	"github.com/stratabroker/strata/net/wire"
)

// Sink path limits.
const (
	// consumeBackoffBase and consumeBackoffMax bound the pause after a
	// batch the plugin rejected (it is delivered again).
	consumeBackoffBase = 50 * time.Millisecond
	consumeBackoffMax  = 5 * time.Second
)

// sinkTask consumes one topic for one sink run.
type sinkTask struct {
	c       *connector
	id      uint32
	cfg     *ConnectorConfig
	stream  StreamConfig
	topic   string
	schema  Schema
	plugin  plugin.Sink
	client  *client.Client
	binding *consumerBinding
	log     *zap.Logger
	// fatal cancels the whole run when the plugin process failed.
	fatal func()
}

// startSink opens the plugin, connects, binds a consumer per topic and
// starts one task per topic.
func (c *connector) startSink(ctx context.Context, cfg *ConnectorConfig, snk plugin.Sink, req plugin.OpenRequest, log *zap.Logger) (*instance, error) {
	cl, err := c.rt.dial(ctx)
	if err != nil {
		_ = snk.Close(ctx)
		return nil, fmt.Errorf("connect to %s: %w", c.rt.cfg.Strata.Address, err)
	}
	if err := snk.Open(ctx, req); err != nil {
		_ = snk.Close(ctx)
		_ = cl.Close()
		return nil, fmt.Errorf("open plugin: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	var tasks []*sinkTask
	for _, sc := range cfg.Streams {
		schema, _ := parseSchema(sc.Schema)
		for _, topic := range sc.Topics {
			b, err := bindConsumer(ctx, cl, sc.Stream, topic, sc.ConsumerGroup, log)
			if err != nil {
				cancel()
				_ = snk.Close(ctx)
				_ = cl.Close()
				return nil, fmt.Errorf("consumer for %s/%s: %w", sc.Stream, topic, err)
			}
			tasks = append(tasks, &sinkTask{c: c, id: req.ID, cfg: cfg, stream: sc, topic: topic, schema: schema,
				plugin: snk, client: cl, binding: b, log: log.With(zap.String("topic", topic)), fatal: cancel})
		}
	}
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.run(runCtx)
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		closeCtx, cancelClose := context.WithTimeout(context.Background(), c.rt.cfg.Plugins.CallTimeout.Duration)
		defer cancelClose()
		for _, t := range tasks {
			t.binding.leave(closeCtx, cl, log)
		}
		if err := snk.Close(closeCtx); err != nil {
			log.Warn("closing sink plugin", zap.Error(err))
		}
		if err := cl.Close(); err != nil {
			log.Debug("closing client", zap.Error(err))
		}
		close(done)
	}()
	timeout := c.rt.cfg.Shutdown.Timeout.Duration
	stop := func() {
		cancel()
		select {
		case <-done:
		case <-time.After(timeout):
			log.Warn("sink tasks did not stop within the shutdown timeout; closing the client under them", zap.Duration("timeout", timeout))
			_ = cl.Close()
			killPlugin(snk)
			<-done
		}
	}
	return &instance{stop: stop, done: done}, nil
}

// run polls rounds over the assigned partitions until ctx ends.
func (t *sinkTask) run(ctx context.Context) {
	backoff := consumeBackoffBase
	for ctx.Err() == nil {
		reqCtx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		parts, err := t.binding.partitions(reqCtx, t.client, t.log)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			t.c.counters.Errors.add(1)
			t.log.Warn("listing partitions", zap.Error(err))
			if !pause(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, consumeBackoffMax)
			continue
		}
		polledAny := false
		for _, p := range parts {
			n, ok := t.pollPartition(ctx, p)
			if n > 0 {
				polledAny = true
			}
			if !ok {
				if ctx.Err() != nil {
					return
				}
				if !pause(ctx, backoff) {
					return
				}
				backoff = min(backoff*2, consumeBackoffMax)
				continue
			}
			backoff = consumeBackoffBase
		}
		if !polledAny && !pause(ctx, t.stream.PollInterval.Duration) {
			return
		}
	}
}

// pause waits d or until ctx ends; false when ctx ended.
func pause(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// pollPartition polls one partition once and delivers what came; ok is
// false when a poll or a delivery failed (nothing after the failure was
// committed, so the next round delivers it again).
func (t *sinkTask) pollPartition(ctx context.Context, partition uint32) (int, bool) {
	atMostOnce := t.stream.Delivery == DeliveryAtMostOnce
	// Requests are never cancelled by a stop: an abandoned request drops
	// the connection, and with it the client id the group membership and
	// the served-offset bookkeeping belong to. A stop is seen between
	// requests instead.
	reqCtx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	polled, err := t.client.PollMessages(reqCtx, client.PollRequest{Consumer: t.binding.consumer,
		Stream: t.binding.stream, Topic: t.binding.topic,
		Partition: partition, Strategy: client.PollNext(), Count: uint32(t.stream.BatchLength), AutoCommit: atMostOnce})
	if err != nil {
		if ctx.Err() == nil {
			t.c.counters.Errors.add(1)
			t.log.Warn("poll failed", zap.Uint32("partition_id", partition), zap.Error(err))
		}
		return 0, false
	}
	n := len(polled.Messages)
	if n == 0 || polled.PartitionID == wire.PartitionIDResync {
		// Nothing new, or the partition is no longer ours (the group
		// rebalanced): the next round syncs the assignment again.
		return 0, true
	}
	t.c.counters.Consumed.add(n)
	// The batch in hand is delivered even when a stop arrives meanwhile:
	// deliveries use their own context, bounded by the call timeout.
	for _, chunk := range splitBatches(polled.Messages, t.stream.BatchLength) {
		if !t.deliver(polled.PartitionID, chunk, atMostOnce) {
			return n, false
		}
	}
	return n, true
}

// deliver decodes, transforms and hands one batch to the plugin, then
// (at-least-once) commits its last offset.
func (t *sinkTask) deliver(partition uint32, msgs []client.Message, atMostOnce bool) bool {
	start := time.Now()
	batch := plugin.SinkBatch{Stream: t.stream.Stream, Topic: t.topic, Partition: partition, Schema: string(t.schema),
		Messages: make([]plugin.ConsumedMessage, 0, len(msgs))}
	bad, filtered := 0, 0
	for i := range msgs {
		m := &msgs[i]
		payload, keep, err := transformPayload(t.schema, t.cfg.Transforms, m.Payload)
		if err != nil {
			bad++
			t.log.Warn("skipping a message the schema cannot read", zap.Uint64("offset", m.Offset), zap.Error(err))
			continue
		}
		if !keep {
			filtered++
			continue
		}
		cm := plugin.ConsumedMessage{ID: m.ID.Low, Offset: m.Offset, Timestamp: m.Timestamp,
			OriginTimestamp: m.OriginTimestamp, Payload: payload}
		if len(m.Headers) > 0 {
			cm.Headers = make(map[string]string, len(m.Headers))
			for _, h := range m.Headers {
				cm.Headers[h.Key.String()] = h.Value.String()
			}
		}
		batch.Messages = append(batch.Messages, cm)
	}
	t.c.counters.Errors.add(bad)
	t.c.counters.Filtered.add(filtered)
	t.c.observe(stageDecode, start)
	if len(batch.Messages) > 0 {
		pluginStart := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), t.c.rt.cfg.Plugins.CallTimeout.Duration)
		err := t.plugin.Consume(ctx, batch)
		cancel()
		t.c.observe(stagePlugin, pluginStart)
		if err != nil {
			if errors.Is(err, ErrPluginFailed) {
				t.c.fail(t.id, fmt.Errorf("consume: %w", err))
				t.fatal()
				return false
			}
			t.c.counters.Errors.add(1)
			t.log.Warn("plugin rejected a batch; it will be delivered again", zap.Error(err))
			if !atMostOnce {
				return false
			}
		} else {
			t.c.counters.Processed.add(len(batch.Messages))
		}
	}
	if !atMostOnce {
		last := msgs[len(msgs)-1].Offset
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		err := t.client.StoreConsumerOffset(ctx, t.binding.consumer, t.binding.stream, t.binding.topic, partition, last)
		cancel()
		if err != nil {
			t.c.counters.Errors.add(1)
			t.log.Warn("committing offset failed; the batch may be delivered again", zap.Uint64("offset", last), zap.Error(err))
			return false
		}
	}
	t.c.observe(stageTotal, start)
	batchLog(t.log, t.cfg.Verbose, "sink batch delivered", zap.Uint32("partition_id", partition),
		zap.Int("messages", len(batch.Messages)), zap.Int("filtered", filtered), zap.Int("bad", bad))
	return true
}

// splitBatches cuts polled messages into plugin batches of at most
// length messages. A poll reply holds one partition, and the plugin gets
// one partition per batch.
func splitBatches(msgs []client.Message, length int) [][]client.Message {
	var out [][]client.Message
	for len(msgs) > 0 {
		n := min(len(msgs), length)
		out = append(out, msgs[:n])
		msgs = msgs[n:]
	}
	return out
}
