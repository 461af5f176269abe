package main

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"regexp"
	"strings"
	"time"
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

// numberArray is an indented JSON array of numbers and nulls (a series
// column), which writeJSON puts on one line.
var (
	numberArray = regexp.MustCompile(`\[\s+(?:-?[0-9][0-9.eE+-]*|null)(?:,\s+(?:-?[0-9][0-9.eE+-]*|null))*\s+\]`)
	whitespace  = regexp.MustCompile(`\s+`)
)

// writeJSON writes rep to path, indented, each series column on one line.
func writeJSON(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	b = numberArray.ReplaceAllFunc(b, func(m []byte) []byte { return whitespace.ReplaceAll(m, nil) })
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// readReport reads a report written by writeJSON.
func readReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%w: %s is not a strata-bench result file: %w", ErrConfig, path, err)
	}
	return &rep, nil
}

// reportInput is one report of an HTML page and the label its results
// carry on the charts ("" for a page of one report: the target's name).
type reportInput struct {
	Label  string
	File   string
	Report *Report
}

// writeHTML renders rep into path.
func writeHTML(path string, rep *Report) error {
	return writeHTMLPage(path, "", []reportInput{{Report: rep}})
}

// writeHTMLPage renders the inputs overlaid on one page into path; title
// "" takes the single input's title.
func writeHTMLPage(path, title string, inputs []reportInput) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := renderHTML(f, title, inputs); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// renderHTML writes the self-contained page: the tables, and the charts
// as data for the inlined uPlot (assets/).
func renderHTML(w io.Writer, title string, inputs []reportInput) error {
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"f1":  func(v float64) string { return fmt.Sprintf("%.1f", v) },
		"f2":  func(v float64) string { return fmt.Sprintf("%.2f", v) },
		"f3":  func(v float64) string { return fmt.Sprintf("%.3f", v) },
		"f0":  func(v float64) string { return fmt.Sprintf("%.0f", v) },
		"mib": func(v uint64) string { return fmt.Sprintf("%.0f", float64(v)/(1<<20)) },
	}).Parse(reportTemplate)
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	v := buildView(title, inputs)
	if err := tmpl.Execute(w, v); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

// pageView is the template's data.
type pageView struct {
	Title      string
	Inputs     []reportInput
	Multi      bool
	Rows       []resultRow
	SideBySide []sideRow
	Groups     []groupView
	Charts     []chartSpec
	UPlotJS    template.JS
	UPlotCSS   template.CSS
	ReportJS   template.JS
	ReportCSS  template.CSS
}

// source is one result on the charts.
type source struct {
	Label  string
	Color  string
	Result *Result
}

// resultRow is one row of the results table.
type resultRow struct {
	Source, Workload, Role string
	MBps, MsgsPerSec       float64
	Latency                Latency
	Verified               string
}

// sideRow is one source of a workload measured by several.
type sideRow struct {
	Workload, Source    string
	First               bool
	MBps, P99           float64
	MBpsRatio, P99Ratio float64
	HasRatio            bool
}

// groupView is one workload's section: its sources' descriptions and the
// indices of its charts in pageView.Charts.
type groupView struct {
	Name   string
	Lines  []string
	Charts []int
	Notes  []string
}

// chartSpec is one chart for assets/report.js. Each source's columns come
// in a table with its own x column (seconds, or the "nines" of a
// percentile for kind "nines"); Series describes the tables' columns in
// order. The page aligns the tables with uPlot.join: a line continues
// across another source's x values and breaks where its own value is
// null (an interval that completed no batch).
type chartSpec struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	Group  string `json:"group,omitempty"`
	YLabel string `json:"y_label"`
	Unit   string `json:"unit"`
	YLog   bool   `json:"y_log,omitempty"`
	// Smooth: the page's moving-average control applies to this chart.
	Smooth bool `json:"smooth,omitempty"`
	// GapS: a line breaks where its values are null for longer than this
	// (seconds), and continues across shorter runs of intervals without
	// a completed batch.
	GapS   float64      `json:"gap_s,omitempty"`
	Series []seriesSpec `json:"series"`
	Tables []chartTable `json:"tables"`
}

