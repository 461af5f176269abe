package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// pageCharts extracts the chart specs a report page hands to report.js.
func pageCharts(t *testing.T, page []byte) []chartSpec {
	t.Helper()
	const start, end = "var STRATA_CHARTS = ", ";\n</script>"
	i := bytes.Index(page, []byte(start))
	if i < 0 {
		t.Fatalf("page has no chart specs")
	}
	j := bytes.Index(page[i:], []byte(end))
	if j < 0 {
		t.Fatalf("chart specs not terminated")
	}
	var specs []chartSpec
	if err := json.Unmarshal(page[i+len(start):i+j], &specs); err != nil {
		t.Fatalf("chart specs: %v", err)
	}
	return specs
}

// checkSelfContained fails when the page loads anything from elsewhere.
func checkSelfContained(t *testing.T, html string) {
	t.Helper()
	for _, external := range []string{"<script src", "<link", "url(", "src=\"http", "@import"} {
		if strings.Contains(html, external) {
			t.Fatalf("report references an external asset (%s)", external)
		}
	}
	if !strings.Contains(html, "uPlot") || !strings.Contains(html, "STRATA_CHARTS") {
		t.Fatalf("report lacks the inlined chart library or its data")
	}
}

// TestHelperStrataBench is strata-bench's main() when strataBench
// re-executes the test binary; otherwise it does nothing.
func TestHelperStrataBench(t *testing.T) {
	if os.Getenv("STRATA_BENCH_HELPER") != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Args = append([]string{"strata-bench"}, args...)
	main() // exits
}

