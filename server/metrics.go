package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/pool"
)

// metrics are the server's Prometheus collectors, in a registry of their
// own so that several servers can live in one test process. The README
// documents every series.
type metrics struct {
	registry *prometheus.Registry

	requests        prometheus.Counter
	requestDuration *prometheus.HistogramVec
	errors          *prometheus.CounterVec
	connections     prometheus.Gauge
	connectionsByTr *prometheus.GaugeVec
	messagesSent    prometheus.Counter
	bytesSent       prometheus.Counter
	messagesPolled  prometheus.Counter
	topicAppended   *prometheus.CounterVec
	topicBytes      *prometheus.CounterVec
	topicPolled     *prometheus.CounterVec
	metadataOps     prometheus.Counter
	// syncDuration observes every partition fdatasync (group commit); its
	// _count is the number of syncs.
	syncDuration     prometheus.Histogram
	flushes          prometheus.Counter
	segmentsSealed   prometheus.Counter
	recoveredTornOff prometheus.Counter
	// partitionFenced is 1 for each fenced partition (no series for the
	// others).
	partitionFenced  *prometheus.GaugeVec
	shardConnections *prometheus.GaugeVec
	requestsPlaced   *prometheus.CounterVec
	// placedShard and placedForward are requestsPlaced's two series.
	placedShard, placedForward prometheus.Counter

	// metadataCheckpoints counts the metadata group's checkpoints
	// (snapshot.bin and a superblock copy written).
	metadataCheckpoints prometheus.Counter
	// metadataSyncs counts the metadata journal's syncs (shared by the
	// concurrent metadata ops: group commit).
	metadataSyncs prometheus.Counter
	// connectionsLimited counts connections refused or closed by a
	// limit (conn_limits.go); memoryReleased the bytes of idle buffers
	// dropped (memory_release.go).
	connectionsLimited *prometheus.CounterVec
	memoryReleased     prometheus.Counter
	// Partition superblocks: offsets skipped at recovery, sends that
	// waited for a reservation, superblock copies stored in the
	// background.
	recoveredOffsetsSkipped, reservationStalls, superblockStores prometheus.Counter
	// segmentTransfers counts segment state transfers installed
	// (partition_transfer.go).
	segmentTransfers prometheus.Counter
}

// requestBuckets are the latency buckets of request histograms (seconds).
var requestBuckets = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}

// newMetrics creates and registers the collectors.
func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_requests_total", Help: "Client requests received.",
		}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "strata_request_duration_seconds", Help: "Time to handle a request, by command.",
			Buckets: requestBuckets,
		}, []string{"command"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_request_errors_total", Help: "Requests answered with an error, by Iggy error code.",
		}, []string{"code"}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "strata_connections", Help: "Open client connections and sessions.",
		}),
		connectionsByTr: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "strata_transport_connections", Help: "Open client connections by transport.",
		}, []string{"transport"}),
		shardConnections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "strata_shard_connections", Help: "Open client connections served by each shard.",
		}, []string{"shard"}),
		requestsPlaced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_requests_placed_total", Help: "Requests of shard-served connections, by where they ran: on the connection's shard, or forwarded to the owning shard or the metadata writer.",
		}, []string{"place"}),
		messagesSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_messages_appended_total", Help: "Messages appended to partitions.",
		}),
		bytesSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_message_bytes_appended_total", Help: "Batch bytes appended to partitions.",
		}),
		messagesPolled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_messages_polled_total", Help: "Messages returned by polls.",
		}),
		topicAppended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_topic_messages_appended_total", Help: "Messages appended, by stream and topic id (names: strata_topic_info).",
		}, []string{"stream_id", "topic_id"}),
		topicBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_topic_bytes_appended_total", Help: "Batch bytes appended, by stream and topic id (names: strata_topic_info).",
		}, []string{"stream_id", "topic_id"}),
		topicPolled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_topic_messages_polled_total", Help: "Messages polled, by stream and topic id (names: strata_topic_info).",
		}, []string{"stream_id", "topic_id"}),
		metadataOps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_metadata_operations_total", Help: "Metadata operations committed.",
		}),
		syncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "strata_partition_sync_duration_seconds", Help: "Duration of partition fdatasync calls (group commits); _count counts them.",
			Buckets: requestBuckets,
		}),
		flushes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_partition_flushes_total", Help: "Writes of buffered batches to segments.",
		}),
		segmentsSealed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_segments_sealed_total", Help: "Segments sealed because they reached the segment size.",
		}),
		recoveredTornOff: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_recovery_dropped_bytes_total", Help: "Bytes of torn segment tails dropped at recovery.",
		}),
		partitionFenced: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "strata_partition_fenced", Help: "1 for each fenced partition: it serves only its verified prefix and refuses sends until repaired.",
		}, []string{"stream_id", "topic_id", "partition_id"}),
		connectionsLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_connections_closed_by_limit_total", Help: "Client connections refused at accept or closed by a limit, by transport and limit.",
		}, []string{"transport", "limit"}),
		memoryReleased: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_memory_released_bytes_total", Help: "Bytes of idle buffers dropped so their memory goes back to the operating system.",
		}),
	}
	m.recoveredOffsetsSkipped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "strata_recovery_skipped_offsets_total", Help: "Offsets recovery skipped because they were reserved before a crash (never given to a message twice).",
	})
	m.reservationStalls = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "strata_partition_reservation_stalls_total", Help: "Sends that waited for a partition superblock sync because the offset reservation ran out.",
	})
	m.superblockStores = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "strata_partition_superblock_stores_total", Help: "Partition superblock copies stored in the background (durable frontier, offset reservation).",
	})
	m.registry.MustRegister(m.recoveredOffsetsSkipped, m.reservationStalls, m.superblockStores)
	m.segmentTransfers = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "strata_partition_segment_transfers_total", Help: "Segment state transfers a replica installed: its segments missed the history of its group's state and were fetched from a peer.",
	})
	m.registry.MustRegister(m.segmentTransfers)
	m.placedShard = m.requestsPlaced.WithLabelValues("shard")
	m.placedForward = m.requestsPlaced.WithLabelValues("forward")
	m.registry.MustRegister(m.requests, m.requestDuration, m.errors, m.connections, m.connectionsByTr,
		m.messagesSent, m.bytesSent, m.messagesPolled, m.topicAppended, m.topicBytes, m.topicPolled,
		m.metadataOps, m.syncDuration, m.flushes, m.segmentsSealed, m.recoveredTornOff,
		m.shardConnections, m.requestsPlaced, m.partitionFenced, m.connectionsLimited, m.memoryReleased)
	m.metadataCheckpoints = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "strata_metadata_checkpoints_total", Help: "Metadata group checkpoints taken (snapshot.bin and a superblock copy written).",
	})
	m.registry.MustRegister(m.metadataCheckpoints)
	m.metadataSyncs = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "strata_metadata_journal_syncs_total", Help: "Syncs of the metadata group's files (journal.wal, and at a checkpoint snapshot.bin and the superblock); concurrent metadata operations share them.",
	})
	m.registry.MustRegister(m.metadataSyncs)
	return m
}

