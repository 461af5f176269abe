package sim

// tickMicros is the simulated wall-clock length of one tick.
const tickMicros = 10_000

// clockEpochMicros is the simulated wall-clock time at tick 0
// (2026-01-01T00:00:00Z), so timestamps look like real ones.
const clockEpochMicros = 1_767_225_600_000_000

// clockSkewMicrosMax bounds each replica's constant clock offset.
const clockSkewMicrosMax = 50_000

// Clock is a replica's simulated wall clock: the run's tick counter scaled
// to microseconds plus a constant per-replica skew drawn from the seed. It
// implements vsr.Clock.
type Clock struct {
	now        *uint64 // the run's current tick
	skewMicros int64
}

// NewClock returns a clock reading the tick counter at now, offset by a skew
// drawn from prng.
func NewClock(now *uint64, prng *PRNG) *Clock {
	skew := int64(prng.Range(0, 2*clockSkewMicrosMax)) - clockSkewMicrosMax
	return &Clock{now: now, skewMicros: skew}
}

// RealtimeMicros returns the simulated time in microseconds since the Unix
// epoch.
func (c *Clock) RealtimeMicros() uint64 {
	return uint64(int64(clockEpochMicros+*c.now*tickMicros) + c.skewMicros)
}
