package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"
)

// Time series of a run (issue 14). Every actor owns a meter that its loop
// feeds once per measured batch (bytes, messages and the batch's round
// trip); the sampler takes every meter's figures of the interval just
// ended at a fixed period and appends one sample per actor, per role
// total and, in end-to-end mode, of the per-message latency. The period
// is chosen from the run's planned length so that it gives about
// sampleTargetN samples and never less than sampleMinPeriod, so a run of
// a few batches still gives points; a run that outgrows samplesMax
// (batch-bounded runs have no planned length) merges adjacent samples
// pairwise and doubles its period, which bounds the result's size.
const (
	sampleMinPeriod = 10 * time.Millisecond
	sampleTargetN   = 256
	samplesMax      = 2 * sampleTargetN
	// progressPeriod is the live progress line's refresh period.
	progressPeriod = 250 * time.Millisecond
	// seriesDigits is the significant digits a series value keeps in JSON.
	seriesDigits = 5
)

// Series is a run's time series. Sample i covers the interval that ends
// T[i] seconds after the measurement began and starts where sample i-1
// ended (sample 0 starts at 0); intervals are IntervalS long except the
// last, which ends with the run. Columns are aligned with T.
type Series struct {
	IntervalS float64        `json:"interval_s"`
	T         Times          `json:"t_s"`
	Producers *RoleSeries    `json:"producers,omitempty"`
	Consumers *RoleSeries    `json:"consumers,omitempty"`
	EndToEnd  *LatencySeries `json:"end_to_end_latency,omitempty"`
}

// RoleSeries is one side's total and per-actor series (Actors[i] is the
// actor with index i in the role's results).
type RoleSeries struct {
	Total  RateSeries   `json:"total"`
	Actors []RateSeries `json:"actors"`
}

// RateSeries is payload MB/s, messages/s and batch latency per interval.
type RateSeries struct {
	MBps       Floats        `json:"mb_per_s"`
	MsgsPerSec Floats        `json:"msgs_per_s"`
	Latency    LatencySeries `json:"batch_latency"`
}

// LatencySeries is latency percentiles per interval in milliseconds; an
// interval that completed no batch has count 0 and null percentiles.
// Samples merged when a run outgrew samplesMax keep the count-weighted
// mean of p50 and p90 and the larger p99 and max of the pair.
type LatencySeries struct {
	Count []uint64 `json:"count"`
	P50   Floats   `json:"p50_ms"`
	P90   Floats   `json:"p90_ms"`
	P99   Floats   `json:"p99_ms"`
	Max   Floats   `json:"max_ms"`
}

// Floats is a series column: NaN (no value) is JSON null and values keep
// seriesDigits significant digits.
type Floats []float64

// MarshalJSON writes null for NaN and infinities.
func (f Floats) MarshalJSON() ([]byte, error) {
	if f == nil {
		return []byte("[]"), nil
	}
	b := make([]byte, 0, 2+8*len(f))
	b = append(b, '[')
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, v, 'g', seriesDigits, 64)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads null as NaN.
func (f *Floats) UnmarshalJSON(b []byte) error {
	var raw []*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("series column: %w", err)
	}
	out := make(Floats, len(raw))
	for i, v := range raw {
		out[i] = math.NaN()
		if v != nil {
			out[i] = *v
		}
	}
	*f = out
	return nil
}

// Times is a column of seconds, kept to the microsecond in JSON (five
// significant digits would merge samples of a long run).
type Times []float64

// MarshalJSON writes each time rounded to the microsecond.
func (ts Times) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+10*len(ts))
	b = append(b, '[')
	for i, v := range ts {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("series time %v", v)
		}
		b = strconv.AppendFloat(b, math.Round(v*1e6)/1e6, 'f', -1, 64)
	}
	return append(b, ']'), nil
}

// String is the column as JSON (for test failures).
func (f Floats) String() string {
	b, _ := f.MarshalJSON() // cannot fail
	return string(bytes.TrimSpace(b))
}

// samplePeriodFor returns the sampling period of a run measured for
// planned (0 when a batch count bounds it).
func samplePeriodFor(planned time.Duration) time.Duration {
	p := (planned / sampleTargetN).Round(time.Millisecond)
	return max(p, sampleMinPeriod)
}

// meter is what one actor measured since the sampler last took it.
type meter struct {
	mu       sync.Mutex
	bytes    uint64
	messages uint64
	hist     *intervalHist
}

func newMeter() *meter { return &meter{hist: newIntervalHist()} }

// record adds one measured batch.
func (m *meter) record(bytes, messages uint64, latency time.Duration) {
	m.mu.Lock()
	m.bytes += bytes
	m.messages += messages
	m.hist.record(latency)
	m.mu.Unlock()
}