// chartTable is one source's columns of a chart, sampled at X.
type chartTable struct {
	X    Times    `json:"x"`
	Data []Floats `json:"data"`
}

// seriesSpec is one line's look; Show false starts it hidden (a click
// on the legend shows it).
type seriesSpec struct {
	Label string    `json:"label"`
	Color string    `json:"color"`
	Dash  []float64 `json:"dash,omitempty"`
	Width float64   `json:"width"`
	Show  bool      `json:"show"`
}

// palette colours sources in order of first appearance (Tableau 10).
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// Line styles.
var (
	dashConsumers = []float64{7, 4}
	dashE2E       = []float64{2, 3}
	dashP90       = []float64{10, 3, 2, 3}
	dashP99       = []float64{6, 3}
	dashMax       = []float64{2, 3}
)

// actorAlpha is appended to a colour for per-actor lines.
const actorAlpha = "a0"

// actorColor is actor i's line colour: the palette's next colours after
// the source's when the chart has one source (per-actor lines shown), the
// source's own, lighter, when several share the chart.
func actorColor(s source, single bool, i int) string {
	if !single {
		return s.Color + actorAlpha
	}
	base := 0
	for k, c := range palette {
		if c == s.Color {
			base = k
		}
	}
	return palette[(base+1+i)%len(palette)] + actorAlpha
}

// buildView lays the inputs out: every workload name is one section whose
// charts overlay every result of that name across the inputs (Strata and
// NATS in a comparison, run A and run B in `strata-bench report A B`).
func buildView(title string, inputs []reportInput) *pageView {
	v := &pageView{Title: title, Inputs: inputs, Multi: len(inputs) > 1,
		UPlotJS: template.JS(uplotJS), UPlotCSS: template.CSS(uplotCSS),
		ReportJS: template.JS(reportJS), ReportCSS: template.CSS(reportCSS)}
	if v.Title == "" && len(inputs) > 0 {
		v.Title = inputs[0].Report.Title
	}
	colors := map[string]string{}
	var order []string
	groups := map[string][]source{}
	for _, in := range inputs {
		targets := map[string]bool{}
		for _, r := range in.Report.Results {
			targets[r.Target] = true
		}
		for _, r := range in.Report.Results {
			label := r.Target
			if in.Label != "" {
				label = in.Label
				if len(targets) > 1 {
					label += " " + r.Target
				}
			}
			if _, ok := colors[label]; !ok {
				colors[label] = palette[len(colors)%len(palette)]
			}
			name := r.Workload.Name
			if _, ok := groups[name]; !ok {
				order = append(order, name)
			}
			groups[name] = append(groups[name], source{Label: label, Color: colors[label], Result: r})
		}
	}
	for _, name := range order {
		srcs := groups[name]
		for _, s := range srcs {
			v.Rows = append(v.Rows, rows(s)...)
		}
		if len(srcs) > 1 {
			v.SideBySide = append(v.SideBySide, sideBySide(name, srcs)...)
		}
		g := groupView{Name: name}
		for _, s := range srcs {
			g.Lines = append(g.Lines, describe(s))
		}
		charts, notes := groupCharts(fmt.Sprintf("w%d", len(v.Groups)), srcs)
		g.Notes = notes
		for _, c := range charts {
			g.Charts = append(g.Charts, len(v.Charts))
			v.Charts = append(v.Charts, c)
		}
		v.Groups = append(v.Groups, g)
	}
	return v
}

