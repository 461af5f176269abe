package httpapi

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratabroker/strata/server"
)

func TestRefreshAndLogoutRevokeTokens(t *testing.T) {
	t.Parallel()
	h := start(t, Config{AccessTokenExpiry: time.Minute})
	id := h.login("iggy", "iggy")
	if id.UserID != 0 || id.AccessToken.Expiry != uint64(h.clock.Now().Add(time.Minute).Unix()) {
		t.Fatalf("identity %+v, expiry want %d", id.AccessToken, h.clock.Now().Add(time.Minute).Unix())
	}
	old := id.AccessToken.Token
	h.expect(http.StatusOK, "GET", "/streams", old, nil)

	// Refresh: the new token works, the old one is revoked.
	var refreshed identityInfo
	h.expect(http.StatusOK, "POST", "/users/refresh-token", "", map[string]string{"token": old}).decode(t, &refreshed)
	fresh := refreshed.AccessToken.Token
	if fresh == old || refreshed.UserID != 0 {
		t.Fatalf("refresh gave %+v", refreshed)
	}
	h.expect(http.StatusOK, "GET", "/streams", fresh, nil)
	if e := h.expectError(http.StatusUnauthorized, 78, "GET", "/streams", old, nil); e.Reason != "access token revoked" {
		t.Fatalf("revoked token error %+v", e)
	}
	h.expectError(http.StatusUnauthorized, 78, "POST", "/users/refresh-token", "", map[string]string{"token": old})

	// The refreshed token keeps the same broker session (one HTTP client).
	if n := countHTTPClients(t, h, fresh); n != 1 {
		t.Fatalf("%d HTTP sessions after a refresh, want 1", n)
	}

	// Logout revokes the token and ends the broker session.
	h.expect(http.StatusNoContent, "DELETE", "/users/logout", fresh, nil)
	h.expectError(http.StatusUnauthorized, 78, "GET", "/streams", fresh, nil)
	other := h.root()
	if n := countHTTPClients(t, h, other); n != 1 {
		t.Fatalf("%d HTTP sessions after logout and a new login, want 1", n)
	}

	// Expiry: past the lifetime the token is refused and its session swept.
	h.clock.Advance(time.Minute + time.Second)
	e := h.expectError(http.StatusUnauthorized, 78, "GET", "/streams", other, nil)
	if e.Code != "invalid_access_token" {
		t.Fatalf("expired token error %+v", e)
	}
	if got := h.expect(http.StatusUnauthorized, "GET", "/streams", other, nil).header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
		t.Fatalf("WWW-Authenticate %q", got)
	}
	last := h.root()
	if n := countHTTPClients(t, h, last); n != 1 {
		t.Fatalf("%d HTTP sessions after expiry, want 1", n)
	}

	// A token signed with another secret is refused.
	forged, err := (&tokenStore{secret: []byte("another secret"), expiry: time.Hour}).sign(0, "x", h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	h.expectError(http.StatusUnauthorized, 78, "GET", "/streams", forged.token, nil)
}

// countHTTPClients counts the broker sessions the gateway holds.
func countHTTPClients(t *testing.T, h *harness, token string) int {
	t.Helper()
	var clients []clientJSON
	h.expect(http.StatusOK, "GET", "/clients", token, nil).decode(t, &clients)
	n := 0
	for _, c := range clients {
		if c.Transport == "http" {
			n++
		}
	}
	var one clientJSON
	if len(clients) > 0 {
		h.expect(http.StatusOK, "GET", "/clients/"+itoa(clients[0].ClientID), token, nil).decode(t, &one)
		if one.ClientID != clients[0].ClientID || one.ConsumerGroups == nil {
			t.Fatalf("client details %+v", one)
		}
	}
	return n
}