// recordLatencies adds n latencies (latency(j) for j < n) without bytes.
func (m *meter) recordLatencies(n int, latency func(j int) time.Duration) {
	m.mu.Lock()
	for j := 0; j < n; j++ {
		m.hist.record(latency(j))
	}
	m.mu.Unlock()
}

// take returns the interval's figures and starts the next interval on
// spare (empty); the returned histogram is the caller's to reset.
func (m *meter) take(spare *intervalHist) (bytes, messages uint64, h *intervalHist) {
	m.mu.Lock()
	bytes, messages, h = m.bytes, m.messages, m.hist
	m.bytes, m.messages, m.hist = 0, 0, spare
	m.mu.Unlock()
	return bytes, messages, h
}

// meters are a run's meters, one per actor and role; nil slices for a
// role the run does not have.
type meters struct {
	producers, consumers []*meter
	e2e                  *meter
}

func newMeters(n int) []*meter {
	out := make([]*meter, n)
	for i := range out {
		out[i] = newMeter()
	}
	return out
}

// sampler turns meters into a Series.
type sampler struct {
	m      *meters
	period time.Duration
	from   time.Time
	last   time.Time
	s      *Series
	spares []*intervalHist
	total  *intervalHist
	totals [2]uint64 // cumulative bytes of producers and consumers
}

func newSampler(m *meters, from time.Time, period time.Duration) *sampler {
	s := &Series{IntervalS: period.Seconds()}
	if m.producers != nil {
		s.Producers = &RoleSeries{Actors: make([]RateSeries, len(m.producers))}
	}
	if m.consumers != nil {
		s.Consumers = &RoleSeries{Actors: make([]RateSeries, len(m.consumers))}
	}
	if m.e2e != nil {
		s.EndToEnd = &LatencySeries{}
	}
	return &sampler{m: m, period: period, from: from, last: from, s: s, total: newIntervalHist()}
}

// spareHistogram returns an empty histogram for a meter's next interval.
func (sp *sampler) spareHistogram() *intervalHist {
	if n := len(sp.spares); n > 0 {
		h := sp.spares[n-1]
		sp.spares = sp.spares[:n-1]
		return h
	}
	return newIntervalHist()
}

// tick takes the interval ending at now. Intervals before the
// measurement began are dropped, the first measured one is at least half
// a period long; final takes the run's last interval,
// whatever its length, when it measured anything. It reports whether a
// sample was appended.
func (sp *sampler) tick(now time.Time, final bool) bool {
	if !now.After(sp.from) {
		sp.drain()
		return false
	}
	if len(sp.s.T) == 0 && !final && now.Sub(sp.from) < sp.period/2 {
		// The ticker runs from before the warm-up: a first tick just after
		// the measurement began would make a sliver of an interval.
		return false
	}
	secs := now.Sub(sp.last).Seconds()
	type taken struct {
		bytes, messages uint64
		h               *intervalHist
	}
	var used []*intervalHist
	takeAll := func(ms []*meter) []taken {
		out := make([]taken, len(ms))
		for i, m := range ms {
			b, n, h := m.take(sp.spareHistogram())
			out[i] = taken{b, n, h}
			used = append(used, h)
		}
		return out
	}
	// The taken histograms are the next intervals' spares once read.
	defer func() {
		for _, h := range used {
			h.reset()
			sp.spares = append(sp.spares, h)
		}
	}()
	prod, cons := takeAll(sp.m.producers), takeAll(sp.m.consumers)
	var e2e []taken
	if sp.m.e2e != nil {
		e2e = takeAll([]*meter{sp.m.e2e})
	}
	measured := false
	for _, group := range [][]taken{prod, cons, e2e} {
		for _, t := range group {
			measured = measured || t.messages > 0 || t.h.n > 0
		}
	}
	if final && !measured {
		return false
	}
	sp.last = now
	sp.s.T = append(sp.s.T, now.Sub(sp.from).Seconds())
	appendRole := func(rs *RoleSeries, ts []taken, cum *uint64) {
		if rs == nil {
			return
		}
		sp.total.reset()
		var bytes, messages uint64
		for i, t := range ts {
			rs.Actors[i].add(t.bytes, t.messages, secs, t.h)
			sp.total.merge(t.h)
			bytes += t.bytes
			messages += t.messages
		}
		rs.Total.add(bytes, messages, secs, sp.total)
		*cum += bytes
	}
	appendRole(sp.s.Producers, prod, &sp.totals[0])
	appendRole(sp.s.Consumers, cons, &sp.totals[1])
	if sp.s.EndToEnd != nil {
		sp.s.EndToEnd.add(e2e[0].h)
	}
	if len(sp.s.T) > samplesMax {
		sp.s.halve()
		sp.period *= 2
		sp.s.IntervalS = sp.period.Seconds()
	}
	return true
}

