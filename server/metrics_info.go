package server

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/stratabroker/strata/net/wire"
)

// buildRevision is the VCS revision the binary was built from, or
// "unknown" (builds with -buildvcs=false, go test).
func buildRevision() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// registerInfoMetrics adds what a dashboard needs besides the broker's own
// figures: the Go runtime and process collectors, strata_build_info and
// strata_topic_info (ids to names, read from the metadata view at scrape
// time). Called once the metadata is open.
func (s *Server) registerInfoMetrics() {
	major, minor, patch := wire.UnpackVersion(wire.ProtocolVersion)
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "strata_build_info",
		Help: "Always 1; the labels say which build serves: version, revision, goversion, protocol_version (Iggy's binary protocol).",
		ConstLabels: prometheus.Labels{"version": Version, "revision": buildRevision(), "goversion": runtime.Version(),
			"protocol_version": fmt.Sprintf("%d.%d.%d", major, minor, patch)},
	})
	build.Set(1)
	s.metrics.registry.MustRegister(build, &topicInfoCollector{s: s},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// topicInfoDesc is strata_topic_info: one series of value 1 per topic, so
// that a query can join the per-topic series (labelled by ids) to names:
//
//	strata_topic_messages_appended_total * on(stream_id, topic_id) group_left(stream, topic) strata_topic_info
var topicInfoDesc = prometheus.NewDesc("strata_topic_info",
	"Always 1 for each topic; joins stream_id and topic_id to the stream and topic names.",
	[]string{"stream_id", "topic_id", "stream", "topic"}, nil)

// topicInfoCollector reads the published metadata view at each scrape
// (safe from any goroutine: the view is immutable).
type topicInfoCollector struct{ s *Server }

func (c *topicInfoCollector) Describe(ch chan<- *prometheus.Desc) { ch <- topicInfoDesc }

func (c *topicInfoCollector) Collect(ch chan<- prometheus.Metric) {
	view := c.s.meta.snapshot()
	for _, stream := range view.Streams() {
		streamID := strconv.FormatUint(uint64(stream.ID), 10)
		for _, topic := range stream.Topics() {
			ch <- prometheus.MustNewConstMetric(topicInfoDesc, prometheus.GaugeValue, 1,
				streamID, strconv.FormatUint(uint64(topic.ID), 10), stream.Name, topic.Name)
		}
	}
}