func TestFailedLoginsAreRateLimited(t *testing.T) {
	t.Parallel()
	h := start(t, Config{LoginFailures: server.LoginLimits{PerUserAddress: 3, PerUser: 3, PerAddress: 3, Refill: 10 * time.Second}})
	for range 3 {
		e := h.expectError(http.StatusBadRequest, 42, "POST", "/users/login", "", map[string]string{"username": "iggy", "password": "wrong-password"})
		if e.Code != "invalid_credentials" {
			t.Fatalf("failed login error %+v", e)
		}
	}
	// Spent: even the right password is refused until the bucket refills.
	r := h.expect(http.StatusTooManyRequests, "POST", "/users/login", "", map[string]string{"username": "iggy", "password": "iggy"})
	if r.header.Get("Retry-After") != "10" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if e := r.apiErr(t); e.ID != 1 || !strings.Contains(e.Reason, "too many failed logins") {
		t.Fatalf("rate-limit error %+v", e)
	}
	h.expect(http.StatusTooManyRequests, "POST", "/personal-access-tokens/login", "", map[string]string{"token": "whatever"})
	h.clock.Advance(10 * time.Second)
	first := h.login("iggy", "iggy").AccessToken.Token
	// Successful logins cost nothing; one more failure spends the refill.
	second := h.login("iggy", "iggy").AccessToken.Token
	h.expect(http.StatusNoContent, "DELETE", "/users/logout", second, nil)
	h.expect(http.StatusUnauthorized, "GET", "/streams", second, nil)
	h.expectError(http.StatusBadRequest, 42, "POST", "/users/login", "", map[string]string{"username": "iggy", "password": "nope"})
	h.expect(http.StatusTooManyRequests, "POST", "/users/login", "", map[string]string{"username": "iggy", "password": "iggy"})

	// Neither passwords nor tokens reach the log.
	logs := h.logs.String()
	for _, secret := range []string{"wrong-password", "nope", first, second, "Bearer"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("log contains %q", secret)
		}
	}
}

func TestPersonalAccessTokens(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()
	var created tokenRequest
	h.expect(http.StatusOK, "POST", "/personal-access-tokens", tok, map[string]any{"name": "ci-token", "expiry": "1 day"}).decode(t, &created)
	h.expect(http.StatusOK, "POST", "/personal-access-tokens", tok, map[string]any{"name": "forever", "expiry": 0})
	h.expectError(http.StatusBadRequest, 50, "POST", "/personal-access-tokens", tok, map[string]any{"name": "x"})
	h.expectError(http.StatusBadRequest, 51, "POST", "/personal-access-tokens", tok, map[string]any{"name": "forever"})
	// Expiries are read by net/units, as in the config and the CLI.
	h.expect(http.StatusOK, "POST", "/personal-access-tokens", tok, map[string]any{"name": "weekly", "expiry": "1.5 weeks"})
	h.expectError(http.StatusBadRequest, 56, "POST", "/personal-access-tokens", tok, map[string]any{"name": "hourly", "expiry": "1 HOUR"})
	var list []patJSON
	h.expect(http.StatusOK, "GET", "/personal-access-tokens", tok, nil).decode(t, &list)
	if len(list) != 3 {
		t.Fatalf("tokens %+v", list)
	}
	for _, p := range list {
		if (p.Name == "forever") != (p.ExpiryAt == nil) {
			t.Fatalf("token %s expiry %v", p.Name, p.ExpiryAt)
		}
	}

	var id identityInfo
	h.expect(http.StatusOK, "POST", "/personal-access-tokens/login", "", map[string]string{"token": created.Token}).decode(t, &id)
	if id.UserID != 0 {
		t.Fatalf("PAT identity %+v", id)
	}
	h.expect(http.StatusOK, "POST", "/streams", id.AccessToken.Token, map[string]any{"name": "via-pat"})

	h.expect(http.StatusNoContent, "DELETE", "/personal-access-tokens/ci-token", tok, nil)
	h.expectError(http.StatusNotFound, 20, "DELETE", "/personal-access-tokens/ci-token", tok, nil)
	h.expectError(http.StatusUnauthorized, 53, "POST", "/personal-access-tokens/login", "", map[string]string{"token": created.Token})
}

