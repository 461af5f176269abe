package server

import (
	"math"
	"sync"
	"time"
)

// loginLimiterAddressesMax bounds how many client addresses the failed-login
// limiter tracks; past it, buckets that have refilled are dropped first and
// then the addresses are forgotten wholesale (a flood of distinct addresses
// must not grow memory without bound).
const loginLimiterAddressesMax = 65536

// LoginLimiter is a token bucket per client address that only failed
// logins drain: an address may fail Burst times in a row, then one more
// attempt is allowed per Refill interval. Every attempt takes a token up
// front and a login that does not fail on credentials gives it back, so
// successful logins cost nothing.
type LoginLimiter struct {
	burst  float64
	refill time.Duration
	now    func() time.Time

	mu      sync.Mutex
	buckets map[string]*loginBucket
}

// loginBucket is one address's remaining failures and when it was filled.
type loginBucket struct {
	tokens float64
	at     time.Time
}

// NewLoginLimiter allows burst failed logins per address, then one more
// per refill interval; now is the clock (time.Now in production).
func NewLoginLimiter(burst int, refill time.Duration, now func() time.Time) *LoginLimiter {
	return &LoginLimiter{burst: float64(burst), refill: refill, now: now, buckets: map[string]*loginBucket{}}
}

// level refills b to now and returns its tokens. Callers hold mu.
func (l *LoginLimiter) level(b *loginBucket, now time.Time) float64 {
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+float64(elapsed)/float64(l.refill))
		b.at = now
	}
	return b.tokens
}

// Take spends one attempt of address before a login runs (so concurrent
// attempts cannot overdraw the bucket). When none is left it reports how
// many seconds until one is.
func (l *LoginLimiter) Take(address string) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[address]
	if !ok {
		if len(l.buckets) >= loginLimiterAddressesMax {
			l.prune(now)
		}
		b = &loginBucket{tokens: l.burst, at: now}
		l.buckets[address] = b
	}
	tokens := l.level(b, now)
	if tokens < 1 {
		wait := time.Duration((1 - tokens) * float64(l.refill))
		return false, int(math.Ceil(wait.Seconds()))
	}
	b.tokens = tokens - 1
	return true, 0
}

// Refund returns the attempt of a login that did not fail on credentials.
func (l *LoginLimiter) Refund(address string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[address]; ok {
		b.tokens = math.Min(l.burst, b.tokens+1)
	}
}

// prune drops refilled buckets, and everything if that frees nothing.
// Callers hold mu.
func (l *LoginLimiter) prune(now time.Time) {
	for address, b := range l.buckets {
		if l.level(b, now) >= l.burst {
			delete(l.buckets, address)
		}
	}
	if len(l.buckets) >= loginLimiterAddressesMax {
		clear(l.buckets)
	}
}
