package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stratabroker/strata/client"
)

// Runner limits.
const (
	// emptyPollPause is how long a consumer that found nothing waits.
	emptyPollPause = 50 * time.Microsecond
	// stalledPollsMax bounds consecutive empty polls for offsets the broker
	// already acknowledged before the run is declared broken.
	stalledPollsMax = 200_000
	// readBackStallsMax and readBackPause bound the read-back rounds that
	// find nothing new while messages are still missing.
	readBackStallsMax = 1000
	readBackPause     = time.Millisecond
)

// errStalled: the broker acknowledged messages it does not serve.
var errStalled = errors.New("broker acknowledged messages it does not serve to consumers")

// actorStats is what one actor measured.
type actorStats struct {
	index      int
	stream     int
	partition  uint32
	messages   uint64
	bytes      uint64
	first, end time.Time
	hist       *hdrhistogram.Histogram
}

// run is one workload's shared state.
type run struct {
	w      *Workload
	target Target
	// measureFrom is when warm-up ends; deadline is when producers stop
	// (zero when a batch count bounds the run).
	measureFrom, deadline time.Time
	// produced holds, per (stream, partition) slot, the acknowledged
	// high-water offset; producersDone is set after the last store.
	produced      []atomic.Uint64
	producersDone atomic.Bool
	// meters feed the time series (series.go); sample sets them.
	meters   *meters
	verified atomic.Uint64
	// sent counts every acknowledged message, warm-up and pre-fill
	// included.
	sent  atomic.Uint64
	e2eMu sync.Mutex
	e2e   *hdrhistogram.Histogram
}

// RunOptions are how a workload is run, beyond the workload itself.
type RunOptions struct {
	// Live turns on the progress line (on stderr).
	Live bool
	// ReadBack makes a run without consumers (pinned-producer,
	// balanced-producer) read every message back after the producers are
	// done and verify it, unmeasured.
	ReadBack bool
}

// Run executes workload w against target and returns its result. live
// turns on the progress line (on stderr).
func Run(ctx context.Context, target Target, w Workload, live bool) (*Result, error) {
	return RunWith(ctx, target, w, RunOptions{Live: live})
}

// RunWith executes workload w against target with opts.
func RunWith(ctx context.Context, target Target, w Workload, opts RunOptions) (*Result, error) {
	live := opts.Live
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if err := target.Setup(ctx, &w); err != nil {
		return nil, err
	}
	r := &run{w: &w, target: target, produced: make([]atomic.Uint64, w.slots()), e2e: newHistogram()}
	res := &Result{Workload: w, Target: target.Name(), Started: time.Now()}

	if w.consumerOnly() {
		// Pre-fill every slot, unmeasured (for the duration plus the
		// warm-up), then measure the consumers.
		var gt GroupTarget
		if w.Mode == ModeBalancedConsumerGroup {
			var ok bool
			if gt, ok = target.(GroupTarget); !ok {
				return nil, fmt.Errorf("%w: %s has no consumer groups for %s", ErrNotAvailable, target.Name(), w.Mode)
			}
		}
		r.schedule(time.Now().Add(w.Warmup), 0)
		if _, err := r.actors(ctx, w.slots(), r.producer, false); err != nil {
			return nil, fmt.Errorf("pre-fill: %w", err)
		}
		r.producersDone.Store(true)
		if gt != nil {
			if err := r.runGroup(ctx, gt, res, live); err != nil {
				return nil, err
			}
			res.Verified, res.Sent = r.verified.Load(), r.sent.Load()
			return res, nil
		}
		// The pre-filled volume is finite and a consumer may read it all
		// within a warm-up, so consumer-only runs measure every poll.
		r.schedule(time.Now(), 0)
		stop := r.sample(res, live, 0, w.Consumers)
		cons, err := r.actors(ctx, w.Consumers, r.consumer, true)
		stop()
		if err != nil {
			return nil, err
		}
		res.Consumers = role(cons)
		res.Verified, res.Sent = r.verified.Load(), r.sent.Load()
		return res, nil
	}

	r.schedule(time.Now(), w.Warmup)
	consumers := 0
	if w.needsConsumers() {
		consumers = w.Consumers
	}
	stop := r.sample(res, live, w.Producers, consumers)
	var prod, cons []actorStats
	var perr, cerr error
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if w.needsConsumers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cons, cerr = r.actors(ctx, w.Consumers, r.consumer, true)
			if cerr != nil {
				cancel()
			}
		}()
	}
	prod, perr = r.actors(ctx, w.Producers, r.producer, true)
	r.producersDone.Store(true)
	if perr != nil {
		cancel()
	}
	wg.Wait()
	stop()
	if err := errors.Join(perr, cerr); err != nil {
		return nil, err
	}
	res.Producers = role(prod)
	if w.needsConsumers() {
		res.Consumers = role(cons)
	}
	if w.Mode == ModeEndToEnd {
		l := summarise(r.e2e)
		res.EndToEnd = &l
	}
	res.Sent = r.sent.Load()
	if opts.ReadBack && !w.needsConsumers() {
		if err := r.readBack(ctx); err != nil {
			return nil, fmt.Errorf("read back: %w", err)
		}
		res.ReadBack = true
	}
	res.Verified = r.verified.Load()
	return res, nil
}

