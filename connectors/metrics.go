package connectors

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Stage labels of strata_connectors_stage_duration_seconds.
const (
	stageDecode    = "decode"
	stagePrepare   = "prepare"
	stagePlugin    = "plugin"
	stageSend      = "send"
	stageStateSave = "state_save"
	stageTotal     = "total"
)

// stageBucketsSeconds are the histogram buckets of stage durations.
var stageBucketsSeconds = []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// MetricsPrefix starts the name of every series of strata-connect's own.
const MetricsPrefix = "strata_connectors_"

// stagesOf are the stages each kind of connector has: a series exists
// only for those (a source never decodes, a sink never sends).
var stagesOf = map[string][]string{
	KindSource: {stagePrepare, stageSend, stageStateSave, stagePlugin, stageTotal},
	KindSink:   {stageDecode, stagePlugin, stageTotal},
}

// Metrics holds the runtime's Prometheus families in its own registry,
// with the Go runtime and process collectors.
type Metrics struct {
	Registry                                      *prometheus.Registry
	produced, sent, consumed, processed, filtered *prometheus.CounterVec
	errors                                        *prometheus.CounterVec
	stage                                         *prometheus.HistogramVec
	sourcesTotal, sourcesRunning                  prometheus.Gauge
	sinksTotal, sinksRunning                      prometheus.Gauge
}

// newMetrics registers every family.
func newMetrics() *Metrics {
	labels := []string{"connector_key", "connector_type"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricsPrefix + name, Help: help}, labels)
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricsPrefix + name, Help: help})
	}
	m := &Metrics{
		Registry:  prometheus.NewRegistry(),
		produced:  counter("messages_produced_total", "Messages a source plugin produced (sources only)."),
		sent:      counter("messages_sent_total", "Messages a source sent to the stream (sources only)."),
		consumed:  counter("messages_consumed_total", "Messages a sink polled from the stream (sinks only)."),
		processed: counter("messages_processed_total", "Messages a sink plugin accepted (sinks only)."),
		filtered:  counter("messages_filtered_total", "Messages dropped on purpose by the filter transform."),
		errors:    counter("errors_total", "Unexpected drops and failures (decode, send, state save, plugin)."),
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricsPrefix + "stage_duration_seconds",
			Help: "Time per batch in each stage of the connector's kind.", Buckets: stageBucketsSeconds}, append(labels, "stage")),
		sourcesTotal:   gauge("sources", "Configured source connectors."),
		sourcesRunning: gauge("sources_running", "Source connectors in status running."),
		sinksTotal:     gauge("sinks", "Configured sink connectors."),
		sinksRunning:   gauge("sinks_running", "Sink connectors in status running."),
	}
	m.Registry.MustRegister(m.produced, m.sent, m.consumed, m.processed, m.filtered, m.errors, m.stage,
		m.sourcesTotal, m.sourcesRunning, m.sinksTotal, m.sinksRunning,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// counter is one connector's counter: an atomic for /stats and the bound
// Prometheus series, so the hot path does no label lookup. prom is nil
// for a counter the connector's kind does not have (no series).
type counter struct {
	n    atomic.Uint64
	prom prometheus.Counter
}

func (c *counter) add(n int) {
	if n <= 0 {
		return
	}
	c.n.Add(uint64(n))
	if c.prom != nil {
		c.prom.Add(float64(n))
	}
}

// Counters are one connector's counters, kept across restarts.
type Counters struct {
	Produced, Sent, Consumed, Processed, Filtered, Errors counter
	stages                                                map[string]prometheus.Observer
}

// newCounters binds a connector's series: those of its kind only.
func (m *Metrics) newCounters(key, kind string) *Counters {
	c := &Counters{stages: map[string]prometheus.Observer{}}
	if kind == KindSource {
		c.Produced.prom = m.produced.WithLabelValues(key, kind)
		c.Sent.prom = m.sent.WithLabelValues(key, kind)
	} else {
		c.Consumed.prom = m.consumed.WithLabelValues(key, kind)
		c.Processed.prom = m.processed.WithLabelValues(key, kind)
	}
	c.Filtered.prom = m.filtered.WithLabelValues(key, kind)
	c.Errors.prom = m.errors.WithLabelValues(key, kind)
	for _, s := range stagesOf[kind] {
		c.stages[s] = m.stage.WithLabelValues(key, kind, s)
	}
	return c
}

// CounterSnapshot is the /stats view of Counters.
type CounterSnapshot struct {
	Produced  uint64 `json:"messages_produced"`
	Sent      uint64 `json:"messages_sent"`
	Consumed  uint64 `json:"messages_consumed"`
	Processed uint64 `json:"messages_processed"`
	Filtered  uint64 `json:"messages_filtered"`
	Errors    uint64 `json:"errors"`
}

func (c *Counters) snapshot() CounterSnapshot {
	return CounterSnapshot{Produced: c.Produced.n.Load(), Sent: c.Sent.n.Load(), Consumed: c.Consumed.n.Load(),
		Processed: c.Processed.n.Load(), Filtered: c.Filtered.n.Load(), Errors: c.Errors.n.Load()}
}
