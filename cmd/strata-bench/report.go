package main

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/stratabroker/strata/bench"
)

// Report is everything one invocation measured; it is the JSON file's
// schema and the HTML report's data.
type Report struct {
	Title     string    `json:"title"`
	Generated time.Time `json:"generated"`
	Commit    string    `json:"commit,omitempty"`
	Machine   string    `json:"machine"`
	Command   string    `json:"command"`
	Limits    *Limits   `json:"limits,omitempty"`
	Results   []*Result `json:"results"`
	// Comparisons pair each workload's Strata and peer results.
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Targets are the goals checked against this run.
	Targets []TargetOutcome `json:"targets,omitempty"`
}

// Comparison is one workload measured on Strata and on a peer.
type Comparison struct {
	Workload string  `json:"workload"`
	Peer     string  `json:"peer"`
	Strata   float64 `json:"strata_mb_per_s"`
	Other    float64 `json:"peer_mb_per_s"`
	Ratio    float64 `json:"ratio"`
	// StrataP99 and OtherP99 are the batch (or end-to-end) p99 in ms.
	StrataP99 float64 `json:"strata_p99_ms"`
	OtherP99  float64 `json:"peer_p99_ms"`
}

// writeJSON writes rep to path.
func writeJSON(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// Chart geometry of the HTML report.
const (
	chartWidth  = 560.0
	chartHeight = 200.0
	chartMargin = 40.0
)

// chart is one inline SVG line chart.
type chart struct {
	Title  string
	XLabel string
	YLabel string
	YMax   string
	XMax   string
	Lines  []chartLine
}

type chartLine struct {
	Name   string
	Color  string
	Points string
}

// htmlResult is a Result with its charts.
type htmlResult struct {
	*Result
	Throughput chart
	Latency    chart
}

// writeHTML renders rep into path with bench.ReportTemplate.
func writeHTML(path string, rep *Report) error {
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"f1":  func(v float64) string { return fmt.Sprintf("%.1f", v) },
		"f3":  func(v float64) string { return fmt.Sprintf("%.3f", v) },
		"mib": func(v uint64) string { return fmt.Sprintf("%.0f", float64(v)/(1<<20)) },
		"add": func(a, b int) int { return a + b },
		"mul": func(a, b int) int { return a * b },
	}).Parse(bench.ReportTemplate)
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	data := struct {
		*Report
		Items []htmlResult
	}{Report: rep}
	for _, r := range rep.Results {
		data.Items = append(data.Items, htmlResult{Result: r, Throughput: throughputChart(r), Latency: latencyChart(r)})
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := tmpl.Execute(f, data); err != nil {
		_ = f.Close()
		return fmt.Errorf("render report: %w", err)
	}
	return f.Close()
}

// throughputChart plots producer and consumer MB/s over time.
func throughputChart(r *Result) chart {
	c := chart{Title: "Throughput over time", XLabel: "seconds", YLabel: "MB/s"}
	var xMax, yMax float64
	for _, p := range r.Timeline {
		xMax = math.Max(xMax, p.Seconds)
		yMax = math.Max(yMax, math.Max(p.ProducerMBps, p.ConsumerMBps))
	}
	if xMax == 0 || yMax == 0 {
		return c
	}
	yMax *= 1.1
	c.XMax, c.YMax = fmt.Sprintf("%.1f", xMax), fmt.Sprintf("%.0f", yMax)
	var prod, cons []string
	for _, p := range r.Timeline {
		x := chartMargin + p.Seconds/xMax*(chartWidth-chartMargin)
		prod = append(prod, point(x, p.ProducerMBps/yMax))
		cons = append(cons, point(x, p.ConsumerMBps/yMax))
	}
	if r.Producers != nil {
		c.Lines = append(c.Lines, chartLine{Name: "producers", Color: "#1f77b4", Points: strings.Join(prod, " ")})
	}
	if r.Consumers != nil {
		c.Lines = append(c.Lines, chartLine{Name: "consumers", Color: "#d62728", Points: strings.Join(cons, " ")})
	}
	return c
}

// latencyChart plots latency against percentile on a log "nines" axis.
func latencyChart(r *Result) chart {
	c := chart{Title: "Latency distribution", XLabel: "percentile (log nines: 0, 90, 99, 99.9, 99.99...)", YLabel: "ms"}
	type series struct {
		name, color string
		l           *Latency
	}
	var all []series
	if r.Producers != nil {
		all = append(all, series{"send batch", "#1f77b4", &r.Producers.Latency})
	}
	if r.Consumers != nil {
		all = append(all, series{"poll batch", "#d62728", &r.Consumers.Latency})
	}
	if r.EndToEnd != nil {
		all = append(all, series{"end-to-end", "#2ca02c", r.EndToEnd})
	}
	const ninesMax = 5.0
	var yMax float64
	for _, s := range all {
		yMax = math.Max(yMax, s.l.Max)
	}
	if yMax == 0 {
		return c
	}
	yMax *= 1.1
	c.XMax, c.YMax = "99.999", fmt.Sprintf("%.2f", yMax)
	for _, s := range all {
		var pts []string
		for _, d := range s.l.Distribution {
			nines := ninesMax
			if d.Percentile < 100 {
				nines = math.Min(ninesMax, -math.Log10(1-d.Percentile/100))
			}
			pts = append(pts, point(chartMargin+nines/ninesMax*(chartWidth-chartMargin), d.Millis/yMax))
		}
		c.Lines = append(c.Lines, chartLine{Name: s.name, Color: s.color, Points: strings.Join(pts, " ")})
	}
	return c
}

// point formats a chart point from an x pixel and a 0..1 height.
func point(x, frac float64) string {
	y := chartHeight - chartMargin/2 - frac*(chartHeight-chartMargin)
	return fmt.Sprintf("%.1f,%.1f", x, y)
}

// writeReports writes JSON to jsonPath (when set) and HTML to htmlPath
// (when set) and says where on out.
func writeReports(out io.Writer, rep *Report, jsonPath, htmlPath string) error {
	if jsonPath != "" {
		if err := writeJSON(jsonPath, rep); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", jsonPath)
	}
	if htmlPath != "" {
		if err := writeHTML(htmlPath, rep); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", htmlPath)
	}
	return nil
}