// TestSessionsAreBounded: a user's login past its bound ends that user's
// oldest session; a login into a gateway full of other users' sessions is
// refused (503) without displacing any of them.
func TestSessionsAreBounded(t *testing.T) {
	t.Parallel()
	h := start(t, Config{SessionsMax: 3, SessionsPerUser: 2,
		LoginFailures: server.LoginLimits{PerUserAddress: 1, PerUser: 1, PerAddress: 1, Refill: time.Hour}})
	r1 := h.root()
	for _, name := range []string{"alice", "bob"} {
		h.expect(http.StatusOK, "POST", "/users", r1, map[string]any{"username": name, "password": name + "-pw", "status": "active"})
	}
	r2 := h.root()
	// Root's third login: its own oldest session goes.
	r3 := h.root()
	h.expectError(http.StatusUnauthorized, 78, "GET", "/personal-access-tokens", r1, nil)
	a1 := h.login("alice", "alice-pw").AccessToken.Token
	// Full of root's and alice's sessions: bob is refused, nobody is
	// displaced.
	r := h.expect(http.StatusServiceUnavailable, "POST", "/users/login", "", map[string]string{"username": "bob", "password": "bob-pw"})
	if e := r.apiErr(t); e.ID != 58 || r.header.Get("Retry-After") == "" {
		t.Fatalf("full gateway: %+v, Retry-After %q", e, r.header.Get("Retry-After"))
	}
	for _, tok := range []string{r2, r3, a1} {
		h.expect(http.StatusOK, "GET", "/personal-access-tokens", tok, nil)
	}
	// Alice, below her bound in a full gateway, gives up her own oldest.
	a2 := h.login("alice", "alice-pw").AccessToken.Token
	h.expectError(http.StatusUnauthorized, 78, "GET", "/personal-access-tokens", a1, nil)
	for _, tok := range []string{r2, r3, a2} {
		h.expect(http.StatusOK, "GET", "/personal-access-tokens", tok, nil)
	}
	if n := countHTTPClients(t, h, r2); n != 3 {
		t.Fatalf("%d broker sessions behind 3 tokens", n)
	}
	// A logout frees a slot; the refused login did not count as a failed
	// one (a burst of 1 would have been spent).
	h.expect(http.StatusNoContent, "DELETE", "/users/logout", r2, nil)
	h.login("bob", "bob-pw")
}

func TestConcurrentRequestsShareOneSession(t *testing.T) {
	t.Parallel()
	h := start(t, Config{})
	tok := h.root()
	h.expect(http.StatusOK, "POST", "/streams", tok, map[string]any{"name": "c"})
	h.expect(http.StatusOK, "POST", "/streams/c/topics", tok, map[string]any{"name": "t", "partitions_count": 1})
	const workers, perWorker = 4, 10
	var wg sync.WaitGroup
	errs := make(chan string, workers*perWorker)
	for range workers {
		wg.Go(func() {
			for range perWorker {
				r := h.do("POST", "/streams/c/topics/t/messages", tok, map[string]any{
					"partitioning": map[string]any{"kind": "balanced"}, "messages": []map[string]any{{"payload": "eA=="}}})
				if r.status != http.StatusCreated {
					errs <- string(r.body)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("concurrent send failed: %s", e)
	}
	var polled polledMessagesJSON
	h.expect(http.StatusOK, "GET", "/streams/c/topics/t/messages?count=1000", tok, nil).decode(t, &polled)
	if len(polled.Messages) != workers*perWorker {
		t.Fatalf("polled %d messages, want %d", len(polled.Messages), workers*perWorker)
	}
	for i, m := range polled.Messages {
		if m.Header.Offset != uint64(i) {
			t.Fatalf("message %d has offset %d", i, m.Header.Offset)
		}
	}
}

func TestConcurrentFailedLoginsCannotOverdraw(t *testing.T) {
	t.Parallel()
	h := start(t, Config{LoginFailures: server.LoginLimits{PerUserAddress: 3, PerUser: 3, PerAddress: 3, Refill: time.Hour}})
	const attempts = 10
	statuses := make(chan int, attempts)
	var wg sync.WaitGroup
	for range attempts {
		wg.Go(func() {
			statuses <- h.do("POST", "/users/login", "", map[string]string{"username": "iggy", "password": "guess"}).status
		})
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusBadRequest] != 3 || counts[http.StatusTooManyRequests] != attempts-3 {
		t.Fatalf("statuses %v, want 3 failures and %d refusals", counts, attempts-3)
	}
}
