package server_test

import (
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
)

// TestMetricsMove checks the documented series change with traffic.
func TestMetricsMove(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	sent := sendAll(t, c, client.ID(0), client.ID(0), 1, 30, 50, 10)
	pollAll(t, c, client.ID(0), client.ID(0), 0, sent[0])
	if _, err := c.CreateStream(ctx(t), "s"); err == nil {
		t.Fatal("duplicate stream accepted")
	}
	values := metricValues(t, ts)
	want := map[string]float64{
		"strata_topic_messages_polled_total,stream_id=0,topic_id=0":   30,
		"strata_topic_messages_appended_total,stream_id=0,topic_id=0": 30,
		"strata_topic_info,stream=s,stream_id=0,topic=t,topic_id=0":   1,
		"strata_messages_appended_total":                              30,
		"strata_request_errors_total,code=1012":                       1,
		"strata_transport_connections,transport=tcp":                  1,
	}
	for name, v := range want {
		if values[name] != v {
			t.Errorf("%s = %v, want %v", name, values[name], v)
		}
	}
	if values["strata_request_duration_seconds,command=SendMessages"] < 3 {
		t.Errorf("send latency histogram has %v samples", values["strata_request_duration_seconds,command=SendMessages"])
	}
	if _, ok := values["strata_shard_queue_depth,shard=0"]; !ok {
		t.Error("no shard queue depth series")
	}
	if _, ok := values["strata_partition_flushes_total"]; !ok {
		t.Error("no flush counter")
	}
	build := 0
	for name, v := range values {
		if strings.HasPrefix(name, "strata_build_info,") && v == 1 && strings.Contains(name, "protocol_version=0.11.0") && strings.Contains(name, "goversion=go") {
			build++
		}
	}
	if build != 1 {
		t.Errorf("%d strata_build_info series", build)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes", "process_open_fds"} {
		if _, ok := values[name]; !ok {
			t.Errorf("no %s: the Go runtime and process collectors are missing", name)
		}
	}
	// strata_partition_syncs_total duplicated the sync histogram's _count.
	if _, ok := values["strata_partition_syncs_total"]; ok {
		t.Error("strata_partition_syncs_total is back")
	}
	// A renamed topic is renamed in strata_topic_info; a deleted one is gone.
	if err := c.UpdateTopic(ctx(t), client.ID(0), client.ID(0), "orders", nil); err != nil {
		t.Fatal(err)
	}
	if v := metricValues(t, ts)["strata_topic_info,stream=s,stream_id=0,topic=orders,topic_id=0"]; v != 1 {
		t.Errorf("renamed topic info = %v", v)
	}
	if err := c.DeleteTopic(ctx(t), client.ID(0), client.ID(0)); err != nil {
		t.Fatal(err)
	}
	for name := range metricValues(t, ts) {
		if strings.HasPrefix(name, "strata_topic_info,") {
			t.Errorf("%s after the topic was deleted", name)
		}
	}
}

// metricValues gathers the server's metrics as "name,label=value,..." →
// value (a histogram gives its sample count).
func metricValues(t *testing.T, ts *testServer) map[string]float64 {
	t.Helper()
	families, err := ts.srv.MetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				name += "," + l.GetName() + "=" + l.GetValue()
			}
			switch {
			case m.GetCounter() != nil:
				values[name] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				values[name] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				values[name] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return values
}
