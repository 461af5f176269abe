package strata_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stratabroker/strata/connectors"
	"github.com/stratabroker/strata/server/config"
)

// metricToken is a metric name in a PromQL expression: every series of
// ours, and the Go and process collectors'.
var metricToken = regexp.MustCompile(`\b(?:strata|go|process)_[a-z0-9_]+\b`)

// histogramSuffix ends the series names of a histogram family.
var histogramSuffix = regexp.MustCompile(`_(bucket|count|sum)$`)

// grafanaPanel is the part of a Grafana panel the test reads.
type grafanaPanel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	ID      int    `json:"id"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
}

// TestDashboardQueriesExist: every metric deploy/grafana/strata.json
// queries exists on a running strata-server and strata-connect with
// traffic (a renamed or dropped series breaks this test, not the
// dashboard), the dashboard covers what an operator looks at, and
// deploy/prometheus/prometheus.yml scrapes the programs' default
// addresses.
func TestDashboardQueriesExist(t *testing.T) {
	data, err := os.ReadFile("deploy/grafana/strata.json")
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Title  string         `json:"title"`
		UID    string         `json:"uid"`
		Panels []grafanaPanel `json:"panels"`
	}
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatalf("deploy/grafana/strata.json: %v", err)
	}
	if dashboard.Title == "" || dashboard.UID == "" {
		t.Fatal("the dashboard has no title or uid")
	}
	queried := map[string][]string{} // metric → panel titles
	ids := map[int]bool{}
	var titles []string
	for _, p := range dashboard.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		titles = append(titles, strings.ToLower(p.Title))
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || p.GridPos.W == 0 || p.GridPos.H == 0 {
			t.Errorf("panel %q has no query or no size", p.Title)
		}
		for _, target := range p.Targets {
			if strings.Count(target.Expr, "(") != strings.Count(target.Expr, ")") || strings.Count(target.Expr, "{") != strings.Count(target.Expr, "}") {
				t.Errorf("panel %q: unbalanced expression %s", p.Title, target.Expr)
			}
			names := metricToken.FindAllString(target.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %s queries no metric", p.Title, target.Expr)
			}
			for _, name := range names {
				queried[name] = append(queried[name], p.Title)
			}
		}
	}
	all := strings.Join(titles, "\n")
	for _, topic := range []string{"messages per second", "latency percentiles", "error code", "connections", "partition sync", "memory pool", "shard", "connector"} {
		if !strings.Contains(all, topic) {
			t.Errorf("no panel about %s", topic)
		}
	}

	st := startStack(t)
	exported := map[string]bool{}
	for _, url := range []string{st.server.httpBase + "/metrics", st.connectBase + "/metrics"} {
		for _, line := range strings.Split(scrape(t, url), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name := line[:strings.IndexAny(line, "{ ")]
			exported[name] = true
			exported[histogramSuffix.ReplaceAllString(name, "")] = true
		}
	}
	for name, panels := range queried {
		if !exported[name] {
			t.Errorf("%s (panels %q) is not exported by a running strata-server or strata-connect", name, panels)
		}
	}
	t.Logf("%d panels query %d metrics", len(dashboard.Panels), len(queried))

	scrapeConfig, err := os.ReadFile("deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	for job, target := range map[string]string{"strata-server": cfg.HTTP.Address, "strata-connect": connectors.DefaultRuntimeConfig().HTTP.Address} {
		block := regexp.MustCompile(`(?s)job_name: ` + regexp.QuoteMeta(job) + `\b.*?targets: \["([^"]+)"\]`).FindStringSubmatch(string(scrapeConfig))
		if block == nil || block[1] != target {
			t.Errorf("prometheus.yml: job %s scrapes %v, want the default %s", job, block, target)
		}
	}
}