// drain empties every meter (figures from before the measurement).
func (sp *sampler) drain() {
	for _, ms := range [][]*meter{sp.m.producers, sp.m.consumers, {sp.m.e2e}} {
		for _, m := range ms {
			if m != nil {
				_, _, h := m.take(sp.spareHistogram())
				h.reset()
				sp.spares = append(sp.spares, h)
			}
		}
	}
}

// add appends one interval's rates and latencies.
func (r *RateSeries) add(bytes, messages uint64, secs float64, h *intervalHist) {
	r.MBps = append(r.MBps, rate(bytes, secs)/bytesPerMB)
	r.MsgsPerSec = append(r.MsgsPerSec, rate(messages, secs))
	r.Latency.add(h)
}

// add appends one interval's percentiles from h.
func (l *LatencySeries) add(h *intervalHist) {
	n := h.n
	l.Count = append(l.Count, uint64(n))
	if n == 0 {
		nan := math.NaN()
		l.P50, l.P90, l.P99, l.Max = append(l.P50, nan), append(l.P90, nan), append(l.P99, nan), append(l.Max, nan)
		return
	}
	v := h.percentiles([]float64{50, 90, 99})
	ms := func(us int64) float64 { return float64(us) / 1000 }
	l.P50, l.P90, l.P99 = append(l.P50, ms(v[0])), append(l.P90, ms(v[1])), append(l.P99, ms(v[2]))
	l.Max = append(l.Max, ms(h.max))
}

// halve merges samples pairwise (an odd last sample stays alone).
func (s *Series) halve() {
	t := s.T
	dt := make([]float64, len(t))
	for i := range t {
		prev := 0.0
		if i > 0 {
			prev = t[i-1]
		}
		dt[i] = t[i] - prev
	}
	for _, rs := range []*RoleSeries{s.Producers, s.Consumers} {
		if rs == nil {
			continue
		}
		rs.Total.halve(dt)
		for i := range rs.Actors {
			rs.Actors[i].halve(dt)
		}
	}
	if s.EndToEnd != nil {
		s.EndToEnd.halve()
	}
	out := t[:0]
	for i := 1; i < len(t); i += 2 {
		out = append(out, t[i])
	}
	if len(t)%2 == 1 {
		out = append(out, t[len(t)-1])
	}
	s.T = out
}

// halve merges rates weighted by interval length.
func (r *RateSeries) halve(dt []float64) {
	merge := func(col Floats) Floats {
		out := col[:0]
		for i := 0; i < len(col); i += 2 {
			if i+1 == len(col) {
				out = append(out, col[i])
				break
			}
			out = append(out, (col[i]*dt[i]+col[i+1]*dt[i+1])/(dt[i]+dt[i+1]))
		}
		return out
	}
	r.MBps, r.MsgsPerSec = merge(r.MBps), merge(r.MsgsPerSec)
	r.Latency.halve()
}

// halve merges percentiles (see LatencySeries).
func (l *LatencySeries) halve() {
	n := len(l.Count)
	var count []uint64
	var p50, p90, p99, mx Floats
	for i := 0; i < n; i += 2 {
		if i+1 == n {
			count, p50, p90, p99, mx = append(count, l.Count[i]), append(p50, l.P50[i]), append(p90, l.P90[i]), append(p99, l.P99[i]), append(mx, l.Max[i])
			break
		}
		a, b := l.Count[i], l.Count[i+1]
		count = append(count, a+b)
		switch {
		case a == 0:
			p50, p90, p99, mx = append(p50, l.P50[i+1]), append(p90, l.P90[i+1]), append(p99, l.P99[i+1]), append(mx, l.Max[i+1])
		case b == 0:
			p50, p90, p99, mx = append(p50, l.P50[i]), append(p90, l.P90[i]), append(p99, l.P99[i]), append(mx, l.Max[i])
		default:
			w := func(x, y float64) float64 { return (x*float64(a) + y*float64(b)) / float64(a+b) }
			p50 = append(p50, w(l.P50[i], l.P50[i+1]))
			p90 = append(p90, w(l.P90[i], l.P90[i+1]))
			p99 = append(p99, math.Max(l.P99[i], l.P99[i+1]))
			mx = append(mx, math.Max(l.Max[i], l.Max[i+1]))
		}
	}
	l.Count, l.P50, l.P90, l.P99, l.Max = count, p50, p90, p99, mx
}
