package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/stratabroker/strata/net/wire"
)

// HTTP client limits.
const (
	// httpReplyBytesMax bounds a reply body the HTTPClient reads (the
	// server's request body limit, the frame limit).
	httpReplyBytesMax = 64 << 20
	// httpErrorBodyBytesMax bounds an error body the HTTPClient reads.
	httpErrorBodyBytesMax = 64 << 10
)

// ErrHTTP reports an HTTP answer that is neither success nor an Iggy JSON
// error (a proxy page, a truncated body...).
var ErrHTTP = errors.New("client: unexpected HTTP answer")

// HTTPClient speaks Strata's REST API (PROTOCOL.md §11) with the same
// methods and results as Client: login yields a JWT that every later
// request carries as a bearer token; server failures come back as *Error
// with the Iggy code from the JSON error's id. It is safe for concurrent
// use.
//
// Differences from the binary Client, forced by the REST API: consumers
// are individual consumers only (a GroupConsumer is ErrInvalidArgument);
// option values (stream, topic and user options) come back as strings.
type HTTPClient struct {
	base string
	http *http.Client
	opts options

	mu sync.Mutex
	// Guarded by mu: the bearer token of the current login and its user.
	token  string
	userID uint32
}

// DialHTTP prepares a REST client for baseURL ("http://host:port" or
// "https://host:port"; a bare host:port means http) and, when
// WithCredentials or WithToken is given, logs in. WithTLS sets the TLS
// settings of an https URL.
func DialHTTP(ctx context.Context, baseURL string, opts ...Option) (*HTTPClient, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: HTTP base URL %q", ErrInvalidArgument, baseURL)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if u.Scheme == "https" {
		transport.TLSClientConfig = tlsConfigFor(&o, u.Host)
	}
	c := &HTTPClient{base: strings.TrimSuffix(u.String(), "/"), http: &http.Client{Transport: transport}, opts: o}
	switch {
	case o.token != "":
		_, err = c.LoginWithToken(ctx, o.token)
	case o.username != "":
		_, err = c.LoginUser(ctx, o.username, o.password)
	}
	if err != nil {
		c.http.CloseIdleConnections()
		return nil, err
	}
	return c, nil
}

// Address returns the base URL.
func (c *HTTPClient) Address() string { return c.base }

// Close drops idle connections. Like Client.Close it does not log out:
// the token's session ends when the token expires or Logout is called.
func (c *HTTPClient) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// LoggedIn reports whether the client holds a token.
func (c *HTTPClient) LoggedIn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token != ""
}

