package main

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// checkRoleSeries checks a role's series against its totals: every column
// as long as T, interval latency counts adding up to the role's batch
// count, and the rates integrating back to its bytes and messages.
func checkRoleSeries(t *testing.T, name string, s *Series, rs *RoleSeries, rr *RoleResult) {
	t.Helper()
	if rs == nil || rr == nil {
		t.Fatalf("%s: series %v, result %v", name, rs != nil, rr != nil)
	}
	n := len(s.T)
	if len(rs.Actors) != len(rr.Actors) {
		t.Fatalf("%s: %d actor series for %d actors", name, len(rs.Actors), len(rr.Actors))
	}
	all := append([]RateSeries{rs.Total}, rs.Actors...)
	for i, a := range all {
		if len(a.MBps) != n || len(a.MsgsPerSec) != n || len(a.Latency.Count) != n || len(a.Latency.P50) != n || len(a.Latency.P99) != n || len(a.Latency.Max) != n {
			t.Fatalf("%s series %d: columns of %d/%d/%d/%d for %d samples", name, i, len(a.MBps), len(a.MsgsPerSec), len(a.Latency.Count), len(a.Latency.P99), n)
		}
	}
	integrate := func(col Floats) float64 {
		var sum, prev float64
		for i, v := range col {
			sum += v * (s.T[i] - prev)
			prev = s.T[i]
		}
		return sum
	}
	var batches uint64
	for _, c := range rs.Total.Latency.Count {
		batches += c
	}
	if int64(batches) != rr.Latency.Count {
		t.Fatalf("%s: the series counts %d batches, the result %d", name, batches, rr.Latency.Count)
	}
	// Five significant digits per rate and times to the microsecond (of
	// 10 ms intervals): the integral is within 0.1%.
	const tolerance = 1e-3
	if got, want := integrate(rs.Total.MBps)*bytesPerMB, float64(rr.Bytes); math.Abs(got-want) > tolerance*want {
		t.Fatalf("%s: the MB/s series integrates to %.0f bytes, the result has %.0f", name, got, want)
	}
	if got, want := integrate(rs.Total.MsgsPerSec), float64(rr.Messages); math.Abs(got-want) > tolerance*want {
		t.Fatalf("%s: the msg/s series integrates to %.0f messages, the result has %.0f", name, got, want)
	}
	for i, a := range rs.Actors {
		if got, want := integrate(a.MBps)*bytesPerMB, float64(rr.Actors[i].Bytes); math.Abs(got-want) > tolerance*want {
			t.Fatalf("%s actor %d: the series integrates to %.0f bytes, the actor has %.0f", name, i, got, want)
		}
	}
}

// TestSeriesOfShortRuns: a run of five batches, over in milliseconds,
// still has a time series (the 250 ms timeline it replaced had no point),
// per actor and in total, through a JSON round trip.
func TestSeriesOfShortRuns(t *testing.T) {
	target := inProcessTarget(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		w    Workload
	}{
		{"producer and consumer 2x2", func() Workload {
			w := tiny(ModePinnedProducerAndConsumer)
			w.Producers, w.Consumers, w.Partitions = 2, 2, 2
			return w
		}()},
		{"consumer only", func() Workload { w := tiny(ModePinnedConsumer); w.Consumers, w.Partitions = 2, 2; return w }()},
		{"end-to-end", tiny(ModeEndToEnd)},
		{"consumer group", func() Workload { w := tiny(ModeBalancedConsumerGroup); w.Consumers, w.Partitions = 2, 2; return w }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(ctx, target, tc.w, false)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var back Result
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			s := back.Series
			if s == nil || len(s.T) == 0 {
				t.Fatalf("no time series: %s", raw)
			}
			t.Logf("%d samples at %.0f ms, the last at %.1f ms; %d bytes of JSON", len(s.T), s.IntervalS*1000, s.T[len(s.T)-1]*1000, len(raw))
			for i := 1; i < len(s.T); i++ {
				if !(s.T[i] > s.T[i-1]) || s.T[0] <= 0 {
					t.Fatalf("sample times not increasing from 0: %v", s.T)
				}
			}
			if res.Producers != nil {
				checkRoleSeries(t, "producers", s, s.Producers, back.Producers)
			} else if s.Producers != nil {
				t.Fatalf("a producer series for a consumer-only run")
			}
			checkRoleSeries(t, "consumers", s, s.Consumers, back.Consumers)
			if tc.w.Mode == ModeEndToEnd {
				var n uint64
				for _, c := range s.EndToEnd.Count {
					n += c
				}
				if s.EndToEnd == nil || int64(n) != res.EndToEnd.Count {
					t.Fatalf("end-to-end series counts %d messages of %d", n, res.EndToEnd.Count)
				}
			}
		})
	}
}

