package sim

import "math/bits"

// PRNG is the simulator's only source of randomness: a xoshiro256** generator
// seeded through splitmix64. Every random choice of a run derives from one
// seed, either by drawing from the run's PRNG or from a sub-stream made by
// Fork, so the same seed always replays the same run.
//
// A PRNG is not safe for concurrent use; a run owns its PRNGs and uses them
// from one goroutine.
type PRNG struct {
	s [4]uint64
}

// splitmix64 advances *x and returns the next splitmix64 output. It is used
// to expand a 64-bit seed into the 256-bit xoshiro state.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// NewPRNG returns a generator whose whole output is determined by seed.
func NewPRNG(seed uint64) *PRNG {
	p := &PRNG{}
	x := seed
	for i := range p.s {
		p.s[i] = splitmix64(&x)
	}
	// Invariant: the xoshiro state is never all zero. splitmix64 cannot
	// produce four zero words in a row, but assert it anyway.
	if p.s[0]|p.s[1]|p.s[2]|p.s[3] == 0 {
		panic("sim: PRNG state is zero")
	}
	return p
}

func rotl(x uint64, k uint) uint64 { return (x << k) | (x >> (64 - k)) }

// Uint64 returns the next 64 random bits.
func (p *PRNG) Uint64() uint64 {
	s := &p.s
	result := rotl(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = rotl(s[3], 45)
	return result
}

// IntN returns a uniform integer in [0, n). n must be positive.
func (p *PRNG) IntN(n int) int {
	if n <= 0 {
		panic("sim: PRNG.IntN with n <= 0")
	}
	return int(p.Uint64N(uint64(n)))
}

// Uint64N returns a uniform integer in [0, n), without modulo bias
// (Lemire's multiply-and-reject). n must be positive.
func (p *PRNG) Uint64N(n uint64) uint64 {
	if n == 0 {
		panic("sim: PRNG.Uint64N with n == 0")
	}
	for {
		x := p.Uint64()
		hi, lo := bits.Mul64(x, n)
		if lo >= n || lo >= (-n)%n {
			return hi
		}
	}
}

// Range returns a uniform integer in [min, max] (both inclusive).
func (p *PRNG) Range(min, max int) int {
	if max < min {
		panic("sim: PRNG.Range with max < min")
	}
	return min + p.IntN(max-min+1)
}

// Float64 returns a uniform float in [0, 1).
func (p *PRNG) Float64() float64 {
	return float64(p.Uint64()>>11) / (1 << 53)
}

// Chance reports true with probability ppm parts per million. Rates in the
// simulator are integers in parts per million so that parameters print and
// compare exactly.
func (p *PRNG) Chance(ppm uint32) bool {
	if ppm == 0 {
		return false
	}
	if ppm >= PPM {
		return true
	}
	return p.Uint64N(PPM) < uint64(ppm)
}

// PPM is one million: a rate of PPM parts per million is certainty.
const PPM = 1_000_000

// Shuffle permutes the first n elements with swap, Fisher-Yates.
func (p *PRNG) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		j := p.IntN(i + 1)
		swap(i, j)
	}
}

// Fork returns an independent sub-stream derived deterministically from
// this generator's next output and label, so that adding draws to one
// sub-stream never shifts another's.
func (p *PRNG) Fork(label uint64) *PRNG {
	return NewPRNG(p.Uint64() ^ (label * 0x9e3779b97f4a7c15))
}
