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
	l := server.NewLoginLimiter(2, 10*time.Second, clock.Now)
	// Refunded attempts (successful logins) cost nothing.
	for range 5 {
		if ok, _ := l.Take("a"); !ok {
			t.Fatal("a refunded attempt was charged")
		}
		l.Refund("a")
	}
	for range 2 {
		if ok, _ := l.Take("a"); !ok {
			t.Fatal("attempt within the burst refused")
		}
		l.Fail("a")
	}
	if ok, wait := l.Take("a"); ok || wait != 10 {
		t.Fatalf("after the burst: allowed %v wait %d", ok, wait)
	}
	if ok, _ := l.Take("b"); !ok {
		t.Fatal("another address is limited too")
	}
	l.Refund("b")
	clock.Advance(5 * time.Second)
	if ok, wait := l.Take("a"); ok || wait != 5 {
		t.Fatalf("half refilled: allowed %v wait %d", ok, wait)
	}
	clock.Advance(5 * time.Second)
	if ok, _ := l.Take("a"); !ok {
		t.Fatal("refilled address refused")
	}
	l.Fail("a")
	// Refill never exceeds the burst.
	clock.Advance(time.Hour)
	for range 2 {
		l.Take("a")
		l.Fail("a")
	}
	if ok, _ := l.Take("a"); ok {
		t.Fatal("a long pause banked more than the burst")
	}

	// Logins in flight do not refuse the ones that follow: with both
	// tokens held, a third attempt waits until one of them ends.
	c := server.NewLoginLimiter(2, 10*time.Second, clock.Now)
	c.Take("c")
	c.Take("c")
	third := make(chan bool)
	go func() {
		ok, _ := c.Take("c")
		third <- ok
	}()
	select {
	case <-third:
		t.Fatal("a third attempt ran while two held the only tokens")
	case <-time.After(20 * time.Millisecond):
	}
	c.Refund("c") // a good login ends: its token goes to the third
	if !<-third {
		t.Fatal("the waiting attempt was refused")
	}
	c.Fail("c")
	c.Fail("c") // both failed: no token left, none in flight, a full refill to wait
	if ok, wait := c.Take("c"); ok || wait != 10 {
		t.Fatalf("after two failures with a burst of 2: allowed %v wait %d", ok, wait)
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