// Token returns the current JWT ("" before login).
func (c *HTTPClient) Token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// httpErrorJSON is Iggy's JSON error body.
type httpErrorJSON struct {
	ID     uint32 `json:"id"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// HTTPError is the detail of a REST failure; it wraps the *Error that
// carries the Iggy code.
type HTTPError struct {
	// Status is the HTTP status code.
	Status int
	// Reason is the server's readable reason.
	Reason string
	// Err is the failure as the binary client reports it.
	Err *Error
}

// Error returns the code's description and the server's reason.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.Err.Error(), e.Status, e.Reason)
}

// Unwrap returns the *Error.
func (e *HTTPError) Unwrap() error { return e.Err }

// call sends one request: body (if not nil) as JSON, the bearer token when
// auth is set; a 2xx answer is decoded into out (if not nil). A failure
// with a JSON error becomes an *HTTPError wrapping *Error; notFound turns a
// 404 into ErrNotFound too (single-object reads, as Client answers them).
func (c *HTTPClient) call(ctx context.Context, method, path string, query url.Values, body, out any, notFound bool) error {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
		}
		reader = bytes.NewReader(data)
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token := c.Token(); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("%w: %w", ErrConnectionLost, ctxErr)
		}
		return fmt.Errorf("%w: %w", ErrConnectionLost, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		data, err := io.ReadAll(io.LimitReader(resp.Body, httpReplyBytesMax))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrConnectionLost, err)
		}
		if out == nil || len(data) == 0 {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%w: %s %s reply: %w", ErrProtocol, method, path, err)
		}
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, httpErrorBodyBytesMax))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConnectionLost, err)
	}
	herr, err := decodeHTTPError(resp.StatusCode, data)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %w", ErrHTTP, method, path, err)
	}
	if notFound && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", ErrNotFound, herr)
	}
	return herr
}

// decodeHTTPError reads Iggy's JSON error body; one without a non-zero
// id is not an Iggy error.
func decodeHTTPError(status int, data []byte) (*HTTPError, error) {
	var e httpErrorJSON
	if err := json.Unmarshal(data, &e); err != nil || e.ID == 0 {
		return nil, fmt.Errorf("HTTP %d: %.200q", status, data)
	}
	return &HTTPError{Status: status, Reason: e.Reason, Err: &Error{Code: wire.ErrorCode(e.ID)}}, nil
}

// loginReplyJSON is the answer of the login routes.
type loginReplyJSON struct {
	UserID      uint32 `json:"user_id"`
	AccessToken *struct {
		Token  string `json:"token"`
		Expiry uint64 `json:"expiry"`
	} `json:"access_token"`
}

// LoginUser logs in with a username and password (POST /users/login) and
// keeps the access token.
func (c *HTTPClient) LoginUser(ctx context.Context, username, password string) (*Identity, error) {
	body := map[string]string{"username": username, "password": password, "version": c.opts.sdkVersion}
	return c.login(ctx, "/users/login", body)
}

// LoginWithToken logs in with a personal access token (POST
// /personal-access-tokens/login).
func (c *HTTPClient) LoginWithToken(ctx context.Context, token string) (*Identity, error) {
	return c.login(ctx, "/personal-access-tokens/login", map[string]string{"token": token})
}

func (c *HTTPClient) login(ctx context.Context, path string, body any) (*Identity, error) {
	c.mu.Lock()
	c.token = ""
	c.mu.Unlock()
	var reply loginReplyJSON
	if err := c.call(ctx, http.MethodPost, path, nil, body, &reply, false); err != nil {
		return nil, err
	}
	if reply.AccessToken == nil || reply.AccessToken.Token == "" {
		return nil, fmt.Errorf("%w: login reply without an access token", ErrProtocol)
	}
	c.mu.Lock()
	c.token, c.userID = reply.AccessToken.Token, reply.UserID
	c.mu.Unlock()
	return &Identity{UserID: reply.UserID}, nil
}

// Logout ends the token's session (DELETE /users/logout) and forgets it.
func (c *HTTPClient) Logout(ctx context.Context) error {
	err := c.call(ctx, http.MethodDelete, "/users/logout", nil, nil, nil, false)
	c.mu.Lock()
	c.token = ""
	c.mu.Unlock()
	return err
}

// RefreshToken swaps the access token for a new one on the same session
// (POST /users/refresh-token); the old token is revoked.
func (c *HTTPClient) RefreshToken(ctx context.Context) error {
	var reply loginReplyJSON
	if err := c.call(ctx, http.MethodPost, "/users/refresh-token", nil, map[string]string{"token": c.Token()}, &reply, false); err != nil {
		return err
	}
	if reply.AccessToken == nil || reply.AccessToken.Token == "" {
		return fmt.Errorf("%w: refresh reply without an access token", ErrProtocol)
	}
	c.mu.Lock()
	c.token = reply.AccessToken.Token
	c.mu.Unlock()
	return nil
}

// Ping checks the server answers (GET /ping).
func (c *HTTPClient) Ping(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/ping", nil, nil, nil, false)
}

// pathOf joins escaped path segments: pathOf("streams", id) = "/streams/<id>".
func pathOf(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// topicPath is /streams/{stream}/topics/{topic} followed by more segments.
func topicPath(stream, topic Identifier, more ...string) string {
	return pathOf(append([]string{"streams", stream.String(), "topics", topic.String()}, more...)...)
}
