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
// front; a login that does not fail on credentials gives it back (Refund),
// one that fails keeps it (Fail), so successful logins cost nothing. Only
// failures refuse attempts: when the tokens left are all held by logins in
// flight, a new attempt waits for one of those to end instead of being
// refused, so many concurrent good logins from one address all go through
// while no more attempts than the tokens left are ever in flight.
type LoginLimiter struct {
	burst  float64
	refill time.Duration
	now    func() time.Time

	mu sync.Mutex
	// released is signalled when an attempt in flight ends.
	released *sync.Cond
	buckets  map[string]*loginBucket
}

// loginBucket is one address's remaining failures and when it was filled.
type loginBucket struct {
	tokens float64
	at     time.Time
	// pending counts attempts in flight: taken, not yet refunded or
	// failed.
	pending int
}

// NewLoginLimiter allows burst failed logins per address, then one more
// per refill interval; now is the clock (time.Now in production).
func NewLoginLimiter(burst int, refill time.Duration, now func() time.Time) *LoginLimiter {
	l := &LoginLimiter{burst: float64(burst), refill: refill, now: now, buckets: map[string]*loginBucket{}}
	l.released = sync.NewCond(&l.mu)
	return l
}

// level refills b to now and returns its tokens. Callers hold mu.
func (l *LoginLimiter) level(b *loginBucket, now time.Time) float64 {
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+float64(elapsed)/float64(l.refill))
		b.at = now
	}
	return b.tokens
}

// Take spends one attempt of address before a login runs. When failures
// have used up the address's tokens it reports how many seconds until one
// is back; when the tokens left are held by attempts in flight it waits
// for one of those to end.
func (l *LoginLimiter) Take(address string) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
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
		if tokens >= 1 {
			b.tokens = tokens - 1
			b.pending++
			return true, 0
		}
		// Failures alone leave this many: the tokens held in flight most
		// likely come back.
		if level := tokens + float64(b.pending); level < 1 {
			wait := time.Duration((1 - level) * float64(l.refill))
			return false, int(math.Ceil(wait.Seconds()))
		}
		l.released.Wait()
	}
}

// Refund returns the attempt of a login that did not fail on credentials.
func (l *LoginLimiter) Refund(address string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[address]; ok {
		b.tokens = math.Min(l.burst, b.tokens+1)
		b.pending = max(b.pending-1, 0)
	}
	l.released.Broadcast()
}

// Fail ends the attempt of a login that failed: its token stays spent.
func (l *LoginLimiter) Fail(address string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[address]; ok {
		b.pending = max(b.pending-1, 0)
	}
	l.released.Broadcast()
}

// prune drops refilled buckets, and everything if that frees nothing.
// Callers hold mu.
func (l *LoginLimiter) prune(now time.Time) {
	for address, b := range l.buckets {
		if b.pending == 0 && l.level(b, now) >= l.burst {
			delete(l.buckets, address)
		}
	}
	if len(l.buckets) >= loginLimiterAddressesMax {
		clear(l.buckets)
	}
}