// transportName is the transport label of a connection.
func transportName(transport uint8) string {
	switch transport {
	case transportTCP:
		return "tcp"
	case transportQUIC:
		return "quic"
	case transportWebSocket:
		return "websocket"
	case wire.TransportHTTP:
		return "http"
	}
	return "other"
}

// commandName names a request for the duration histogram.
func commandName(h *wire.RequestHeader) string {
	if h.Operation == wire.OpNonReplicated {
		return h.Code.String()
	}
	return h.Operation.String()
}

// observeRequest records a handled request.
func (m *metrics) observeRequest(h *wire.RequestHeader, r response, started time.Time) {
	m.requestDuration.WithLabelValues(commandName(h)).Observe(time.Since(started).Seconds())
	code := r.status
	if code == wire.ErrorCodeOK && r.evict != 0 {
		code = r.evict.SDKError(0, 0)
	}
	if code == wire.ErrorCodeOK && h.Operation.IsResultFramed() {
		if _, committed, err := wire.SplitResult(r.body); err == nil {
			code = committed
		}
	}
	if code != wire.ErrorCodeOK {
		m.errors.WithLabelValues(strconv.FormatUint(uint64(code), 10)).Inc()
	}
}

// registerPoolMetrics exports the memory pool's counters, read at scrape
// time.
func (s *Server) registerPoolMetrics() {
	if s.pool == nil {
		return
	}
	gauge := func(name, help string, read func(pool.Stats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return read(s.pool.Stats()) })
	}
	counter := func(name, help string, read func(pool.Stats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return read(s.pool.Stats()) })
	}
	s.metrics.registry.MustRegister(
		gauge("strata_memory_pool_in_use_bytes", "Bytes of pooled buffers lent out.", func(st pool.Stats) float64 { return float64(st.BytesInUse) }),
		gauge("strata_memory_pool_cached_bytes", "Bytes of idle pooled buffers.", func(st pool.Stats) float64 { return float64(st.BytesCached) }),
		counter("strata_memory_pool_hits_total", "Buffer requests served from a bucket's cache.", func(st pool.Stats) float64 { return float64(st.Hits) }),
		counter("strata_memory_pool_misses_total", "Buffer requests that allocated.", func(st pool.Stats) float64 { return float64(st.Misses) }),
		counter("strata_memory_pool_outside_allocations_total", "Buffers allocated outside the pool (over budget or over the largest bucket).", func(st pool.Stats) float64 { return float64(st.OutsideAllocations) }),
	)
}

// registerShardMetrics exports each shard's inbox depth.
func (s *Server) registerShardMetrics() {
	for _, sh := range s.shards {
		sh := sh
		s.metrics.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "strata_shard_queue_depth",
			Help:        "Tasks waiting in a shard's inbox.",
			ConstLabels: prometheus.Labels{"shard": strconv.Itoa(sh.ID())},
		}, func() float64 { return float64(sh.QueueDepth()) }))
	}
}
