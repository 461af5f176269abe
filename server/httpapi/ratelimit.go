package httpapi

import (
	"math"
	"net"
	"net/http"
	"sync"
	"time"
)

// loginLimiterAddressesMax bounds how many client addresses the failed-login
// limiter tracks; past it, buckets that have refilled are dropped first and
// then the addresses are forgotten wholesale (a flood of distinct addresses
// must not grow memory without bound).
const loginLimiterAddressesMax = 65536

// loginLimiter is a token bucket per client address that only failed
// logins drain: an address may fail Burst times in a row, then one more
// attempt is allowed per Refill interval. Successful logins cost nothing.
type loginLimiter struct {
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

func newLoginLimiter(burst int, refill time.Duration, now func() time.Time) *loginLimiter {
	return &loginLimiter{burst: float64(burst), refill: refill, now: now, buckets: map[string]*loginBucket{}}
}

// level refills b to now and returns its tokens. Callers hold mu.
func (l *loginLimiter) level(b *loginBucket, now time.Time) float64 {
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+float64(elapsed)/float64(l.refill))
		b.at = now
	}
	return b.tokens
}

// allow reports whether address may attempt a login now and, if not, how
// many seconds until it may.
func (l *loginLimiter) allow(address string) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[address]
	if !ok {
		return true, 0
	}
	tokens := l.level(b, l.now())
	if tokens >= 1 {
		return true, 0
	}
	wait := time.Duration((1 - tokens) * float64(l.refill))
	return false, int(math.Ceil(wait.Seconds()))
}

// failed records a failed login from address.
func (l *loginLimiter) failed(address string) {
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
	l.level(b, now)
	b.tokens = math.Max(0, b.tokens-1)
}

// prune drops refilled buckets, and everything if that frees nothing.
// Callers hold mu.
func (l *loginLimiter) prune(now time.Time) {
	for address, b := range l.buckets {
		if l.level(b, now) >= l.burst {
			delete(l.buckets, address)
		}
	}
	if len(l.buckets) >= loginLimiterAddressesMax {
		clear(l.buckets)
	}
}

// clientAddress is the address the limiter keys on: the peer IP of the
// connection (forwarding headers are not trusted).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
