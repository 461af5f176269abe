package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
)

// Defaults of Config.
const (
	// DefaultAccessTokenExpiry is the lifetime of an access token.
	DefaultAccessTokenExpiry = time.Hour
	// DefaultBodyBytesMax is the largest request body (the frame limit).
	DefaultBodyBytesMax = 64 << 20
	// DefaultMetricsPath is where Prometheus metrics are served.
	DefaultMetricsPath = "/metrics"
)

// Config configures the REST gateway. The zero value is usable: every
// field has a default.
type Config struct {
	// JWTSecret signs access tokens (HS256). Empty draws 32 random bytes
	// per process, so tokens do not survive a restart (their sessions do
	// not either).
	JWTSecret []byte
	// AccessTokenExpiry is a token's lifetime; 0 = DefaultAccessTokenExpiry.
	AccessTokenExpiry time.Duration
	// LoginFailures shapes the gateway's failed-login limiter; the zero
	// value = [login] failures_per_user_address, failures_per_user,
	// failures_per_address and failure_refill.
	LoginFailures server.LoginLimits
	// SuccessesPerUserAddress and SuccessRefill limit successful logins
	// per (user, address); 0 = [login] successes_per_user_address and
	// success_refill.
	SuccessesPerUserAddress int
	SuccessRefill           time.Duration
	// SessionsMax bounds live tokens, SessionsPerUser one user's share (a
	// login past it ends the user's oldest session); 0 = [login]
	// http_sessions_max and http_sessions_per_user.
	SessionsMax     int
	SessionsPerUser int
	// BodyBytesMax bounds request bodies; 0 = DefaultBodyBytesMax.
	BodyBytesMax int64
	// MetricsPath serves the Prometheus registry; "" = DefaultMetricsPath.
	MetricsPath string
	// Now is the wall clock; nil = time.Now. Tests pin it.
	Now func() time.Time
}

// withDefaults fills the zero fields, the login limits from the broker's
// [login] section.
func (c Config) withDefaults(login config.Login) Config {
	if c.AccessTokenExpiry <= 0 {
		c.AccessTokenExpiry = DefaultAccessTokenExpiry
	}
	if c.LoginFailures == (server.LoginLimits{}) {
		c.LoginFailures = server.LoginLimitsFrom(login)
	}
	if c.SuccessesPerUserAddress <= 0 {
		c.SuccessesPerUserAddress = int(login.SuccessesPerUserAddress)
	}
	if c.SuccessRefill <= 0 {
		c.SuccessRefill = time.Duration(login.SuccessRefill)
	}
	if c.SessionsMax <= 0 {
		c.SessionsMax = int(login.HTTPSessionsMax)
	}
	if c.SessionsPerUser <= 0 {
		c.SessionsPerUser = int(login.HTTPSessionsPerUser)
	}
	if c.BodyBytesMax <= 0 {
		c.BodyBytesMax = DefaultBodyBytesMax
	}
	if c.MetricsPath == "" {
		c.MetricsPath = DefaultMetricsPath
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// api is the gateway: the broker, the token store and the limiters.
type api struct {
	srv    *server.Server
	cfg    Config
	log    *zap.Logger
	tokens *tokenStore
	// logins limits failed logins, successes successful ones per (user,
	// address).
	logins    *server.LoginLimiter
	successes *server.RateLimiter
}

// authedHandler is a handler that runs as the token's broker session.
type authedHandler func(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error

// New builds the REST API handler for srv (PROTOCOL.md §11). Pass it to
// server.Options.HTTP.
func New(srv *server.Server, cfg Config) (http.Handler, error) {
	cfg = cfg.withDefaults(srv.LoginConfig())
	tokens, err := newTokenStore(&cfg)
	if err != nil {
		return nil, err
	}
	a := &api{
		srv:       srv,
		cfg:       cfg,
		log:       srv.Logger().Named("http"),
		tokens:    tokens,
		logins:    server.NewLoginLimiter(cfg.LoginFailures, cfg.Now),
		successes: server.NewRateLimiter(cfg.SuccessesPerUserAddress, cfg.SuccessRefill, cfg.Now),
	}
	mux := http.NewServeMux()
	a.routes(mux)
	mux.Handle("GET "+cfg.MetricsPath, promhttp.HandlerFor(srv.MetricsRegistry(), promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{code: wire.ErrResourceNotFound, reason: "no such route: " + r.Method + " " + r.URL.Path,
			status: http.StatusNotFound})
	})
	return a.limitBody(mux), nil
}

// limitBody caps every request body at BodyBytesMax.
func (a *api) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > a.cfg.BodyBytesMax {
			writeError(w, toAPIError(ErrBodyTooLarge))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, a.cfg.BodyBytesMax)
		next.ServeHTTP(w, r)
	})
}

