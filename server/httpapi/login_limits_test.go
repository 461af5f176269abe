package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// post sends a JSON body and returns the status, for goroutines other
// than the test's (which must not call t.Fatal).
func (h *harness) post(c *http.Client, path string, body any) (int, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	resp, err := c.Post(h.base+path, "application/json", bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// TestOneUserCannotLockOthersOutOfHTTP: an unprivileged user making
// thousands of personal-access-token and password logins over HTTP (the
// report: 4,096 in 1.4 s filled the session table and root got 503 for an
// hour) is held to its own share: its successful logins are rate-limited
// per (user, address), its sessions are bounded per user with its own
// oldest going first, and root's session from before the flood keeps
// working while root logs in again and uses the new token.
func TestOneUserCannotLockOthersOutOfHTTP(t *testing.T) {
	const perUser = 16
	h := start(t, Config{SessionsPerUser: perUser})
	root := h.root()
	var user userJSON
	h.expect(http.StatusOK, "POST", "/users", root, map[string]any{"username": "flood", "password": "flood-pw", "status": "active"}).decode(t, &user)
	var pat tokenRequest
	h.expect(http.StatusOK, "POST", "/personal-access-tokens", h.login("flood", "flood-pw").AccessToken.Token,
		map[string]any{"name": "flood", "expiry": 0}).decode(t, &pat)

	const workers, perWorker = 4, 1100
	var mu sync.Mutex
	statuses := map[int]int{}
	var failures []error
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			c := &http.Client{Timeout: 30 * time.Second}
			for i := range perWorker {
				path, body := "/personal-access-tokens/login", any(map[string]string{"token": pat.Token})
				if i%200 == 0 {
					path, body = "/users/login", map[string]string{"username": "flood", "password": "flood-pw"}
				}
				status, err := h.post(c, path, body)
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Errorf("worker %d login %d: %w", w, i, err))
				}
				statuses[status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range failures {
		t.Fatal(err)
	}
	t.Logf("%d logins of one user: statuses %v", workers*perWorker, statuses)
	if statuses[http.StatusOK] == 0 || statuses[http.StatusTooManyRequests] == 0 ||
		statuses[http.StatusOK]+statuses[http.StatusTooManyRequests] != workers*perWorker {
		t.Fatalf("statuses %v, want successes up to the rate limit, then 429", statuses)
	}

	// Root's token from before the flood still works; root logs in again
	// and uses the new token.
	h.expect(http.StatusOK, "GET", "/streams", root, nil)
	fresh := h.root()
	h.expect(http.StatusOK, "POST", "/streams", fresh, map[string]any{"name": "after-the-flood"})
	var clients []clientJSON
	h.expect(http.StatusOK, "GET", "/clients", fresh, nil).decode(t, &clients)
	held := 0
	for _, c := range clients {
		if c.UserID != nil && *c.UserID == user.ID && c.Transport == "http" {
			held++
		}
	}
	if held > perUser {
		t.Fatalf("the flooding user holds %d broker sessions, bound %d", held, perUser)
	}
}

// TestHTTPLoginsPastTheUserBoundEndTheOldest: each login past the per-user
// bound ends that user's oldest session (its token is refused, its broker
// session logged out); the newest sessions keep working.
func TestHTTPLoginsPastTheUserBoundEndTheOldest(t *testing.T) {
	t.Parallel()
	const perUser = 3
	h := start(t, Config{SessionsPerUser: perUser})
	var tokens []string
	for range perUser + 2 {
		tokens = append(tokens, h.root())
	}
	for i, tok := range tokens {
		if i < 2 {
			h.expectError(http.StatusUnauthorized, 78, "GET", "/streams", tok, nil)
		} else {
			h.expect(http.StatusOK, "GET", "/streams", tok, nil)
		}
	}
	if n := countHTTPClients(t, h, tokens[len(tokens)-1]); n != perUser {
		t.Fatalf("%d broker sessions behind %d live tokens", n, perUser)
	}
}

// TestSuccessfulLoginsAreRateLimitedPerUserAndAddress: past the burst a
// user's good logins from one address answer 429 with Retry-After, while
// another user's logins from the same address go through.
func TestSuccessfulLoginsAreRateLimitedPerUserAndAddress(t *testing.T) {
	t.Parallel()
	h := start(t, Config{SuccessesPerUserAddress: 3, SuccessRefill: 5 * time.Second})
	root := h.root()
	h.expect(http.StatusOK, "POST", "/users", root, map[string]any{"username": "alice", "password": "alice-pw", "status": "active"})
	h.root()
	h.root()
	r := h.expect(http.StatusTooManyRequests, "POST", "/users/login", "", map[string]string{"username": "iggy", "password": "iggy"})
	if e := r.apiErr(t); e.ID != 1 || r.header.Get("Retry-After") != "5" {
		t.Fatalf("rate-limited login: %+v, Retry-After %q", e, r.header.Get("Retry-After"))
	}
	h.login("alice", "alice-pw")
	h.clock.Advance(5 * time.Second)
	h.root()
	// The refused login was not a failed one: no failure was counted.
	for range 5 {
		h.expectError(http.StatusBadRequest, 42, "POST", "/users/login", "", map[string]string{"username": "iggy", "password": "wrong"})
	}
}

// fromAddress is an HTTP client whose connections leave from source (a
// loopback address other than the harness's 127.0.0.1).
func fromAddress(source string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}}}
}

// TestHTTPSharedAddressDoesNotLockOutOtherUsers: five wrong passwords for
// alice from 127.0.0.1 (400, as Iggy answers) leave bob's and root's right
// passwords from 127.0.0.1 working at once; alice waits a refill at that
// address (what stops someone guessing her name there) but not at
// another.
func TestHTTPSharedAddressDoesNotLockOutOtherUsers(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	root := h.root()
	for _, name := range []string{"alice", "bob"} {
		h.expect(http.StatusOK, "POST", "/users", root, map[string]any{"username": name, "password": name + "-pw", "status": "active"})
	}
	for range 5 {
		h.expectError(http.StatusBadRequest, 42, "POST", "/users/login", "", map[string]string{"username": "alice", "password": "wrong"})
	}
	h.login("bob", "bob-pw")
	h.root()
	r := h.expect(http.StatusTooManyRequests, "POST", "/users/login", "", map[string]string{"username": "alice", "password": "alice-pw"})
	if r.header.Get("Retry-After") != "12" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Log("127.0.0.2 is not a local address here: alice's login from another address is not tried")
	} else {
		_ = ln.Close()
		other := &harness{t: t, srv: h.srv, base: h.base, clock: h.clock, logs: h.logs, http: fromAddress("127.0.0.2")}
		other.login("alice", "alice-pw")
	}
	h.clock.Advance(12 * time.Second)
	h.login("alice", "alice-pw")
}
