package httpapi

import (
	"errors"
	"github.com/stratabroker/strata/server"
	"net/http"
	"testing"
	"time"

	"github.com/stratabroker/strata/net/wire"
)

func TestLoginLimiterBucket(t *testing.T) {
	clock := &testClock{t: time.Unix(1000, 0)}
	l := server.NewLoginLimiter(server.LoginLimits{PerUserAddress: 2, PerUser: 3, PerAddress: 4, Refill: 10 * time.Second}, clock.Now)
	// Refunded attempts (successful logins) cost nothing.
	for range 5 {
		a, ok, _ := l.Take("a", "ann")
		if !ok {
			t.Fatal("a refunded attempt was charged")
		}
		l.Refund(a)
	}
	for range 2 {
		a, ok, _ := l.Take("a", "ann")
		if !ok {
			t.Fatal("attempt within the burst refused")
		}
		l.Fail(a)
	}
	if _, ok, wait := l.Take("a", "ann"); ok || wait != 10 {
		t.Fatalf("after the burst: allowed %v wait %d", ok, wait)
	}
	// Another name from the same address, and the same name from another
	// address, are not limited by ann's failures at a.
	for _, k := range [][2]string{{"a", "bob"}, {"b", "ann"}} {
		a, ok, _ := l.Take(k[0], k[1])
		if !ok {
			t.Fatalf("%s at %s is limited by ann's failures at a", k[1], k[0])
		}
		l.Refund(a)
	}
	// ann's failures from anywhere: one more from b spends her per-user
	// allowance of 3, so ann is refused everywhere.
	a, _, _ := l.Take("b", "ann")
	l.Fail(a)
	if _, ok, _ := l.Take("c", "ann"); ok {
		t.Fatal("a name that failed 3 times is still allowed from a fresh address")
	}
	// The address allowance (4) counts every name: a has spent 2 on ann;
	// two failures of other names spend it.
	for _, name := range []string{"cat", "dan"} {
		a, ok, _ := l.Take("a", name)
		if !ok {
			t.Fatalf("%s refused at a", name)
		}
		l.Fail(a)
	}
	if _, ok, _ := l.Take("a", "eve"); ok {
		t.Fatal("an address that failed 4 times is still allowed a new name")
	}
	// Token logins (no name) count on the address too.
	if _, ok, _ := l.Take("a", ""); ok {
		t.Fatal("a token login is allowed from a spent address")
	}
	clock.Advance(5 * time.Second)
	if _, ok, wait := l.Take("a", "ann"); ok || wait != 5 {
		t.Fatalf("half refilled: allowed %v wait %d", ok, wait)
	}
	clock.Advance(5 * time.Second)
	a, ok, _ := l.Take("a", "ann")
	if !ok {
		t.Fatal("refilled address refused")
	}
	l.Fail(a)
	// Refill never exceeds the burst.
	clock.Advance(time.Hour)
	for range 2 {
		a, _, _ := l.Take("a", "ann")
		l.Fail(a)
	}
	if _, ok, _ := l.Take("a", "ann"); ok {
		t.Fatal("a long pause banked more than the burst")
	}

	// Logins in flight do not refuse the ones that follow: with both
	// tokens held, a third attempt waits until one of them ends.
	c := server.NewLoginLimiter(server.LoginLimits{PerUserAddress: 2, PerUser: 2, PerAddress: 2, Refill: 10 * time.Second}, clock.Now)
	c1, _, _ := c.Take("c", "cy")
	c2, _, _ := c.Take("c", "cy")
	third := make(chan server.LoginAttempt)
	go func() {
		a, ok, _ := c.Take("c", "cy")
		if !ok {
			close(third)
			return
		}
		third <- a
	}()
	select {
	case <-third:
		t.Fatal("a third attempt ran while two held the only tokens")
	case <-time.After(20 * time.Millisecond):
	}
	c.Refund(c1) // a good login ends: its token goes to the third
	c3, ok := <-third
	if !ok {
		t.Fatal("the waiting attempt was refused")
	}
	c.Fail(c2)
	c.Fail(c3) // both failed: no token left, none in flight, a full refill to wait
	if _, ok, wait := c.Take("c", "cy"); ok || wait != 10 {
		t.Fatalf("after two failures with a burst of 2: allowed %v wait %d", ok, wait)
	}
}

func TestRateLimiter(t *testing.T) {
	clock := &testClock{t: time.Unix(1000, 0)}
	r := server.NewRateLimiter(3, 2*time.Second, clock.Now)
	for range 3 {
		if ok, _ := r.Allow("u@a"); !ok {
			t.Fatal("refused within the burst")
		}
	}
	if ok, wait := r.Allow("u@a"); ok || wait != 2 {
		t.Fatalf("past the burst: allowed %v wait %d", ok, wait)
	}
	if ok, _ := r.Allow("v@a"); !ok {
		t.Fatal("another key is limited too")
	}
	clock.Advance(2 * time.Second)
	if ok, _ := r.Allow("u@a"); !ok {
		t.Fatal("refilled key refused")
	}
	if ok, _ := r.Allow("u@a"); ok {
		t.Fatal("one refill allowed two")
	}
}

func TestStatusMapping(t *testing.T) {
	cases := map[wire.ErrorCode]int{
		1009: http.StatusNotFound, 2010: http.StatusNotFound, 3007: http.StatusNotFound, 4000: http.StatusNotFound,
		100: http.StatusNotFound, 5000: http.StatusNotFound, 5003: http.StatusNotFound, 5006: http.StatusNotFound,
		3021: http.StatusNotFound, 20: http.StatusNotFound,
		40: http.StatusUnauthorized, 77: http.StatusUnauthorized, 78: http.StatusUnauthorized, 53: http.StatusUnauthorized,
		41: http.StatusForbidden, 57: http.StatusServiceUnavailable, 58: http.StatusServiceUnavailable,
		42: http.StatusBadRequest, 1012: http.StatusBadRequest, 4: http.StatusBadRequest, 5: http.StatusBadRequest,
	}
	for code, want := range cases {
		if got := statusFor(code); got != want {
			t.Errorf("code %d → %d, want %d", code, got, want)
		}
	}
	if err := badRequest("x", "bad %d", 1); !errors.Is(err, ErrBadRequest) || !errors.Is(err, wire.ErrInvalidFormat) {
		t.Errorf("badRequest chain: %v", err)
	}
	for name, want := range map[string]string{"StreamIdNotFound": "stream_id_not_found", "Error": "error", "InvalidFormat": "invalid_format"} {
		if got := snakeName(name); got != want {
			t.Errorf("snakeName(%s) = %s, want %s", name, got, want)
		}
	}
}
