package server

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/stratabroker/strata/server/config"
)

// loginLimiterBucketsMax bounds how many buckets a limiter keeps; past it,
// buckets that have refilled are dropped first and then the buckets are
// forgotten wholesale (a flood of distinct addresses or names must not
// grow memory without bound).
const loginLimiterBucketsMax = 65536

// loginLimit names one of the buckets a failed login draws on.
type loginLimit uint8

const (
	// limitUserAddress counts one username's failures from one address:
	// someone guessing one name.
	limitUserAddress loginLimit = iota
	// limitUser counts one username's failures from every address: a
	// guess at one name spread over many addresses.
	limitUser
	// limitAddress counts every failure from one address, whatever the
	// name: one address trying many names. Its allowance is the largest,
	// so that the users behind one shared address (NAT) do not lock each
	// other out by their mistakes.
	limitAddress
	loginLimitCount
)

// LoginLimits shapes a LoginLimiter: the failures allowed in a row per
// (address, username), per username and per address, and the interval
// after which each of those buckets allows one more (positive; Validate
// checks [login]).
type LoginLimits struct {
	PerUserAddress int
	PerUser        int
	PerAddress     int
	Refill         time.Duration
}

// LoginLimitsFrom reads the [login] section.
func LoginLimitsFrom(l config.Login) LoginLimits {
	return LoginLimits{PerUserAddress: int(l.FailuresPerUserAddress), PerUser: int(l.FailuresPerUser),
		PerAddress: int(l.FailuresPerAddress), Refill: time.Duration(l.FailureRefill)}
}

// loginBucketKey identifies a bucket: its limit and the address and
// username it counts (the fields its limit does not use are empty).
type loginBucketKey struct {
	limit    loginLimit
	address  string
	username string
}

// LoginAttempt is one login's claim on the limiter, from Take to Refund
// or Fail.
type LoginAttempt struct {
	keys []loginBucketKey
}

// LoginLimiter is a set of token buckets that only failed logins drain.
// A login draws on the bucket of its (address, username), of its username
// and of its address; a login with no username (a personal access token,
// which cannot be guessed) on its address's alone, so one client's bad
// token does not refuse the token logins of others behind its address.
// An attempt needs a token in each; once failures have emptied one, one
// more attempt is allowed per Refill interval. Every attempt takes its
// tokens up front; a
// login that does not fail on credentials gives them back (Refund), one
// that fails keeps them (Fail), so successful logins cost nothing. Only
// failures refuse attempts: when the tokens left are all held by logins in
// flight, a new attempt waits for one of those to end instead of being
// refused, so many concurrent good logins all go through while no more
// attempts than the tokens left are ever in flight.
type LoginLimiter struct {
	bursts [loginLimitCount]float64
	refill time.Duration
	now    func() time.Time

	mu sync.Mutex
	// released is signalled when an attempt in flight ends.
	released *sync.Cond
	// Invariant: a bucket absent from the map is full and has nothing in
	// flight.
	buckets map[loginBucketKey]*loginBucket
}

// loginBucket is one key's remaining failures and when it was filled.
type loginBucket struct {
	tokens float64
	at     time.Time
	// pending counts attempts in flight: taken, not yet refunded or
	// failed.
	pending int
}

// NewLoginLimiter returns a limiter shaped by limits; now is the clock
// (time.Now in production).
func NewLoginLimiter(limits LoginLimits, now func() time.Time) *LoginLimiter {
	l := &LoginLimiter{refill: limits.Refill, now: now, buckets: map[loginBucketKey]*loginBucket{}}
	l.bursts[limitUserAddress] = float64(max(limits.PerUserAddress, 1))
	l.bursts[limitUser] = float64(max(limits.PerUser, 1))
	l.bursts[limitAddress] = float64(max(limits.PerAddress, 1))
	l.released = sync.NewCond(&l.mu)
	return l
}

// attemptOf lists the buckets a login from address as username draws on.
func attemptOf(address, username string) LoginAttempt {
	keys := []loginBucketKey{{limit: limitAddress, address: address}}
	if username != "" {
		keys = append(keys, loginBucketKey{limit: limitUserAddress, address: address, username: username},
			loginBucketKey{limit: limitUser, username: username})
	}
	return LoginAttempt{keys: keys}
}

// level refills b to now and returns its tokens. Callers hold mu.
func (l *LoginLimiter) level(b *loginBucket, burst float64, now time.Time) float64 {
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = math.Min(burst, b.tokens+float64(elapsed)/float64(l.refill))
		b.at = now
	}
	return b.tokens
}