// public wraps a handler that does not run as a token's session (it
// needs no token, or checks one itself).
func (a *api) public(h func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.writeFailure(w, r, err)
		}
	}
}

// authed wraps a handler that runs as the bearer token's session.
func (a *api) authed(h authedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, jti, err := a.tokens.lookup(bearerToken(r))
		if err == nil {
			err = h(w, r, s.session)
			if errors.Is(err, wire.ErrUnauthenticated) {
				// The broker ended the session (its user was deleted):
				// the token cannot be used again.
				if gone, ok := a.tokens.revoke(jti); ok {
					endSession(gone.session)
				}
			}
		}
		if err != nil {
			a.writeFailure(w, r, err)
		}
	}
}

// doDecode runs req as ls and decodes the reply record into rec.
func doDecode(ls *server.LocalSession, req wire.Request, rec interface{ Decode(payload []byte) error }) error {
	payload, err := ls.Do(req)
	if err != nil {
		return err
	}
	return rec.Decode(payload)
}

// doEmpty runs req as ls and answers status with no body: the tail of
// every route whose command returns nothing (updates, deletes, purges).
func doEmpty(w http.ResponseWriter, ls *server.LocalSession, req wire.Request, status int) error {
	if _, err := ls.Do(req); err != nil {
		return err
	}
	writeEmpty(w, status)
	return nil
}

// writeFailure logs a failed request (method, route pattern and code
// only: never bodies, headers, tokens or passwords) and writes its error
// JSON.
func (a *api) writeFailure(w http.ResponseWriter, r *http.Request, err error) {
	ae := toAPIError(err)
	a.log.Debug("request failed", zap.String("method", r.Method), zap.String("route", r.Pattern),
		zap.Uint32("code", uint32(ae.code)))
	writeError(w, ae)
}

// bearerToken extracts the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return ""
	}
	return strings.TrimSpace(h[len(prefix):])
}

// decodeBody reads a JSON body into v. An empty body decodes as {}.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		var maxBytes *http.MaxBytesError
		if errors.As(err, &maxBytes) {
			return err
		}
		return badRequest("", "invalid JSON body: %v", err)
	}
	if dec.More() {
		return badRequest("", "trailing data after the JSON body")
	}
	return nil
}

// parseIdentifier reads a path or query identifier: a u32 is numeric,
// anything else a name.
func parseIdentifier(s, field string) (wire.Identifier, error) {
	if s == "" {
		return wire.Identifier{}, badRequest(field, "%s is required", field)
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return wire.NumericID(uint32(n)), nil
	}
	id := wire.NamedID(s)
	if err := id.Validate(); err != nil {
		return wire.Identifier{}, badRequest(field, "%s: %v", field, err)
	}
	return id, nil
}

// pathID parses the path value name as an identifier.
func pathID(r *http.Request, name string) (wire.Identifier, error) {
	return parseIdentifier(r.PathValue(name), name)
}

// pathIDs parses {stream_id} and {topic_id}.
func pathIDs(r *http.Request) (wire.Identifier, wire.Identifier, error) {
	stream, err := pathID(r, "stream_id")
	if err != nil {
		return stream, wire.Identifier{}, err
	}
	topic, err := pathID(r, "topic_id")
	return stream, topic, err
}

// parseU32 reads s as the u32 value of field.
func parseU32(s, field string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, badRequest(field, "%s must be an unsigned 32-bit number", field)
	}
	return uint32(n), nil
}

// parseU64 reads s as the u64 value of field.
func parseU64(s, field string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, badRequest(field, "%s must be an unsigned 64-bit number", field)
	}
	return n, nil
}

// pathU32 parses the path value name as a u32.
func pathU32(r *http.Request, name string) (uint32, error) {
	return parseU32(r.PathValue(name), name)
}

// queryU32 reads an optional u32 query value.
func queryU32(r *http.Request, name string, def uint32) (uint32, bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, false, nil
	}
	n, err := parseU32(s, name)
	return n, true, err
}

// queryU64 reads an optional u64 query value.
func queryU64(r *http.Request, name string, def uint64) (uint64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	return parseU64(s, name)
}

// queryBool reads an optional boolean query value.
func queryBool(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, badRequest(name, "%s must be true or false", name)
	}
	return b, nil
}

// requiredU32 checks that a JSON number field was sent and fits a u32.
func requiredU32(n *json.Number, field string) (uint32, error) {
	if n == nil {
		return 0, badRequest(field, "%s is required", field)
	}
	return parseU32(n.String(), field)
}

// requiredU64 checks that a JSON number field was sent and fits a u64.
func requiredU64(n *json.Number, field string) (uint64, error) {
	if n == nil {
		return 0, badRequest(field, "%s is required", field)
	}
	return parseU64(n.String(), field)
}