// readBack polls every (stream, partition) slot from offset 0 after the
// producers are done and verifies each message, until every acknowledged
// message was read; a broker that serves fewer (or more) messages than it
// acknowledged fails the run.
func (r *run) readBack(ctx context.Context) error {
	w := r.w
	conn, err := r.target.Consumer(ctx, 0)
	if err != nil {
		return err
	}
	defer conn.Close()
	verifiers := make([]*Verifier, w.slots())
	for stream := 0; stream < w.Streams; stream++ {
		for p := 0; p < w.Partitions; p++ {
			v := NewVerifier(uint32(p), 0, w.pinned())
			v.frames = r.target.FramesVerifiable()
			verifiers[w.slotIndex(stream, uint32(p))] = v
		}
	}
	want := r.sent.Load()
	var msgs []client.Message
	stalled := 0
	for {
		var total uint64
		progressed := false
		for stream := 0; stream < w.Streams; stream++ {
			for p := 0; p < w.Partitions; p++ {
				v := verifiers[w.slotIndex(stream, uint32(p))]
				for {
					msgs, err = conn.Poll(ctx, stream, uint32(p), v.Next(), w.MessagesPerBatch, msgs)
					if err != nil {
						return fmt.Errorf("stream %d partition %d at offset %d: %w", stream, p, v.Next(), err)
					}
					if len(msgs) == 0 {
						break
					}
					for j := range msgs {
						if err := v.Check(&msgs[j]); err != nil {
							return err
						}
					}
					r.verified.Add(uint64(len(msgs)))
					progressed = true
				}
				total += v.Verified
			}
		}
		switch {
		case total == want:
			return nil
		case total > want:
			return fmt.Errorf("%w: read %d messages back, %d were acknowledged", ErrVerify, total, want)
		case progressed:
			stalled = 0
		default:
			if stalled++; stalled > readBackStallsMax {
				return fmt.Errorf("%w: read %d messages back, %d were acknowledged", errStalled, total, want)
			}
			if err := pause(ctx, readBackPause); err != nil {
				return err
			}
		}
	}
}

// schedule sets the warm-up end and the producers' deadline from now.
func (r *run) schedule(now time.Time, warmup time.Duration) {
	r.measureFrom = now.Add(warmup)
	r.deadline = time.Time{}
	if r.w.Batches == 0 {
		r.deadline = r.measureFrom.Add(r.w.Duration)
	}
}

// actors runs n copies of body concurrently and collects their stats; the
// first error cancels the others.
func (r *run) actors(ctx context.Context, n int, body func(context.Context, int, bool) (actorStats, error), measured bool) ([]actorStats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]actorStats, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = body(ctx, i, measured)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return out, firstError(errs)
}

// firstError returns the first error that is not a cancellation echo.
func firstError(errs []error) error {
	var cancelled error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, context.Canceled) {
			return err
		}
		cancelled = err
	}
	return cancelled
}

// producer is producer i's loop: fill a batch, send it, record the send
// round trip, honour the rate limit.
func (r *run) producer(ctx context.Context, i int, measured bool) (actorStats, error) {
	w := r.w
	stream, partition := w.slot(i)
	st := actorStats{index: i, stream: stream, partition: partition, hist: newHistogram()}
	conn, err := r.target.Producer(ctx, i)
	if err != nil {
		return st, err
	}
	defer conn.Close()
	n, size := w.MessagesPerBatch, w.MessageSize
	buf := make([]byte, n*size)
	msgs := make([]client.Message, n)
	for j := range msgs {
		msgs[j].Payload = buf[j*size : (j+1)*size]
	}
	balanced := !w.pinned()
	partField := partition
	if balanced {
		partField = partitionUnknown
	}
	var rateBytesPerSec float64
	if measured && w.RateMBps > 0 {
		rateBytesPerSec = w.RateMBps * bytesPerMB / float64(w.Producers)
	}
	var key uint64 // next offset (pinned) or sequence (balanced)
	var sentBytes uint64
	// counted is the batches that count towards w.Batches: the measured
	// ones in a measured run (the warm-up's come on top), all of them in
	// an unmeasured one (a pre-fill).
	counted := 0
	began := time.Now()
	for b := 0; ; b++ {
		if w.Batches > 0 && counted >= w.Batches {
			break
		}
		// A measured producer sends at least one measured batch, so a
		// target slower than the window still posts a figure.
		if !r.deadline.IsZero() && !time.Now().Before(r.deadline) && (!measured || st.messages > 0) {
			break
		}
		for j := range msgs {
			k := key + uint64(j)
			if balanced {
				k = uint64(i)<<40 | k
			}
			fillPayload(msgs[j].Payload, partField, k, uint32(j), uint32(i))
			msgs[j].ID = client.MessageID{Low: k, High: uint64(i) + 1}
		}
		t0 := time.Now()
		origin := uint64(t0.UnixMicro())
		for j := range msgs {
			msgs[j].OriginTimestamp = origin
			stampOrigin(msgs[j].Payload, origin)
		}
		if err := conn.Send(ctx, stream, partition, balanced, msgs); err != nil {
			return st, fmt.Errorf("producer %d batch %d: %w", i, b, err)
		}
		end := time.Now()
		key += uint64(n)
		if !balanced {
			r.produced[w.slotIndex(stream, partition)].Store(key)
		}
		sentBytes += uint64(n * size)
		r.sent.Add(uint64(n))
		if !measured {
			counted++
		}
		if measured && !t0.Before(r.measureFrom) {
			counted++
			if st.messages == 0 {
				st.first = t0
			}
			st.end = end
			st.messages += uint64(n)
			st.bytes += uint64(n * size)
			recordMicros(st.hist, end.Sub(t0))
			r.meters.producers[i].record(uint64(n*size), uint64(n), end.Sub(t0))
		}
		if rateBytesPerSec > 0 {
			due := began.Add(time.Duration(float64(sentBytes) / rateBytesPerSec * float64(time.Second)))
			if wait := time.Until(due); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return st, ctx.Err()
				}
			}
		}
	}
	return st, nil
}

