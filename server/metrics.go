package server

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus collectors, in a registry of their
// own so that several servers can live in one test process.
type metrics struct {
	registry *prometheus.Registry

	requests         prometheus.Counter
	connections      prometheus.Gauge
	messagesSent     prometheus.Counter
	bytesSent        prometheus.Counter
	messagesPolled   prometheus.Counter
	metadataOps      prometheus.Counter
	partitionSyncs   prometheus.Counter
	recoveredTornOff prometheus.Counter
}

// newMetrics creates and registers the collectors.
func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_requests_total", Help: "Client requests received.",
		}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "strata_connections", Help: "Open client connections.",
		}),
		messagesSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_messages_appended_total", Help: "Messages appended to partitions.",
		}),
		bytesSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_message_bytes_appended_total", Help: "Batch bytes appended to partitions.",
		}),
		messagesPolled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_messages_polled_total", Help: "Messages returned by polls.",
		}),
		metadataOps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_metadata_operations_total", Help: "Metadata operations committed.",
		}),
		partitionSyncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_partition_syncs_total", Help: "fdatasync calls on partition segments (group commits).",
		}),
		recoveredTornOff: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_recovery_dropped_bytes_total", Help: "Bytes of torn segment tails dropped at recovery.",
		}),
	}
	m.registry.MustRegister(m.requests, m.connections, m.messagesSent, m.bytesSent,
		m.messagesPolled, m.metadataOps, m.partitionSyncs, m.recoveredTornOff)
	return m
}