// rows are a result's lines of the results table.
func rows(s source) []resultRow {
	r := s.Result
	var out []resultRow
	if p := r.Producers; p != nil {
		row := resultRow{Source: s.Label, Workload: r.Workload.Name, Role: fmt.Sprintf("producers (%d)", len(p.Actors)),
			MBps: p.MBps, MsgsPerSec: p.MsgsPerSec, Latency: p.Latency}
		// A run without consumers says how its messages were checked
		// (files from before read-back have no Sent and say nothing).
		switch {
		case r.Consumers != nil:
		case r.ReadBack:
			row.Verified = fmt.Sprintf("%d of %d read back", r.Verified, r.Sent)
		case r.Sent > 0:
			row.Verified = fmt.Sprintf("not read back (%d acknowledged)", r.Sent)
		}
		out = append(out, row)
	}
	if c := r.Consumers; c != nil {
		out = append(out, resultRow{Source: s.Label, Workload: r.Workload.Name, Role: fmt.Sprintf("consumers (%d)", len(c.Actors)),
			MBps: c.MBps, MsgsPerSec: c.MsgsPerSec, Latency: c.Latency, Verified: fmt.Sprint(r.Verified)})
	}
	if e := r.EndToEnd; e != nil {
		out = append(out, resultRow{Source: s.Label, Workload: r.Workload.Name, Role: "end-to-end", Latency: *e})
	}
	return out
}

// sideBySide compares every source of a workload with its first.
func sideBySide(name string, srcs []source) []sideRow {
	var out []sideRow
	base := srcs[0].Result
	for i, s := range srcs {
		row := sideRow{Workload: name, Source: s.Label, First: i == 0, MBps: s.Result.headline(), P99: headlineP99(s.Result)}
		if i > 0 && base.headline() > 0 && headlineP99(base) > 0 {
			row.HasRatio = true
			row.MBpsRatio = row.MBps / base.headline()
			row.P99Ratio = row.P99 / headlineP99(base)
		}
		out = append(out, row)
	}
	return out
}

// describe is a source's workload line.
func describe(s source) string {
	w := s.Result.Workload
	d := fmt.Sprintf("%s: %s, %d B × %d/batch, %d producers, %d consumers, %d streams × %d partitions, %s",
		s.Label, w.Mode, w.MessageSize, w.MessagesPerBatch, w.Producers, w.Consumers, max(w.Streams, 1), w.Partitions, w.Durability)
	if w.RateMBps > 0 {
		d += fmt.Sprintf(", capped at %.1f MB/s", w.RateMBps)
	}
	if s.Result.ServerRSSPeakBytes > 0 {
		d += fmt.Sprintf(", server peak RSS %.0f MiB", float64(s.Result.ServerRSSPeakBytes)/(1<<20))
	}
	return d
}

// role is one side of a result for the charts.
type roleRef struct {
	name   string // "producers", "consumers", "end-to-end"
	actor  string // per-actor label prefix
	dash   []float64
	series *RoleSeries
	lat    *LatencySeries
	dist   *Latency
}

// roles lists a result's sides with their series (legacy files get a
// series of totals from their timeline).
func roles(r *Result) []roleRef {
	s := r.Series
	if s == nil {
		s = legacySeries(r)
	}
	var out []roleRef
	if r.Producers != nil {
		ref := roleRef{name: "producers", actor: "producer", dist: &r.Producers.Latency}
		if s != nil && s.Producers != nil {
			ref.series, ref.lat = s.Producers, &s.Producers.Total.Latency
		}
		out = append(out, ref)
	}
	if r.Consumers != nil {
		ref := roleRef{name: "consumers", actor: "consumer", dash: dashConsumers, dist: &r.Consumers.Latency}
		if s != nil && s.Consumers != nil {
			ref.series, ref.lat = s.Consumers, &s.Consumers.Total.Latency
		}
		out = append(out, ref)
	}
	if r.EndToEnd != nil {
		ref := roleRef{name: "end-to-end", dash: dashE2E, dist: r.EndToEnd}
		if s != nil {
			ref.lat = s.EndToEnd
		}
		out = append(out, ref)
	}
	return out
}

// legacySeries converts the total MB/s timeline of a file written before
// Series existed (messages/s follow from the fixed message size; it has
// no latency over time and no per-actor figures).
func legacySeries(r *Result) *Series {
	if len(r.Timeline) == 0 {
		return nil
	}
	s := &Series{IntervalS: 0.25}
	var prod, cons RateSeries
	for _, p := range r.Timeline {
		if p.Seconds <= 0 {
			continue
		}
		s.T = append(s.T, p.Seconds)
		for _, x := range []struct {
			rs   *RateSeries
			mbps float64
		}{{&prod, p.ProducerMBps}, {&cons, p.ConsumerMBps}} {
			x.rs.MBps = append(x.rs.MBps, x.mbps)
			x.rs.MsgsPerSec = append(x.rs.MsgsPerSec, x.mbps*bytesPerMB/float64(max(r.Workload.MessageSize, 1)))
		}
	}
	if r.Producers != nil {
		s.Producers = &RoleSeries{Total: prod}
	}
	if r.Consumers != nil {
		s.Consumers = &RoleSeries{Total: cons}
	}
	return s
}

