package connectors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/connectors/plugin"
	"github.com/stratabroker/strata/net/wire"
)

// Source path limits.
const (
	// sourceQueueMax bounds the batches polled but not yet sent.
	sourceQueueMax = 4
	// sendBackoffBase and sendBackoffMax bound the retry pause of a failed
	// send (doubling, capped).
	sendBackoffBase = 50 * time.Millisecond
	sendBackoffMax  = 5 * time.Second
	// emptyPollPause is the pause after a poll that returned nothing.
	emptyPollPause = 10 * time.Millisecond
)

// sourceRun is one run of a source: a poller task that asks the plugin for
// batches and queues them, and a forwarder task that transforms, sends,
// saves state and reports, batch by batch in order.
type sourceRun struct {
	c      *connector
	id     uint32
	cfg    *ConnectorConfig
	stream StreamConfig
	schema Schema
	plugin plugin.Source
	store  *StateStore
	client *client.Client
	log    *zap.Logger
	queue  chan plugin.ProducedBatch
	// pollCtx is cancelled when the run stops (or fails): the poller
	// returns and a send that fails is not retried.
	pollCtx  context.Context
	stopPoll context.CancelFunc
	// sendCtx is cancelled only when the shutdown timeout expires, so a
	// stop first lets queued batches that can be sent drain.
	sendCtx context.Context
}

// missingDestination reports whether err says the stream, topic or
// partition a source sends to does not exist: no retry can deliver the
// batch until someone creates it, so the connector fails (status error,
// naming it) instead of retrying for ever.
func missingDestination(err error) bool {
	if errors.Is(err, client.ErrNotFound) {
		return true
	}
	switch client.CodeOf(err) {
	case wire.ErrResourceNotFound, wire.ErrStreamIdNotFound, wire.ErrStreamNameNotFound,
		wire.ErrTopicIdNotFound, wire.ErrTopicNameNotFound, wire.ErrPartitionNotFound:
		return true
	}
	return false
}

// startSource opens the plugin, connects, and starts the tasks.
func (c *connector) startSource(ctx context.Context, cfg *ConnectorConfig, src plugin.Source, store *StateStore, req plugin.OpenRequest, log *zap.Logger) (*instance, error) {
	cl, err := c.rt.dial(ctx)
	if err != nil {
		_ = src.Close(ctx)
		return nil, fmt.Errorf("connect to %s: %w", c.rt.cfg.Strata.Address, err)
	}
	// The destination must exist (as a sink's must): a source started
	// before its stream would only retry failing sends.
	sc := cfg.Streams[0]
	if _, err := cl.GetTopic(ctx, client.ParseIdentifier(sc.Stream), client.ParseIdentifier(sc.Topic)); err != nil {
		_ = src.Close(ctx)
		if errors.Is(err, client.ErrNotFound) {
			switch _, serr := cl.GetStream(ctx, client.ParseIdentifier(sc.Stream)); {
			case errors.Is(serr, client.ErrNotFound):
				err = fmt.Errorf("stream %s does not exist: %w", sc.Stream, err)
			case serr == nil:
				err = fmt.Errorf("topic %s does not exist in stream %s: %w", sc.Topic, sc.Stream, err)
			}
		}
		_ = cl.Close()
		return nil, fmt.Errorf("producer for %s/%s: %w", sc.Stream, sc.Topic, err)
	}
	if err := src.Open(ctx, req); err != nil {
		_ = src.Close(ctx)
		_ = cl.Close()
		return nil, fmt.Errorf("open plugin: %w", err)
	}
	schema, _ := parseSchema(cfg.Streams[0].Schema)
	pollCtx, stopPoll := context.WithCancel(context.Background())
	sendCtx, cancelSend := context.WithCancel(context.Background())
	s := &sourceRun{c: c, id: req.ID, cfg: cfg, stream: cfg.Streams[0], schema: schema, plugin: src, store: store,
		client: cl, log: log, queue: make(chan plugin.ProducedBatch, sourceQueueMax), pollCtx: pollCtx, stopPoll: stopPoll, sendCtx: sendCtx}
	pollDone, fwdDone, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(pollDone)
		defer close(s.queue)
		s.poll()
	}()
	go func() {
		defer close(fwdDone)
		s.forward()
	}()
	go func() {
		<-pollDone
		<-fwdDone
		closeCtx, cancel := context.WithTimeout(context.Background(), c.rt.cfg.Plugins.CallTimeout.Duration)
		if err := src.Close(closeCtx); err != nil {
			log.Warn("closing source plugin", zap.Error(err))
		}
		cancel()
		if err := cl.Close(); err != nil {
			log.Debug("closing client", zap.Error(err))
		}
		cancelSend()
		close(done)
	}()
	timeout := c.rt.cfg.Shutdown.Timeout.Duration
	stop := func() {
		// 1. Stop the plugin's polling; the poller closes the queue as it
		// returns, so the forwarder drains what is queued and ends.
		stopPoll()
		// 2. Wait for the tasks, bounded; then cancel the sends that remain
		// (their batches stay unsaved and come again after a restart).
		select {
		case <-done:
			return
		case <-time.After(timeout):
			log.Warn("source did not drain within the shutdown timeout, cancelling", zap.Duration("timeout", timeout))
		}
		cancelSend()
		// An external plugin stuck in a poll would hold the run until its
		// call timeout: kill it.
		killPlugin(src)
		<-done
	}
	return &instance{stop: stop, done: done}, nil
}