// strataBench runs strata-bench's main() with args in a child process.
func strataBench(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperStrataBench$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "STRATA_BENCH_HELPER=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// recordRun runs the report test's two short workloads (40 rate-capped
// batches per producer, a few hundred milliseconds) and saves them as a
// result file.
func recordRun(t *testing.T, target Target, path string) *Report {
	t.Helper()
	pc := Workload{Name: "producer+consumer-2x2", Mode: ModePinnedProducerAndConsumer, MessageSize: 200, MessagesPerBatch: 50,
		Batches: 40, Producers: 2, Consumers: 2, Partitions: 2, RateMBps: 4}
	e2e := Workload{Name: "end-to-end", Mode: ModeEndToEnd, MessageSize: 200, MessagesPerBatch: 50, Batches: 40, RateMBps: 2}
	var results []*Result
	for _, w := range []Workload{pc, e2e} {
		res, err := Run(context.Background(), target, w, false)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	rep := newReport("report test run", nil, results)
	if err := writeJSON(path, rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// The charts of recordRun's workloads: throughput, messages/s, send and
// poll latency over time and the distribution; end-to-end adds its
// latency over time.
const reportTestCharts = 5 + 6

// TestReportOverlaysSavedRuns: `strata-bench report A.json B.json`
// renders two saved runs on the same charts, per actor and in total, as
// one self-contained page; in Chromium (when installed) every chart
// draws without a script error, and the screenshot shows both runs.
func TestReportOverlaysSavedRuns(t *testing.T) {
	target := inProcessTarget(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	recordRun(t, target, a)
	recordRun(t, target, b)
	page := filepath.Join(dir, "ab.html")
	stdout, stderr, code := strataBench(t, "report", a, b, "--labels", "run A,run B", "--html", page)
	if code != 0 || !strings.Contains(stdout, "wrote "+page) {
		t.Fatalf("report exited %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, string(raw))
	t.Logf("page %s: %d KB", page, len(raw)/1024)
	specs := pageCharts(t, raw)
	if len(specs) != reportTestCharts {
		t.Fatalf("%d charts, want %d", len(specs), reportTestCharts)
	}
	byID := map[string]chartSpec{}
	for _, c := range specs {
		byID[c.ID] = c
		columns := 0
		for _, tb := range c.Tables {
			if len(tb.X) == 0 || len(tb.Data) == 0 {
				t.Fatalf("chart %s: a table of %d x values and %d columns", c.ID, len(tb.X), len(tb.Data))
			}
			for _, col := range tb.Data {
				if len(col) != len(tb.X) {
					t.Fatalf("chart %s series %s: %d values for %d x", c.ID, c.Series[columns].Label, len(col), len(tb.X))
				}
				columns++
			}
		}
		if columns != len(c.Series) {
			t.Fatalf("chart %s: %d columns for %d series", c.ID, columns, len(c.Series))
		}
	}
	mbps, ok := byID["w0-mbps"]
	if !ok {
		t.Fatalf("no throughput chart: %v", byID)
	}
	var labels []string
	for _, s := range mbps.Series {
		labels = append(labels, s.Label)
	}
	want := "run A producers,run A producer #0,run A producer #1,run A consumers,run A consumer #0,run A consumer #1," +
		"run B producers,run B producer #0,run B producer #1,run B consumers,run B consumer #0,run B consumer #1"
	if strings.Join(labels, ",") != want {
		t.Fatalf("throughput series %q\nwant %q", labels, want)
	}
	if mbps.Series[0].Color == mbps.Series[6].Color || mbps.Series[1].Show || !mbps.Series[0].Show {
		t.Fatalf("runs share a colour or per-actor lines start shown: %+v", mbps.Series)
	}
	if len(mbps.Tables) != 2 || len(mbps.Tables[0].X) < 2 {
		t.Fatalf("throughput chart: %d tables (want one per run)", len(mbps.Tables))
	}
	if _, ok := byID["w1-lat-endtoend"]; !ok {
		t.Fatalf("no end-to-end latency over time: %v", byID)
	}

	t.Run("errors", func(t *testing.T) {
		limits := filepath.Join(dir, "limits.json")
		if err := writeJSON(limits, &Report{Title: "limits"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			args []string
			code int
			msg  string
		}{
			{[]string{"report", "--help"}, 0, ""},
			{[]string{"help", "report"}, 0, ""},
			{[]string{"report"}, 2, "at least one result file"},
			{[]string{"report", a, "--lables", "x"}, 2, "unknown flag: --lables"},
			{[]string{"report", limits}, 2, "has no results"},
			{[]string{"report", a, b, "--labels", "x"}, 2, "--labels names 1 runs for 2 files"},
			{[]string{"report", filepath.Join(dir, "missing.json")}, 1, "no such file"},
		} {
			stdout, stderr, code := strataBench(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) {
				t.Fatalf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
			}
			if tc.code == 0 && (!strings.Contains(stdout, "strata-bench report [flags] FILE.json") || !strings.Contains(stdout, "--labels")) {
				t.Fatalf("%v: the help lacks the usage or the flags:\n%s", tc.args, stdout)
			}
		}
	})

	t.Run("chromium", func(t *testing.T) {
		checkInChromium(t, page, specs)
	})
}

// chromium returns the browser to render reports with ("" when none).
func chromium() string {
	if p := os.Getenv("STRATA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chartProbe runs after report.js in the browser test's copy of the page:
// it zooms the first chart and reads the second chart's x range (a
// workload's time charts zoom together; uPlot applies scales in a
// microtask), and moves the mouse over the first chart and reads the
// tooltip's lines.
const chartProbe = `<script>
(function () {
  var r = document.documentElement;
  try {
    var a = window.STRATA_PLOTS[0].u, b = window.STRATA_PLOTS[1].u;
    var x = a.data[0], mn = x[Math.floor(x.length / 4)], mx = x[Math.floor(x.length * 3 / 4)];
    a.setScale("x", { min: mn, max: mx });
    queueMicrotask(function () { queueMicrotask(function () {
      var ok = Math.abs(b.scales.x.min - mn) < 1e-9 && Math.abs(b.scales.x.max - mx) < 1e-9;
      r.setAttribute("data-probe-zoom", ok ? "synced" : "not synced: " + b.scales.x.min + ".." + b.scales.x.max);
    }); });
    var over = a.over, rect = over.getBoundingClientRect();
    over.dispatchEvent(new MouseEvent("mouseenter"));
    over.dispatchEvent(new MouseEvent("mousemove", { clientX: rect.left + rect.width / 2, clientY: rect.top + rect.height / 2, bubbles: true }));
    var tip = over.querySelector(".tip"), lines = [];
    if (tip && tip.style.display !== "none") for (var i = 0; i < tip.children.length; i++) lines.push(tip.children[i].textContent);
    r.setAttribute("data-probe-tooltip", lines.join(" | "));
  } catch (e) {
    r.setAttribute("data-probe-error", String(e && e.message || e));
  }
})();
</script>
`

// checkInChromium loads a copy of page with chartProbe in headless
// Chromium, checks in the DOM it dumps that report.js drew every chart
// with every series and raised no error, that zoom and tooltip work, and
// checks the screenshot (kept at $STRATA_REPORT_SCREENSHOT when set) for
// both runs' colours.
func checkInChromium(t *testing.T, page string, specs []chartSpec) {
	bin := chromium()
	if bin == "" {
		t.Skip("Chromium is not installed (apt-get install chromium, or set STRATA_CHROMIUM): the report page is not checked in a browser")
	}
	shot := os.Getenv("STRATA_REPORT_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "report.png")
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probed := strings.TrimSuffix(page, ".html") + "-probed.html"
	if err := os.WriteFile(probed, bytes.Replace(raw, []byte("</body>"), []byte(chartProbe+"</body>"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	const width, height = 1400, 2600
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-extensions", "--disable-background-networking", "--disable-sync",
		"--disable-component-update", "--hide-scrollbars", "--user-data-dir="+t.TempDir(),
		fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+shot, "--dump-dom", "file://"+probed)
	var dom, logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &dom, &logs
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, logs.String())
	}
	t.Logf("chromium took %v; screenshot %s", time.Since(began).Round(time.Millisecond), shot)
	html := dom.String()
	if m := regexp.MustCompile(`data-js-errors="([^"]*)"`).FindStringSubmatch(html); m != nil {
		t.Fatalf("script errors: %s", m[1])
	}
	n := len(specs)
	if !strings.Contains(html, fmt.Sprintf(`data-charts="%d"`, n)) || !strings.Contains(html, fmt.Sprintf(`data-charts-drawn="%d"`, n)) {
		head, _, _ := strings.Cut(html, "<head>")
		t.Fatalf("not every one of %d charts drew: %s\n%s", n, head, logs.String())
	}
	attr := func(name string) string {
		m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(html)
		if m == nil {
			return ""
		}
		return m[1]
	}
	if e := attr("data-probe-error"); e != "" {
		t.Fatalf("probe: %s", e)
	}
	if z := attr("data-probe-zoom"); z != "synced" {
		t.Fatalf("zooming the throughput chart: the messages/s chart is %q", z)
	}
	tip := attr("data-probe-tooltip")
	t.Logf("tooltip: %s", tip)
	if !strings.Contains(tip, "t = ") || !strings.Contains(tip, "run A producers") || !strings.Contains(tip, "run B producers") || !strings.Contains(tip, "MB/s") {
		t.Fatalf("tooltip over the throughput chart: %q", tip)
	}
	if got := strings.Count(html, "<canvas"); got != n {
		t.Fatalf("%d canvases for %d charts", got, n)
	}
	// Every chart's legend lists its series.
	rows := regexp.MustCompile(`<tr class="u-series[^"]*"`).FindAllString(html, -1)
	wantRows := 0
	for _, c := range specs {
		wantRows += len(c.Series)
	}
	if len(rows) != wantRows {
		t.Fatalf("%d legend rows for %d series", len(rows), wantRows)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != width || b.Dy() != height {
		t.Fatalf("screenshot is %v", b)
	}
	// Both runs' lines are on the page: pixels of each run's colour.
	for _, color := range []string{specs[0].Series[0].Color, specs[0].Series[6].Color} {
		if px := pixelsNear(img, color); px < 200 {
			t.Fatalf("%d pixels of %s in the screenshot", px, color)
		} else {
			t.Logf("%d pixels of %s", px, color)
		}
	}
}

// pixelsNear counts the pixels of img within a small distance of the
// colour #rrggbb.
func pixelsNear(img image.Image, hex string) int {
	var r0, g0, b0 int
	if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r0, &g0, &b0); err != nil {
		return 0
	}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			dr, dg, db := int(r>>8)-r0, int(g>>8)-g0, int(bl>>8)-b0
			if dr*dr+dg*dg+db*db < 24*24 {
				n++
			}
		}
	}
	return n
}

// seriesOfN is a Series of n samples 10 ms apart for one producer.
func seriesOfN(n int, mbps float64) *Series {
	s := &Series{IntervalS: 0.01, Producers: &RoleSeries{Actors: make([]RateSeries, 1)}}
	for i := 0; i < n; i++ {
		s.T = append(s.T, float64(i+1)/100)
		for _, r := range []*RateSeries{&s.Producers.Total, &s.Producers.Actors[0]} {
			r.MBps, r.MsgsPerSec = append(r.MBps, mbps), append(r.MsgsPerSec, mbps*1000)
			r.Latency.Count = append(r.Latency.Count, 2)
			for _, col := range []*Floats{&r.Latency.P50, &r.Latency.P90, &r.Latency.P99, &r.Latency.Max} {
				*col = append(*col, 1.5)
			}
		}
	}
	return s
}

// TestCompareReportOverlaysBrokers: a comparison's page (one report, two
// targets per workload, as `compare nats` writes it) draws both brokers
// on the same charts in their own colours, with a side-by-side table.
func TestCompareReportOverlaysBrokers(t *testing.T) {
	lat := Latency{Count: 6, P50: 1.5, P99: 2, Max: 2, Distribution: []DistributionPoint{{0, 1}, {50, 1.5}, {99, 2}, {100, 2}}}
	res := func(target string, mbps float64, n int) *Result {
		return &Result{Workload: Workload{Name: "producer-1", Mode: ModePinnedProducer, MessageSize: 1000, MessagesPerBatch: 1000, Producers: 1},
			Target: target, Producers: &RoleResult{Actors: []ActorResult{{}}, MBps: mbps, Latency: lat}, Series: seriesOfN(n, mbps)}
	}
	rep := &Report{Title: "Strata vs NATS JetStream", Results: []*Result{res("strata", 300, 3), res("nats", 50, 5)}}
	v := buildView("", []reportInput{{Report: rep}})
	if len(v.Groups) != 1 || len(v.SideBySide) != 2 || v.SideBySide[1].MBpsRatio != 50.0/300 {
		t.Fatalf("groups %d, side by side %+v", len(v.Groups), v.SideBySide)
	}
	// Throughput, messages/s, send latency over time, distribution.
	if len(v.Charts) != 4 {
		t.Fatalf("%d charts", len(v.Charts))
	}
	for _, c := range v.Charts {
		if len(c.Tables) != 2 || len(c.Series) < 2 || c.Series[0].Color == c.Series[len(c.Series)-1].Color {
			t.Fatalf("chart %s: %d tables, series %+v", c.ID, len(c.Tables), c.Series)
		}
		if !strings.HasPrefix(c.Series[0].Label, "strata ") || !strings.HasPrefix(c.Series[len(c.Series)-1].Label, "nats ") {
			t.Fatalf("chart %s labels: %+v", c.ID, c.Series)
		}
	}
	if x := v.Charts[0].Tables[1].X; len(x) != 5 {
		t.Fatalf("nats table x: %v", x)
	}
	var page bytes.Buffer
	if err := renderHTML(&page, "", []reportInput{{Report: rep}}); err != nil {
		t.Fatal(err)
	}
	if specs := pageCharts(t, page.Bytes()); len(specs) != 4 {
		t.Fatalf("page has %d charts", len(specs))
	}
}

// TestReportOfOlderResultFiles: a result file written before the series
// existed (bench/results, 250 ms timeline of totals) still renders: total
// throughput over time for both brokers and the distributions, with a note.
func TestReportOfOlderResultFiles(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := readReport(filepath.Join(root, "bench", "results", "compare", "20261130-040745-447a396.json"))
	if err != nil {
		t.Fatal(err)
	}
	v := buildView("", []reportInput{{Report: rep}})
	if len(v.Groups) != 6 {
		t.Fatalf("%d workloads", len(v.Groups))
	}
	for _, g := range v.Groups {
		var ids []string
		for _, i := range g.Charts {
			ids = append(ids, strings.TrimPrefix(v.Charts[i].ID, strings.SplitN(v.Charts[i].ID, "-", 2)[0]+"-"))
		}
		if strings.Join(ids, ",") != "mbps,msgs,dist" || len(g.Notes) != 1 || !strings.Contains(g.Notes[0], "strata, nats: from a result file older") {
			t.Fatalf("%s: charts %v, notes %q", g.Name, ids, g.Notes)
		}
		if c := v.Charts[g.Charts[0]]; len(c.Tables) != 2 || len(c.Tables[0].X) == 0 || len(c.Tables[1].X) == 0 {
			t.Fatalf("%s throughput: %d tables", g.Name, len(c.Tables))
		}
	}
}

// TestReportRowsSayHowProducerRunsWereChecked: the results table of a run
// without consumers says whether its messages were read back.
func TestReportRowsSayHowProducerRunsWereChecked(t *testing.T) {
	w := Workload{Name: "pp", Mode: ModePinnedProducer}
	for _, tc := range []struct {
		res  Result
		want string
	}{
		{Result{Workload: w, Producers: &RoleResult{}, Sent: 40, Verified: 40, ReadBack: true}, "40 of 40 read back"},
		{Result{Workload: w, Producers: &RoleResult{}, Sent: 40}, "not read back (40 acknowledged)"},
		{Result{Workload: w, Producers: &RoleResult{}}, ""}, // a file from before read-back
	} {
		res := tc.res
		got := rows(source{Result: &res})
		if len(got) != 1 || got[0].Verified != tc.want {
			t.Fatalf("rows %+v, want one with verified %q", got, tc.want)
		}
	}
}
