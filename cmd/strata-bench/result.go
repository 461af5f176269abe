package main

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: latencies are recorded in microseconds from 1 µs to
// latencyMicrosMax with three significant figures.
const (
	latencyMicrosMax     = 60_000_000
	latencySignificant   = 3
	distributionBucketsN = 40
	bytesPerMB           = 1_000_000
)

// newHistogram returns an empty latency histogram.
func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, latencyMicrosMax, latencySignificant)
}

// recordMicros records d, clamped into the histogram's range.
func recordMicros(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < 1 {
		us = 1
	}
	if us > latencyMicrosMax {
		us = latencyMicrosMax
	}
	_ = h.RecordValue(us) // in range by construction
}

// Latency summarises a histogram in milliseconds.
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	P9999 float64 `json:"p99_99_ms"`
	Max   float64 `json:"max_ms"`
	// Distribution is the latency at evenly spaced log-percentiles, for the
	// report's chart.
	Distribution []DistributionPoint `json:"distribution,omitempty"`
}

// DistributionPoint is the latency at one percentile.
type DistributionPoint struct {
	Percentile float64 `json:"percentile"`
	Millis     float64 `json:"ms"`
}

// summarise turns a histogram into a Latency.
func summarise(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	l := Latency{
		Count: h.TotalCount(), Mean: h.Mean() / 1000,
		P50: ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)),
		P95: ms(h.ValueAtQuantile(95)), P99: ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)), P9999: ms(h.ValueAtQuantile(99.99)),
		Max: ms(h.Max()),
	}
	// Percentiles 1 - 10^(-k/8) for k = 0..: 0, 25%, 43%, ... 99.999%.
	for k := 0; k < distributionBucketsN; k++ {
		p := 100 * (1 - pow10(-float64(k)/8))
		if p > 99.999 {
			break
		}
		l.Distribution = append(l.Distribution, DistributionPoint{Percentile: p, Millis: ms(h.ValueAtQuantile(p))})
	}
	l.Distribution = append(l.Distribution, DistributionPoint{Percentile: 100, Millis: l.Max})
	return l
}

// ActorResult is one producer's or consumer's figures.
type ActorResult struct {
	Index      int     `json:"index"`
	Stream     int     `json:"stream"`
	Partition  uint32  `json:"partition"`
	Messages   uint64  `json:"messages"`
	Bytes      uint64  `json:"bytes"`
	Seconds    float64 `json:"seconds"`
	MBps       float64 `json:"mb_per_s"`
	MsgsPerSec float64 `json:"msgs_per_s"`
	Latency    Latency `json:"batch_latency"`
}

// RoleResult aggregates one side (producers or consumers).
type RoleResult struct {
	Actors     []ActorResult `json:"actors"`
	Messages   uint64        `json:"messages"`
	Bytes      uint64        `json:"bytes"`
	Seconds    float64       `json:"seconds"`
	MBps       float64       `json:"mb_per_s"`
	MsgsPerSec float64       `json:"msgs_per_s"`
	// Latency is the per-batch latency (send round trip for producers,
	// poll round trip for consumers) over all actors.
	Latency Latency `json:"batch_latency"`
}

// TimelinePoint is the measured rate over one 250 ms interval, as files
// written before Series existed carry it (read by `strata-bench report`).
type TimelinePoint struct {
	Seconds      float64 `json:"t_s"`
	ProducerMBps float64 `json:"producer_mb_per_s"`
	ConsumerMBps float64 `json:"consumer_mb_per_s"`
}

// Result is one workload's outcome.
type Result struct {
	Workload  Workload    `json:"workload"`
	Target    string      `json:"target"`
	Started   time.Time   `json:"started"`
	Producers *RoleResult `json:"producers,omitempty"`
	Consumers *RoleResult `json:"consumers,omitempty"`
	// EndToEnd is send-to-receive latency per message (end-to-end mode).
	EndToEnd *Latency `json:"end_to_end_latency,omitempty"`
	// Verified counts polled messages that passed verification (by the
	// consumers, or by the read-back of a producer-only run).
	Verified uint64 `json:"verified_messages"`
	// Sent counts the messages producers sent and the server acknowledged,
	// warm-up and pre-fill included.
	Sent uint64 `json:"sent_messages"`
	// ReadBack is set when a producer-only run read its messages back.
	ReadBack bool `json:"read_back"`
	// Series is the run's time series, per actor and per role (series.go).
	Series *Series `json:"series,omitempty"`
	// Timeline is the total MB/s of older files; runs no longer write it.
	Timeline []TimelinePoint `json:"timeline,omitempty"`
	// Group is what a balanced-consumer-group run observed of its group.
	Group *GroupResult `json:"consumer_group,omitempty"`
	// ServerRSSPeakBytes is the server's peak resident set (suite runs
	// against a child process only).
	ServerRSSPeakBytes uint64 `json:"server_rss_peak_bytes,omitempty"`
}

// GroupResult is the consumer-group side of a balanced-consumer-group run.
type GroupResult struct {
	Members int `json:"members"`
	// Syncs counts SyncConsumerGroup calls.
	Syncs uint64 `json:"syncs"`
	// FencedPolls counts polls answered with partition_id 0xFFFFFFFF (the
	// member no longer may poll that partition and re-syncs).
	FencedPolls uint64 `json:"fenced_polls"`
	// GenerationChanges counts syncs that returned a generation other than
	// the member's previous one (rebalances the members noticed).
	GenerationChanges uint64 `json:"generation_changes"`
	// Generation is the highest group generation a member saw.
	Generation uint64 `json:"generation"`
	// Commits counts StoreConsumerOffset calls; CommitLatency is their
	// round trip.
	Commits       uint64  `json:"commits"`
	CommitLatency Latency `json:"commit_latency"`
}

// headline returns the figure a workload is judged by: consumer MB/s for
// consumer-only runs (pinned-consumer, balanced-consumer-group), else producer MB/s.
func (r *Result) headline() float64 {
	if r.Workload.consumerOnly() && r.Consumers != nil {
		return r.Consumers.MBps
	}
	if r.Producers != nil {
		return r.Producers.MBps
	}
	return 0
}
