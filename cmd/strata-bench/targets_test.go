package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCheckTargets(t *testing.T) {
	limits := &Limits{LoopbackMBps: 4000, WriteSyncMBps: 200}
	results := []*Result{
		{Workload: Workload{Name: "p", Mode: ModePinnedProducer}, Producers: &RoleResult{MBps: 1200}, ServerRSSPeakBytes: 100 << 20},
		{Workload: Workload{Name: "persisted", Mode: ModePinnedProducer, Durability: "persisted"}, Producers: &RoleResult{MBps: 100}, ServerRSSPeakBytes: 300 << 20},
		{Workload: Workload{Name: "e2e", Mode: ModeEndToEnd}, Producers: &RoleResult{MBps: 600}, EndToEnd: &Latency{P99: 3}},
	}
	targets := []SuiteTarget{
		{Workload: "p", Metric: "producer_mb_per_s", Min: 1000},
		{Workload: "persisted", Metric: "fraction_of_limit", Min: 0.7},
		{Workload: "e2e", Metric: "end_to_end_p99_ms", Max: 2},
		{Workload: "*", Metric: "server_rss_mib", Max: 1024},
		{Workload: "absent", Metric: "consumer_mb_per_s", Min: 1},
	}
	got := checkTargets(targets, results, limits)
	want := []struct {
		value      float64
		met, found bool
	}{{1200, true, true}, {0.5, false, true}, {3, false, true}, {300, true, true}, {0, false, false}}
	for i, w := range want {
		if got[i].Value != w.value || got[i].Met != w.met || got[i].Found != w.found {
			t.Fatalf("target %d: got %+v, want %+v", i, got[i], w)
		}
	}
	var out bytes.Buffer
	printTargets(&out, got)
	for _, s := range []string{"MISSED: 71% of the target", "MISSED by 1.5x", "not measured"} {
		if !strings.Contains(out.String(), s) {
			t.Fatalf("missing %q in:\n%s", s, out.String())
		}
	}
}