// TestSamplerBoundsItsSeries drives a sampler with a synthetic clock, one
// tick per period as the ticker does, through a run 20 times as long as
// samplesMax minimal periods: the series stays within samplesMax samples,
// the period doubles, and merging keeps every byte, message and batch.
func TestSamplerBoundsItsSeries(t *testing.T) {
	m := &meters{producers: newMeters(2), e2e: newMeter()}
	from := time.Unix(1000, 0)
	sp := newSampler(m, from, sampleMinPeriod)
	end := from.Add(20 * samplesMax * sampleMinPeriod)
	var bytes, batches [2]uint64
	var e2e uint64
	now := from
	ticks := 0
	for i := 0; now.Before(end); i++ {
		ticks++
		now = now.Add(sp.period)
		for a := range m.producers {
			// A varying load: actor a sends (i % 7) + a batches of 1000 B.
			for b := 0; b < i%7+a; b++ {
				m.producers[a].record(1000, 10, time.Duration(1+i%5)*time.Millisecond)
				bytes[a] += 1000
				batches[a]++
			}
		}
		m.e2e.recordLatencies(3, func(int) time.Duration { return 2 * time.Millisecond })
		e2e += 3
		sp.tick(now, false)
		if n := len(sp.s.T); n > samplesMax {
			t.Fatalf("tick %d: %d samples", i, n)
		}
	}
	if sp.tick(now.Add(time.Millisecond), true) {
		t.Fatalf("the final tick of an empty interval appended a sample")
	}
	s := sp.s
	if sp.period <= sampleMinPeriod || s.IntervalS != sp.period.Seconds() || len(s.T) < samplesMax/2 {
		t.Fatalf("period %v (interval %v s), %d samples", sp.period, s.IntervalS, len(s.T))
	}
	if last := s.T[len(s.T)-1]; math.Abs(last-now.Sub(from).Seconds()) > 1e-9 {
		t.Fatalf("last sample at %v s", last)
	}
	for a, rs := range s.Producers.Actors {
		var sum, prev float64
		var n uint64
		for i, v := range rs.MBps {
			sum += v * bytesPerMB * (s.T[i] - prev)
			prev = s.T[i]
			n += rs.Latency.Count[i]
		}
		if math.Abs(sum-float64(bytes[a])) > 1e-6*float64(bytes[a]) || n != batches[a] {
			t.Fatalf("actor %d: series holds %.0f bytes and %d batches, sent %d and %d", a, sum, n, bytes[a], batches[a])
		}
		for i, v := range rs.Latency.Max {
			if rs.Latency.Count[i] > 0 && (v < 1 || v > 5) { // the exact maximum
				t.Fatalf("actor %d sample %d: max %v ms outside the recorded 1..5 ms", a, i, v)
			}
		}
	}
	var n uint64
	for _, c := range s.EndToEnd.Count {
		n += c
	}
	if n != e2e {
		t.Fatalf("end-to-end series counts %d of %d", n, e2e)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v in %d ticks: %d samples at %v, %d bytes of JSON for 2 actors", end.Sub(from), ticks, len(s.T), sp.period, len(raw))
}

func TestFloatsJSON(t *testing.T) {
	in := Floats{1.234567, math.NaN(), 0, 12345678, math.Inf(1)}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != "[1.2346,null,0,1.2346e+07,null]" {
		t.Fatalf("encoded %s", raw)
	}
	var back Floats
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 5 || back[0] != 1.2346 || !math.IsNaN(back[1]) || back[3] != 12346000 || !math.IsNaN(back[4]) {
		t.Fatalf("decoded %v", back)
	}
	if err := json.Unmarshal([]byte(`["x"]`), &back); err == nil {
		t.Fatalf("a string decoded as a series value")
	}
}

// TestIntervalHistMatchesHdrHistogram: the per-interval histogram's
// percentiles agree with HdrHistogram's within its 1% buckets, and its
// extremes are exact, through merges and resets.
func TestIntervalHistMatchesHdrHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b, merged := newIntervalHist(), newIntervalHist(), newIntervalHist()
	ref := newHistogram()
	for round := 0; round < 3; round++ {
		a.reset()
		b.reset()
		merged.reset()
		ref.Reset()
		var maxUS int64
		for i := 0; i < 5000; i++ {
			// Log-uniform from 1 µs to 10 s, as latencies spread.
			us := int64(math.Exp(rng.Float64() * math.Log(1e7)))
			h := a
			if i%3 == 0 {
				h = b
			}
			h.record(time.Duration(us) * time.Microsecond)
			recordMicros(ref, time.Duration(us)*time.Microsecond)
			maxUS = max(maxUS, max(us, 1))
		}
		merged.merge(a)
		merged.merge(b)
		ps := []float64{0, 50, 90, 99, 99.9, 100}
		got := merged.percentiles(ps)
		for i, p := range ps {
			want := ref.ValueAtQuantile(p)
			if math.Abs(float64(got[i]-want)) > 0.011*float64(want)+1 {
				t.Fatalf("round %d p%v: %d µs, HdrHistogram %d µs", round, p, got[i], want)
			}
		}
		if merged.n != 5000 || merged.max != maxUS || got[len(ps)-1] != maxUS {
			t.Fatalf("round %d: n %d, max %d (p100 %d), want 5000 and %d", round, merged.n, merged.max, got[len(ps)-1], maxUS)
		}
	}
	empty := newIntervalHist()
	if p := empty.percentiles([]float64{50}); p[0] != 0 || empty.n != 0 {
		t.Fatalf("empty histogram: %v", p)
	}
	empty.record(time.Hour) // clamped
	if empty.max != latencyMicrosMax || empty.percentiles([]float64{50})[0] != latencyMicrosMax {
		t.Fatalf("clamped max %d", empty.max)
	}
}
