package sim

import (
	"runtime/debug"
	"testing"
	"time"
)

// BenchmarkRun measures whole swarm runs: simulated ticks per second and
// seeds per minute (one goroutine, the way each seed runs; strata-sim
// swarm runs one such goroutine per core), with the garbage collector set
// as strata-sim swarm sets it (SwarmGCPercent). Build with -tags
// invariants for the figure with the invariant checks on.
func BenchmarkRun(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(SwarmGCPercent))
	var ticks uint64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		res := Run(Options{Params: DrawParams(uint64(i + 1))})
		ticks += res.Ticks
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(ticks)/elapsed.Seconds(), "ticks/s")
	b.ReportMetric(float64(b.N)/elapsed.Minutes(), "seeds/min")
}

// BenchmarkTickQuiet measures the cost of one tick of a busy, fault-free
// five-replica cluster.
func BenchmarkTickQuiet(b *testing.B) {
	p := QuietParams(1, 5, 8, DurabilityPersisted)
	p.RequestsPerClient = logValuesMax / 8 / 2
	c, err := NewCluster(&p, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		c.Tick()
		if c.violation != nil {
			b.Fatal(c.violation)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ticks/s")
}