// poll asks the plugin for batches until stopped or the plugin fails.
func (s *sourceRun) poll() {
	for s.pollCtx.Err() == nil {
		b, err := s.plugin.Poll(s.pollCtx)
		if err != nil {
			if s.pollCtx.Err() != nil && !errors.Is(err, ErrPluginFailed) {
				return
			}
			s.c.fail(s.id, fmt.Errorf("poll: %w", err))
			return
		}
		if len(b.Messages) == 0 {
			select {
			case <-s.pollCtx.Done():
				return
			case <-time.After(emptyPollPause):
			}
			continue
		}
		s.c.counters.Produced.add(len(b.Messages))
		// A batch the plugin produced is always queued: the queue is
		// bounded and the forwarder drains it, so this waits for room.
		s.queue <- b
	}
}

// forward handles queued batches in order until the queue closes.
func (s *sourceRun) forward() {
	for b := range s.queue {
		if !s.forwardBatch(b) {
			// Cancelled mid-send: the batch is unsent and its state
			// unsaved; later batches must not overtake it.
			for range s.queue {
			}
			return
		}
	}
}

// forwardBatch transforms, sends, saves and reports one batch; false when
// the send was cancelled by a shutdown.
func (s *sourceRun) forwardBatch(b plugin.ProducedBatch) bool {
	start := time.Now()
	msgs := make([]client.Message, 0, len(b.Messages))
	filtered, bad := 0, 0
	for i := range b.Messages {
		m := &b.Messages[i]
		payload, keep, err := transformPayload(s.schema, s.cfg.Transforms, m.Payload)
		if err != nil {
			bad++
			s.log.Warn("dropping a message the schema cannot read", zap.Error(err))
			continue
		}
		if !keep {
			filtered++
			continue
		}
		msg := client.Message{Payload: payload}
		msg.ID.Low = m.ID
		for k, v := range m.Headers {
			msg.Headers = append(msg.Headers, client.StringHeader(k, v))
		}
		msgs = append(msgs, msg)
	}
	s.c.counters.Errors.add(bad)
	s.c.counters.Filtered.add(filtered)
	s.c.observe(stagePrepare, start)
	sendStart := time.Now()
	if !s.send(msgs) {
		return false
	}
	s.c.observe(stageSend, sendStart)
	result := plugin.BatchResult{Sent: true, Messages: len(msgs)}
	if b.State != nil {
		saveStart := time.Now()
		if err := s.store.Save(b.State); err != nil {
			// The next batch's save retries; the plugin hears of it.
			s.c.counters.Errors.add(1)
			s.log.Error("saving source state", zap.Error(err))
			result.Sent, result.Error = false, err.Error()
		}
		s.c.observe(stageStateSave, saveStart)
	}
	pluginStart := time.Now()
	if err := s.plugin.Report(s.sendCtx, result); err != nil {
		if errors.Is(err, ErrPluginFailed) {
			s.c.fail(s.id, fmt.Errorf("report: %w", err))
		} else {
			s.c.counters.Errors.add(1)
			s.log.Warn("plugin rejected the batch report", zap.Error(err))
		}
	}
	s.c.observe(stagePlugin, pluginStart)
	s.c.observe(stageTotal, start)
	batchLog(s.log, s.cfg.Verbose, "source batch sent", zap.Int("messages", len(msgs)), zap.Int("filtered", filtered))
	return true
}

// send sends msgs in chunks of batch_length. A failed chunk is retried
// with capped backoff; chunks already sent are never sent again. False
// when cancelled, when the run is stopping (a failing send is not retried
// then: the batch is unsaved and comes again after a restart, and the
// shutdown does not wait for a broker that refuses it), or when the
// destination does not exist (the connector fails).
func (s *sourceRun) send(msgs []client.Message) bool {
	partitioning := client.Balanced()
	if s.stream.PartitionID != nil {
		partitioning = client.PartitionID(*s.stream.PartitionID)
	}
	stream, topic := client.ParseIdentifier(s.stream.Stream), client.ParseIdentifier(s.stream.Topic)
	for len(msgs) > 0 {
		n := min(len(msgs), s.stream.BatchLength)
		backoff := sendBackoffBase
		for {
			_, err := s.client.SendMessages(s.sendCtx, stream, topic, partitioning, msgs[:n])
			if err == nil {
				break
			}
			if missingDestination(err) {
				s.c.fail(s.id, fmt.Errorf("send to %s/%s: %w", s.stream.Stream, s.stream.Topic, err))
				s.stopPoll()
				return false
			}
			s.c.counters.Errors.add(1)
			if s.pollCtx.Err() != nil {
				s.log.Warn("send failed while stopping; the batch comes again after a restart", zap.Error(err))
				return false
			}
			s.log.Warn("send failed, retrying the same batch", zap.Error(err), zap.Duration("backoff", backoff))
			select {
			case <-s.sendCtx.Done():
				return false
			case <-s.pollCtx.Done():
				return false
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, sendBackoffMax)
		}
		s.c.counters.Sent.add(n)
		msgs = msgs[n:]
	}
	return true
}
