package strata_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// TestMetricsPassPromlint runs Prometheus's linter on the /metrics of a
// running strata-server and strata-connect with traffic (so that every
// family has series): counters end in _total and nothing else does
// (strata_connectors_sinks_total was a gauge), base units, snake_case,
// help text. It also checks that strata-connect's own series share one
// prefix and exist only for the connector kind they apply to.
func TestMetricsPassPromlint(t *testing.T) {
	st := startStack(t)
	for name, url := range map[string]string{"strata-server": st.server.httpBase + "/metrics", "strata-connect": st.connectBase + "/metrics"} {
		text := scrape(t, url)
		problems, err := promlint.New(strings.NewReader(text)).Lint()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s: %s", name, p.Metric, p.Text)
		}
		t.Logf("%s: %d lines linted", name, strings.Count(text, "\n"))
	}
	text := scrape(t, st.connectBase+"/metrics")
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "go_") || strings.HasPrefix(line, "process_") || strings.HasPrefix(line, "promhttp_") {
			continue
		}
		if !strings.HasPrefix(line, "strata_connectors_") {
			t.Errorf("strata-connect series without the strata_connectors_ prefix: %s", line)
		}
		for _, notForSinks := range []string{"messages_produced_total", "messages_sent_total", `stage="send"`, `stage="prepare"`, `stage="state_save"`} {
			if strings.Contains(line, `connector_type="sink"`) && strings.Contains(line, notForSinks) {
				t.Errorf("a sink has a series of sources: %s", line)
			}
		}
		for _, notForSources := range []string{"messages_consumed_total", "messages_processed_total", `stage="decode"`} {
			if strings.Contains(line, `connector_type="source"`) && strings.Contains(line, notForSources) {
				t.Errorf("a source has a series of sinks: %s", line)
			}
		}
	}
	for _, want := range []string{"strata_connectors_sources 1", "strata_connectors_sinks 1", `strata_connectors_messages_sent_total{connector_key="gen",connector_type="source"}`} {
		if !strings.Contains(text, want) {
			t.Errorf("strata-connect /metrics lacks %s", want)
		}
	}
}
