// Package bench holds the benchmark's fixed input: the suite definition
// that `make bench` runs (suite.json), which cmd/strata-bench embeds
// through this package so the binary is self-contained (the HTML report's
// template and charting library live in cmd/strata-bench/assets/).
// Results are written to bench/results/.
package bench

import _ "embed"

// SuiteJSON is the fixed suite of issue 5 (1 KB messages, 1000 per batch).
//
//go:embed suite.json
var SuiteJSON []byte
