package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
)

// testClock is a wall clock the test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// logBuffer collects the server's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) Sync() error { return nil }

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// harness is a broker with the REST API on a real socket.
type harness struct {
	t     testing.TB
	srv   *server.Server
	base  string
	clock *testClock
	logs  *logBuffer
	http  *http.Client
}

// start runs a broker over a temp dir with HTTP on 127.0.0.1:0; cfg.Now
// is replaced by the harness clock.
func start(t testing.TB, cfg Config) *harness {
	t.Helper()
	dir := t.TempDir()
	environ := []string{"STRATA_SYSTEM_PATH=" + dir, "STRATA_TCP_ADDRESS=127.0.0.1:0",
		"STRATA_HTTP_ENABLED=true", "STRATA_HTTP_ADDRESS=127.0.0.1:0"}
	conf, err := config.Load("", environ)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: &testClock{t: time.Now()}, logs: &logBuffer{}, http: &http.Client{Timeout: 30 * time.Second}}
	cfg.Now = h.clock.Now
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), h.logs, zapcore.DebugLevel)
	srv, err := server.New(server.Options{
		Config: conf, Logger: zap.New(core), Root: server.RootCredentials{Username: "iggy", Password: "iggy"},
		HTTP: func(s *server.Server) (http.Handler, error) { return New(s, cfg) },
	})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	h.srv = srv
	h.base = "http://" + srv.HTTPAddr().String()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return h
}

// response is a finished HTTP exchange.
type response struct {
	status int
	header http.Header
	body   []byte
}

// decode unmarshals the body into v.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
}

// apiErr decodes an error body.
func (r response) apiErr(t testing.TB) errorBody {
	t.Helper()
	var e errorBody
	r.decode(t, &e)
	return e
}

// do sends a request; body is JSON-encoded unless it is a string (sent
// as is). token may be empty.
func (h *harness) do(method, path, token string, body any) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, h.base+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// expect sends a request and fails unless the status matches.
func (h *harness) expect(status int, method, path, token string, body any) response {
	h.t.Helper()
	r := h.do(method, path, token, body)
	if r.status != status {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	return r
}

// expectError sends a request and checks the error status and code.
func (h *harness) expectError(status int, id uint32, method, path, token string, body any) errorBody {
	h.t.Helper()
	r := h.expect(status, method, path, token, body)
	e := r.apiErr(h.t)
	if e.ID != id {
		h.t.Fatalf("%s %s: error id %d (%s), want %d", method, path, e.ID, e.Code, id)
	}
	return e
}

// login logs in and returns the identity.
func (h *harness) login(username, password string) identityInfo {
	h.t.Helper()
	r := h.expect(http.StatusOK, "POST", "/users/login", "", map[string]string{"username": username, "password": password})
	var id identityInfo
	r.decode(h.t, &id)
	if id.AccessToken == nil || id.AccessToken.Token == "" {
		h.t.Fatalf("login reply without token: %s", r.body)
	}
	return id
}

// root logs in as the root user and returns the token.
func (h *harness) root() string {
	h.t.Helper()
	return h.login("iggy", "iggy").AccessToken.Token
}

// itoa formats an id for a path.
func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