// chartBuilder collects one chart's series, table by table.
type chartBuilder struct {
	spec chartSpec
}

// table starts the columns of a source sampled at x.
func (b *chartBuilder) table(x Times) {
	b.spec.Tables = append(b.spec.Tables, chartTable{X: x})
}

// add appends a column to the current table unless it has no value.
func (b *chartBuilder) add(s seriesSpec, col Floats) {
	found := false
	for _, v := range col {
		if !math.IsNaN(v) {
			found = true
			break
		}
	}
	if !found || len(b.spec.Tables) == 0 {
		return
	}
	t := &b.spec.Tables[len(b.spec.Tables)-1]
	t.Data = append(t.Data, col)
	b.spec.Series = append(b.spec.Series, s)
}

// done returns the chart without empty tables; false when no series.
func (b *chartBuilder) done() (chartSpec, bool) {
	tables := b.spec.Tables[:0]
	for _, t := range b.spec.Tables {
		if len(t.Data) > 0 {
			tables = append(tables, t)
		}
	}
	b.spec.Tables = tables
	return b.spec, len(b.spec.Series) > 0
}

// groupCharts builds a workload's charts: MB/s and messages/s over time
// (each source's role totals, and per actor), batch latency percentiles
// over time per role, and the latency distribution. Per-actor lines start
// hidden when several sources share a chart.
func groupCharts(id string, srcs []source) ([]chartSpec, []string) {
	var charts []chartSpec
	var notes []string
	prefix := func(s source, what string) string {
		if len(srcs) == 1 {
			return what
		}
		return s.Label + " " + what
	}
	actorsShown := len(srcs) == 1
	// Latency lines continue across up to gapIntervals intervals that
	// completed no batch (a batch slower than the interval) and break
	// for longer pauses.
	const gapIntervals = 4.5
	var gapS float64
	for _, s := range srcs {
		if ser := s.Result.Series; ser != nil {
			gapS = math.Max(gapS, gapIntervals*ser.IntervalS)
		}
	}
	seriesOf := func(s source) *Series {
		if s.Result.Series != nil {
			return s.Result.Series
		}
		return legacySeries(s.Result)
	}
	var legacy, none []string
	for _, s := range srcs {
		switch {
		case s.Result.Series != nil:
		case s.Result.Timeline != nil:
			legacy = append(legacy, s.Label)
		default:
			none = append(none, s.Label)
		}
	}
	if len(legacy) > 0 {
		notes = append(notes, strings.Join(legacy, ", ")+": from a result file older than per-actor series: total throughput only, no latency over time")
	}
	if len(none) > 0 {
		notes = append(notes, strings.Join(none, ", ")+": no time series in the result")
	}
	for _, unit := range []struct {
		title, yLabel, unit, id string
		col                     func(*RateSeries) Floats
	}{
		{"Throughput over time", "MB/s (payload, 10⁶ B)", "MB/s", "mbps", func(r *RateSeries) Floats { return r.MBps }},
		{"Messages per second over time", "messages/s", "msg/s", "msgs", func(r *RateSeries) Floats { return r.MsgsPerSec }},
	} {
		b := chartBuilder{spec: chartSpec{ID: id + "-" + unit.id, Title: unit.title, Kind: "time", Group: id, YLabel: unit.yLabel, Unit: unit.unit, Smooth: true}}
		for _, s := range srcs {
			ser := seriesOf(s)
			if ser == nil {
				continue
			}
			b.table(ser.T)
			for _, ro := range roles(s.Result) {
				if ro.series == nil {
					continue
				}
				b.add(seriesSpec{Label: prefix(s, ro.name), Color: s.Color, Dash: ro.dash, Width: 2.25, Show: true}, unit.col(&ro.series.Total))
				if len(ro.series.Actors) < 2 {
					continue
				}
				for i := range ro.series.Actors {
					b.add(seriesSpec{Label: prefix(s, fmt.Sprintf("%s #%d", ro.actor, i)), Color: actorColor(s, actorsShown, i), Dash: ro.dash, Width: 1, Show: actorsShown},
						unit.col(&ro.series.Actors[i]))
				}
			}
		}
		if c, ok := b.done(); ok {
			charts = append(charts, c)
		}
	}
	for _, kind := range []struct{ role, title string }{
		{"producers", "Send batch latency over time"},
		{"consumers", "Poll batch latency over time"},
		{"end-to-end", "End-to-end latency over time (per message)"},
	} {
		b := chartBuilder{spec: chartSpec{ID: id + "-lat-" + strings.ReplaceAll(kind.role, "-", ""), Title: kind.title, Kind: "time", Group: id,
			YLabel: "latency (ms)", Unit: "ms", GapS: gapS}}
		for _, s := range srcs {
			ser := seriesOf(s)
			if ser == nil {
				continue
			}
			b.table(ser.T)
			for _, ro := range roles(s.Result) {
				if ro.name != kind.role || ro.lat == nil {
					continue
				}
				for _, p := range []struct {
					name  string
					col   Floats
					dash  []float64
					width float64
					show  bool
				}{{"p50", ro.lat.P50, nil, 1.75, true}, {"p90", ro.lat.P90, dashP90, 1.5, false}, {"p99", ro.lat.P99, dashP99, 2, true}, {"max", ro.lat.Max, dashMax, 1.25, false}} {
					b.add(seriesSpec{Label: prefix(s, p.name), Color: s.Color, Dash: p.dash, Width: p.width, Show: p.show}, p.col)
				}
				if ro.series == nil || len(ro.series.Actors) < 2 {
					continue
				}
				for i := range ro.series.Actors {
					b.add(seriesSpec{Label: prefix(s, fmt.Sprintf("%s #%d p99", ro.actor, i)), Color: actorColor(s, actorsShown, i), Width: 1},
						ro.series.Actors[i].Latency.P99)
				}
			}
		}
		if c, ok := b.done(); ok {
			charts = append(charts, c)
		}
	}
	if c, ok := distributionChart(id, srcs, prefix); ok {
		charts = append(charts, c)
	}
	return charts, notes
}