// consumer is consumer i's loop: poll its slot from offset 0, verify every
// message, stop once producers are done and it has read all they wrote.
func (r *run) consumer(ctx context.Context, i int, measured bool) (actorStats, error) {
	w := r.w
	stream, partition := w.slot(i)
	slot := w.slotIndex(stream, partition)
	st := actorStats{index: i, stream: stream, partition: partition, hist: newHistogram()}
	conn, err := r.target.Consumer(ctx, i)
	if err != nil {
		return st, err
	}
	defer conn.Close()
	v := NewVerifier(partition, 0, true)
	v.frames = r.target.FramesVerifiable()
	var msgs []client.Message
	stalled := 0
	for {
		done := r.producersDone.Load()
		high := r.produced[slot].Load()
		if done && v.Next() >= high {
			break
		}
		t0 := time.Now()
		msgs, err = conn.Poll(ctx, stream, partition, v.Next(), w.MessagesPerBatch, msgs)
		if err != nil {
			return st, fmt.Errorf("consumer %d at offset %d: %w", i, v.Next(), err)
		}
		end := time.Now()
		if len(msgs) == 0 {
			if v.Next() < high {
				if stalled++; stalled > stalledPollsMax {
					return st, fmt.Errorf("%w: partition %d offset %d (acknowledged up to %d)", errStalled, partition, v.Next(), high)
				}
			}
			if err := pause(ctx, emptyPollPause); err != nil {
				return st, err
			}
			continue
		}
		stalled = 0
		var bytes uint64
		for j := range msgs {
			if err := v.Check(&msgs[j]); err != nil {
				return st, err
			}
			bytes += uint64(len(msgs[j].Payload))
		}
		r.verified.Add(uint64(len(msgs)))
		if w.Mode == ModeEndToEnd && !t0.Before(r.measureFrom) {
			nowMicros := end.UnixMicro()
			r.e2eMu.Lock()
			for j := range msgs {
				recordMicros(r.e2e, time.Duration(nowMicros-int64(payloadOrigin(msgs[j].Payload)))*time.Microsecond)
			}
			r.e2eMu.Unlock()
			r.meters.e2e.recordLatencies(len(msgs), func(j int) time.Duration {
				return time.Duration(nowMicros-int64(payloadOrigin(msgs[j].Payload))) * time.Microsecond
			})
		}
		if measured && !t0.Before(r.measureFrom) {
			if st.messages == 0 {
				st.first = t0
			}
			st.end = end
			st.messages += uint64(len(msgs))
			st.bytes += bytes
			recordMicros(st.hist, end.Sub(t0))
			r.meters.consumers[i].record(bytes, uint64(len(msgs)), end.Sub(t0))
		}
	}
	return st, nil
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// role aggregates actor stats.
func role(stats []actorStats) *RoleResult {
	rr := &RoleResult{}
	merged := newHistogram()
	var first, end time.Time
	for _, s := range stats {
		secs := s.end.Sub(s.first).Seconds()
		rr.Actors = append(rr.Actors, ActorResult{
			Index: s.index, Stream: s.stream, Partition: s.partition,
			Messages: s.messages, Bytes: s.bytes, Seconds: secs,
			MBps: rate(s.bytes, secs) / bytesPerMB, MsgsPerSec: rate(s.messages, secs),
			Latency: summarise(s.hist),
		})
		merged.Merge(s.hist)
		rr.Messages += s.messages
		rr.Bytes += s.bytes
		if s.messages == 0 {
			continue
		}
		if first.IsZero() || s.first.Before(first) {
			first = s.first
		}
		if s.end.After(end) {
			end = s.end
		}
	}
	rr.Seconds = end.Sub(first).Seconds()
	rr.MBps = rate(rr.Bytes, rr.Seconds) / bytesPerMB
	rr.MsgsPerSec = rate(rr.Messages, rr.Seconds)
	rr.Latency = summarise(merged)
	return rr
}
