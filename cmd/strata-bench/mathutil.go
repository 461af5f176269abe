package main

import "math"

// pow10 is 10^x.
func pow10(x float64) float64 { return math.Pow(10, x) }

// rate returns n per second over seconds, 0 for an empty window.
func rate(n uint64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) / seconds
}
