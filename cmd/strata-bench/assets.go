package main

import _ "embed"

// The HTML report's assets, inlined into every page so a report is one
// self-contained file that works offline. The charts are drawn by uPlot
// (https://github.com/leeoniya/uPlot, MIT, assets/uPlot.LICENSE): a
// canvas chart library of 51 KB minified with drag-to-zoom, cursor sync
// across charts, log scales and automatic ticks; assets/README.md says
// where the files come from and how to update them.
var (
	//go:embed assets/report.html.tmpl
	reportTemplate string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.css
	reportCSS string
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
)
