package main

import (
	"errors"
	"fmt"
	"time"
)

// Mode names of the workloads (issue 5).
const (
	ModePinnedProducer            = "pinned-producer"
	ModePinnedConsumer            = "pinned-consumer"
	ModePinnedProducerAndConsumer = "pinned-producer-and-consumer"
	ModeBalancedProducer          = "balanced-producer"
	ModeBalancedConsumerGroup     = "balanced-consumer-group"
	ModeEndToEnd                  = "end-to-end"
)

// Limits of a workload, named as STYLE.md rule 5 asks.
const (
	// messageSizeMin is the smallest payload: the verification header.
	messageSizeMin = payloadHeaderSize
	// messageSizeMax bounds one payload (the client allows 64 MB).
	messageSizeMax = 16 << 20
	// messagesPerBatchMax bounds one send or poll.
	messagesPerBatchMax = 100_000
	// actorsMax bounds producers and consumers.
	actorsMax = 1024
	// streamsMax bounds the number of streams a run creates.
	streamsMax = 1000
	// partitionsMax bounds partitions per topic.
	partitionsMax = 1000
)

// Errors of the benchmark.
var (
	// ErrConfig: the workload options do not make sense.
	ErrConfig = errors.New("invalid options")
	// ErrNotAvailable: the mode needs a broker feature that has not landed.
	ErrNotAvailable = errors.New("not available")
	// ErrVerify: a polled message failed verification.
	ErrVerify = errors.New("verification failed")
)

// Workload is one benchmark run's parameters.
type Workload struct {
	Name             string `json:"name"`
	Mode             string `json:"mode"`
	MessageSize      int    `json:"message_size"`
	MessagesPerBatch int    `json:"messages_per_batch"`
	// Batches is the batch count per producer (and what a consumer-only
	// run pre-fills per partition); 0 means run for Duration.
	Batches  int           `json:"batches"`
	Duration time.Duration `json:"duration_ns"`
	// Warmup is unmeasured time at the start; in consumer-only runs it
	// lengthens the pre-fill instead (every poll of the finite pre-filled
	// volume is measured).
	Warmup     time.Duration `json:"warmup_ns"`
	Producers  int           `json:"producers"`
	Consumers  int           `json:"consumers"`
	Streams    int           `json:"streams"`
	Partitions int           `json:"partitions"`
	Durability string        `json:"durability"`
	// RateMBps caps the total producer rate (MB = 10^6 bytes); 0 = none.
	RateMBps float64 `json:"rate_mb_s"`
}

// needsProducers reports whether the mode runs producers while measured.
func (w *Workload) needsProducers() bool {
	return !w.consumerOnly()
}

// consumerOnly reports whether the mode pre-fills its partitions unmeasured
// and measures only consumers (pinned-consumer, balanced-consumer-group).
func (w *Workload) consumerOnly() bool {
	return w.Mode == ModePinnedConsumer || w.Mode == ModeBalancedConsumerGroup
}

// needsConsumers reports whether the mode runs consumers.
func (w *Workload) needsConsumers() bool {
	switch w.Mode {
	case ModePinnedConsumer, ModePinnedProducerAndConsumer, ModeEndToEnd, ModeBalancedConsumerGroup:
		return true
	}
	return false
}

// pinned reports whether each producer owns one partition, so offsets are
// known in advance and polled payloads can be checked against them.
func (w *Workload) pinned() bool { return w.Mode != ModeBalancedProducer }

// slots is the number of (stream, partition) pairs.
func (w *Workload) slots() int { return w.Streams * w.Partitions }

// Validate checks the options and fills defaults for zero values.
func (w *Workload) Validate() error {
	if w.Streams == 0 {
		w.Streams = 1
	}
	if w.Partitions == 0 {
		w.Partitions = 1
	}
	if w.Durability == "" {
		w.Durability = "replicated"
	}
	switch w.Mode {
	case ModePinnedProducer, ModePinnedConsumer, ModePinnedProducerAndConsumer, ModeBalancedProducer, ModeEndToEnd,
		ModeBalancedConsumerGroup:
	default:
		return fmt.Errorf("%w: unknown mode %q", ErrConfig, w.Mode)
	}
	if w.Producers == 0 && w.needsProducers() {
		w.Producers = 1
	}
	if w.Consumers == 0 && w.needsConsumers() {
		w.Consumers = 1
	}
	if w.consumerOnly() && w.Producers == 0 {
		w.Producers = w.slots() // the pre-fill writers
	}
	switch {
	case w.MessageSize < messageSizeMin || w.MessageSize > messageSizeMax:
		return fmt.Errorf("%w: message size %d (%d..%d)", ErrConfig, w.MessageSize, messageSizeMin, messageSizeMax)
	case w.MessagesPerBatch < 1 || w.MessagesPerBatch > messagesPerBatchMax:
		return fmt.Errorf("%w: messages per batch %d (1..%d)", ErrConfig, w.MessagesPerBatch, messagesPerBatchMax)
	case w.Batches < 0 || (w.Batches == 0 && w.Duration <= 0):
		return fmt.Errorf("%w: give a batch count or a duration", ErrConfig)
	case w.Producers > actorsMax || w.Consumers > actorsMax || w.Producers < 0 || w.Consumers < 0:
		return fmt.Errorf("%w: at most %d producers and consumers", ErrConfig, actorsMax)
	case w.Streams < 1 || w.Streams > streamsMax:
		return fmt.Errorf("%w: streams %d (1..%d)", ErrConfig, w.Streams, streamsMax)
	case w.Partitions < 1 || w.Partitions > partitionsMax:
		return fmt.Errorf("%w: partitions %d (1..%d)", ErrConfig, w.Partitions, partitionsMax)
	case w.Durability != "replicated" && w.Durability != "persisted":
		return fmt.Errorf("%w: durability %q (replicated|persisted)", ErrConfig, w.Durability)
	case w.RateMBps < 0 || w.Warmup < 0:
		return fmt.Errorf("%w: negative rate or warm-up", ErrConfig)
	}
	if w.pinned() && w.Producers > w.slots() {
		return fmt.Errorf("%w: %d pinned producers need as many (stream, partition) pairs, have %d", ErrConfig, w.Producers, w.slots())
	}
	if w.Mode == ModeBalancedConsumerGroup && w.Streams != 1 {
		return fmt.Errorf("%w: %s runs one group on one topic (streams 1, got %d)", ErrConfig, w.Mode, w.Streams)
	}
	if w.needsConsumers() && w.Mode != ModeBalancedConsumerGroup && w.Consumers > w.slots() {
		return fmt.Errorf("%w: %d consumers need as many (stream, partition) pairs, have %d", ErrConfig, w.Consumers, w.slots())
	}
	if w.Mode == ModeEndToEnd && w.Consumers != w.Producers {
		return fmt.Errorf("%w: end-to-end pairs each producer with a consumer (got %d and %d)", ErrConfig, w.Producers, w.Consumers)
	}
	return nil
}

// slot maps actor i to its stream (0-based index) and partition id.
// Partitions are numbered from 0 (DESIGN.md decision 8: ids from 0).
func (w *Workload) slot(i int) (stream int, partition uint32) {
	return i % w.Streams, uint32((i / w.Streams) % w.Partitions)
}

// slotIndex numbers (stream index, partition index) pairs.
func (w *Workload) slotIndex(stream int, partition uint32) int {
	return stream*w.Partitions + int(partition)
}
