package main

import (
	"fmt"
	"io"
	"math"
)

// SuiteTarget is one of the goals, checked against a suite run and
// printed as met or missed (never a test failure: timings are benchmarks).
type SuiteTarget struct {
	// Workload names the result; "*" means the worst over all results.
	Workload string `json:"workload"`
	// Metric is producer_mb_per_s, consumer_mb_per_s, fraction_of_limit,
	// end_to_end_p99_ms or server_rss_mib.
	Metric string  `json:"metric"`
	Min    float64 `json:"min,omitempty"`
	Max    float64 `json:"max,omitempty"`
	Note   string  `json:"note"`
}

// TargetOutcome is a target's measured value.
type TargetOutcome struct {
	SuiteTarget
	Value float64 `json:"value"`
	Met   bool    `json:"met"`
	// Found is false when the suite did not produce the figure.
	Found bool `json:"found"`
}

// metric reads one target metric from a result.
func metric(r *Result, name string, limits *Limits) (float64, bool) {
	switch name {
	case "producer_mb_per_s":
		if r.Producers != nil {
			return r.Producers.MBps, true
		}
	case "consumer_mb_per_s":
		if r.Consumers != nil {
			return r.Consumers.MBps, true
		}
	case "fraction_of_limit":
		if limits != nil {
			if l, _ := limits.For(r.Workload); l > 0 {
				return r.headline() / l, true
			}
		}
	case "end_to_end_p99_ms":
		if r.EndToEnd != nil {
			return r.EndToEnd.P99, true
		}
	case "server_rss_mib":
		if r.ServerRSSPeakBytes > 0 {
			return float64(r.ServerRSSPeakBytes) / (1 << 20), true
		}
	}
	return 0, false
}

// checkTargets evaluates the targets against the results.
func checkTargets(targets []SuiteTarget, results []*Result, limits *Limits) []TargetOutcome {
	var out []TargetOutcome
	for _, t := range targets {
		o := TargetOutcome{SuiteTarget: t}
		if t.Max > 0 {
			o.Value = math.Inf(-1)
		} else {
			o.Value = math.Inf(1)
		}
		for _, r := range results {
			if t.Workload != "*" && r.Workload.Name != t.Workload {
				continue
			}
			v, ok := metric(r, t.Metric, limits)
			if !ok {
				continue
			}
			o.Found = true
			if t.Max > 0 {
				o.Value = math.Max(o.Value, v)
			} else {
				o.Value = math.Min(o.Value, v)
			}
		}
		if !o.Found {
			o.Value = 0
		}
		o.Met = o.Found && (t.Max <= 0 || o.Value <= t.Max) && (t.Min <= 0 || o.Value >= t.Min)
		out = append(out, o)
	}
	return out
}

// printTargets writes one line per target: met, or missed and by how much.
func printTargets(out io.Writer, outcomes []TargetOutcome) {
	if len(outcomes) == 0 {
		return
	}
	fmt.Fprintln(out, "targets (issue 5):")
	for _, o := range outcomes {
		goal, verdict := "", "met"
		switch {
		case o.Max > 0:
			goal = fmt.Sprintf("<= %g", o.Max)
		default:
			goal = fmt.Sprintf(">= %g", o.Min)
		}
		switch {
		case !o.Found:
			verdict = "not measured"
		case !o.Met && o.Max > 0:
			verdict = fmt.Sprintf("MISSED by %.1fx", o.Value/o.Max)
		case !o.Met:
			verdict = fmt.Sprintf("MISSED: %.0f%% of the target", 100*o.Value/o.Min)
		}
		fmt.Fprintf(out, "  %-20s %-20s %10.3f  goal %-8s %s (%s)\n", o.Workload, o.Metric, o.Value, goal, verdict, o.Note)
	}
}