// distributionNinesMax is the "nines" of the last percentile drawn
// (99.999%); the maximum is drawn half a nine further.
const distributionNinesMax = 5.0

// distributionChart plots latency against percentile on a "nines" axis
// (x = -log10(1 - p/100): 0 is p0, 1 is p90, 2 is p99, ...), log ms.
func distributionChart(id string, srcs []source, prefix func(source, string) string) (chartSpec, bool) {
	b := chartBuilder{spec: chartSpec{ID: id + "-dist", Title: "Latency distribution", Kind: "nines", YLabel: "latency (ms, log)", Unit: "ms", YLog: true}}
	names := map[string]string{"producers": "send batch", "consumers": "poll batch", "end-to-end": "end-to-end"}
	for _, s := range srcs {
		for _, ro := range roles(s.Result) {
			if ro.dist == nil || len(ro.dist.Distribution) == 0 {
				continue
			}
			var x Times
			var col Floats
			for _, d := range ro.dist.Distribution {
				nines := distributionNinesMax + 0.5
				if d.Percentile < 100 {
					nines = math.Min(distributionNinesMax, -math.Log10(1-d.Percentile/100))
				}
				if len(x) > 0 && nines <= x[len(x)-1] {
					continue // 99.999 clamped onto an earlier point
				}
				v := d.Millis
				if v <= 0 {
					v = math.NaN() // no point on a log axis
				}
				x, col = append(x, nines), append(col, v)
			}
			b.table(x)
			b.add(seriesSpec{Label: prefix(s, names[ro.name]), Color: s.Color, Dash: ro.dash, Width: 2, Show: true}, col)
		}
	}
	return b.done()
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