// Take claims one attempt of a login from address as username (empty for
// a token login) before the login runs. When failures have used up one of
// its buckets it reports how many seconds until that bucket has a token
// again; when the tokens left are held by attempts in flight it waits for
// one of those to end.
func (l *LoginLimiter) Take(address, username string) (LoginAttempt, bool, int) {
	attempt := attemptOf(address, username)
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		now := l.now()
		short, refused := false, 0.0
		for _, key := range attempt.keys {
			b, ok := l.buckets[key]
			if !ok {
				continue
			}
			tokens := l.level(b, l.bursts[key.limit], now)
			if tokens >= 1 {
				continue
			}
			short = true
			// Failures alone leave this many: the tokens held in flight
			// most likely come back.
			if level := tokens + float64(b.pending); level < 1 {
				refused = math.Max(refused, 1-level)
			}
		}
		if refused > 0 {
			wait := time.Duration(refused * float64(l.refill))
			return LoginAttempt{}, false, int(math.Ceil(wait.Seconds()))
		}
		if !short {
			for _, key := range attempt.keys {
				b := l.bucket(key, now)
				b.tokens--
				b.pending++
			}
			return attempt, true, 0
		}
		l.released.Wait()
	}
}

// bucket returns key's bucket, made full when absent. Callers hold mu.
func (l *LoginLimiter) bucket(key loginBucketKey, now time.Time) *loginBucket {
	if b, ok := l.buckets[key]; ok {
		return b
	}
	if len(l.buckets) >= loginLimiterBucketsMax {
		l.prune(now)
	}
	b := &loginBucket{tokens: l.bursts[key.limit], at: now}
	l.buckets[key] = b
	return b
}

// Refund gives back the attempt of a login that did not fail on
// credentials.
func (l *LoginLimiter) Refund(attempt LoginAttempt) {
	l.end(attempt, true)
}

// Fail ends the attempt of a login that failed: its tokens stay spent.
func (l *LoginLimiter) Fail(attempt LoginAttempt) {
	l.end(attempt, false)
}

// end closes an attempt in flight, returning its tokens when refund.
func (l *LoginLimiter) end(attempt LoginAttempt, refund bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, key := range attempt.keys {
		b, ok := l.buckets[key]
		if !ok {
			continue
		}
		if refund {
			b.tokens = math.Min(l.bursts[key.limit], b.tokens+1)
		}
		b.pending = max(b.pending-1, 0)
	}
	l.released.Broadcast()
}

// prune drops refilled buckets, and everything if that frees nothing.
// Callers hold mu.
func (l *LoginLimiter) prune(now time.Time) {
	for key, b := range l.buckets {
		if burst := l.bursts[key.limit]; b.pending == 0 && l.level(b, burst, now) >= burst {
			delete(l.buckets, key)
		}
	}
	if len(l.buckets) >= loginLimiterBucketsMax {
		clear(l.buckets)
	}
}

// RateLimiter is a token bucket per key: Burst events in a row, then one
// more per Refill interval. The HTTP gateway limits successful logins per
// (user, address) with one.
type RateLimiter struct {
	burst  float64
	refill time.Duration
	now    func() time.Time

	mu sync.Mutex
	// Invariant: a key absent from the map has a full bucket.
	buckets map[string]*loginBucket
}

// NewRateLimiter allows burst events per key, then one more per refill
// (positive).
func NewRateLimiter(burst int, refill time.Duration, now func() time.Time) *RateLimiter {
	return &RateLimiter{burst: float64(max(burst, 1)), refill: refill, now: now, buckets: map[string]*loginBucket{}}
}

// Allow spends one event of key, or reports how many seconds until key
// has one.
func (r *RateLimiter) Allow(key string) (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	b, ok := r.buckets[key]
	if !ok {
		if len(r.buckets) >= loginLimiterBucketsMax {
			r.prune(now)
		}
		b = &loginBucket{tokens: r.burst, at: now}
		r.buckets[key] = b
	}
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = math.Min(r.burst, b.tokens+float64(elapsed)/float64(r.refill))
		b.at = now
	}
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) * float64(r.refill))
		return false, max(int(math.Ceil(wait.Seconds())), 1)
	}
	b.tokens--
	return true, 0
}

// prune drops refilled buckets, and everything if that frees nothing.
// Callers hold mu.
func (r *RateLimiter) prune(now time.Time) {
	for key, b := range r.buckets {
		if b.tokens+float64(now.Sub(b.at))/float64(r.refill) >= r.burst {
			delete(r.buckets, key)
		}
	}
	if len(r.buckets) >= loginLimiterBucketsMax {
		clear(r.buckets)
	}
}

// UserAddressKey is the RateLimiter key of a user at an address.
func UserAddressKey(userID uint32, address string) string {
	return strconv.FormatUint(uint64(userID), 10) + "@" + address
}

// LoginConfig returns the [login] section the server runs with, for
// gateways that apply its limits to their own sessions.
func (s *Server) LoginConfig() config.Login { return s.cfg.Login }
