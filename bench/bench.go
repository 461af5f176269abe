// Package bench holds the benchmark's fixed inputs: the suite definition
// that `make bench` runs (suite.json) and the HTML report template
// (report.html.tmpl). cmd/strata-bench embeds both through this package so
// the binary is self-contained. Results are written to bench/results/.
package bench

import _ "embed"

// SuiteJSON is the fixed suite of issue 5 (1 KB messages, 1000 per batch).
//
//go:embed suite.json
var SuiteJSON []byte

// ReportTemplate is the html/template source of the self-contained HTML
// report (inline SVG, no external assets).
//
//go:embed report.html.tmpl
var ReportTemplate string
