package main

import (
	"math"
	"time"
)

// intervalHist is the latency histogram of one sampling interval: counts
// in logarithmic buckets of intervalBucketRatio (1% wide) from 1 µs to
// latencyMicrosMax, with the occupied range tracked so that reset, merge
// and percentiles cost what the interval's latencies span (tens of
// buckets), not the whole range: the sampler reads every actor's
// histogram at every tick, on the machine under measurement.
type intervalHist struct {
	counts   [intervalBuckets]uint32
	lo, hi   int // occupied buckets; lo > hi when empty
	n        int64
	min, max int64 // exact extremes in µs
}

const (
	intervalBucketRatio = 1.01
	// intervalBuckets covers 1 µs .. latencyMicrosMax.
	intervalBuckets = 1802
)

var intervalLogRatio = math.Log(intervalBucketRatio)

func newIntervalHist() *intervalHist {
	h := &intervalHist{}
	h.lo, h.hi = intervalBuckets, -1
	return h
}

// bucketOf is the bucket of us (1 <= us <= latencyMicrosMax).
func bucketOf(us int64) int {
	return min(int(math.Log(float64(us))/intervalLogRatio), intervalBuckets-1)
}

// record adds one latency, clamped into 1 µs .. latencyMicrosMax.
func (h *intervalHist) record(d time.Duration) {
	us := min(max(d.Microseconds(), 1), latencyMicrosMax)
	b := bucketOf(us)
	h.counts[b]++
	h.lo, h.hi = min(h.lo, b), max(h.hi, b)
	if h.n == 0 || us < h.min {
		h.min = us
	}
	h.max = max(h.max, us)
	h.n++
}

// reset empties h.
func (h *intervalHist) reset() {
	if h.n > 0 {
		clear(h.counts[h.lo : h.hi+1])
	}
	h.lo, h.hi, h.n, h.min, h.max = intervalBuckets, -1, 0, 0, 0
}

// merge adds o's counts to h.
func (h *intervalHist) merge(o *intervalHist) {
	if o.n == 0 {
		return
	}
	for b := o.lo; b <= o.hi; b++ {
		h.counts[b] += o.counts[b]
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.lo, h.hi, h.max, h.n = min(h.lo, o.lo), max(h.hi, o.hi), max(h.max, o.max), h.n+o.n
}

// percentiles returns the latency in µs at each percentile (ascending):
// the upper bound of the bucket holding it, within the exact extremes.
func (h *intervalHist) percentiles(ps []float64) []int64 {
	out := make([]int64, len(ps))
	if h.n == 0 {
		return out
	}
	var seen int64
	k := 0
	for b := h.lo; b <= h.hi && k < len(ps); b++ {
		seen += int64(h.counts[b])
		for k < len(ps) && float64(seen) >= math.Ceil(ps[k]/100*float64(h.n)) {
			upper := int64(math.Ceil(math.Exp(float64(b+1) * intervalLogRatio)))
			out[k] = min(max(upper, h.min), h.max)
			k++
		}
	}
	for ; k < len(ps); k++ {
		out[k] = h.max
	}
	return out
}
