package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// Token limits and defaults.
const (
	// jwtSecretBytes is the size of the random per-process secret.
	jwtSecretBytes = 32
	// jtiBytes is the size of a token's random id.
	jtiBytes = 16
	// jwtIssuer and jwtAudience are stamped into and required of every token.
	jwtIssuer   = "strata"
	jwtAudience = "strata-http"
	// sweepInterval is how often expired sessions and revocations are
	// dropped (lazily, on the request path: no goroutine of our own).
	sweepInterval = 10 * time.Second
)

// tokenSession is a logged-in broker session bound to one access token.
type tokenSession struct {
	session   *server.LocalSession
	userID    uint32
	expiresAt time.Time
}

// tokenStore issues and verifies access tokens and maps each live token id
// (jti) to the broker session it stands for. Revoked ids are remembered
// until their token would have expired anyway.
type tokenStore struct {
	secret      []byte
	expiry      time.Duration
	sessionsMax int
	now         func() time.Time

	mu sync.Mutex
	// Invariant: a jti is never in both sessions and revoked.
	sessions  map[string]*tokenSession
	revoked   map[string]time.Time
	lastSweep time.Time
}

// issuedToken is a freshly signed token.
type issuedToken struct {
	token  string
	expiry time.Time
}

// newTokenStore checks the configuration and draws a secret if none is set.
func newTokenStore(cfg *Config) (*tokenStore, error) {
	secret := cfg.JWTSecret
	if len(secret) == 0 {
		secret = make([]byte, jwtSecretBytes)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("jwt secret: %w", err)
		}
	}
	return &tokenStore{
		secret:      secret,
		expiry:      cfg.AccessTokenExpiry,
		sessionsMax: cfg.SessionsMax,
		now:         cfg.Now,
		sessions:    map[string]*tokenSession{},
		revoked:     map[string]time.Time{},
	}, nil
}

// newJTI returns a random token id.
func newJTI() (string, error) {
	var b [jtiBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("token id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// sign makes a token for userID with id jti.
func (ts *tokenStore) sign(userID uint32, jti string, issuedAt time.Time) (issuedToken, error) {
	exp := issuedAt.Add(ts.expiry)
	claims := jwt.RegisteredClaims{
		Issuer:    jwtIssuer,
		Subject:   strconv.FormatUint(uint64(userID), 10),
		Audience:  jwt.ClaimStrings{jwtAudience},
		ExpiresAt: jwt.NewNumericDate(exp),
		NotBefore: jwt.NewNumericDate(issuedAt),
		IssuedAt:  jwt.NewNumericDate(issuedAt),
		ID:        jti,
	}
	signed, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(ts.secret)
	if err != nil {
		return issuedToken{}, fmt.Errorf("%w: %w", wire.ErrCannotGenerateJwt, err)
	}
	return issuedToken{token: signed, expiry: exp}, nil
}

// parse verifies a token's signature, algorithm, issuer, audience and
// lifetime and returns its claims.
func (ts *tokenStore) parse(token string) (*jwt.RegisteredClaims, error) {
	claims := &jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return ts.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(jwtIssuer), jwt.WithAudience(jwtAudience),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(ts.now))
	if err != nil || claims.ID == "" {
		return nil, fail(wire.ErrInvalidAccessToken, "", "invalid access token")
	}
	return claims, nil
}

// add binds a logged-in session to a new token. It fails with
// TransientNotAccepted when the gateway holds SessionsMax sessions.
func (ts *tokenStore) add(ls *server.LocalSession, userID uint32) (issuedToken, error) {
	jti, err := newJTI()
	if err != nil {
		return issuedToken{}, err
	}
	now := ts.now()
	tok, err := ts.sign(userID, jti, now)
	if err != nil {
		return issuedToken{}, err
	}
	expired := ts.sweep(now, true)
	defer closeSessions(expired)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.sessions) >= ts.sessionsMax {
		return issuedToken{}, &apiError{code: wire.ErrTransientNotAccepted,
			reason: fmt.Sprintf("the HTTP gateway holds %d sessions; retry later", ts.sessionsMax)}
	}
	ts.sessions[jti] = &tokenSession{session: ls, userID: userID, expiresAt: tok.expiry}
	return tok, nil
}

// lookup returns the session of a valid, unrevoked token.
func (ts *tokenStore) lookup(token string) (*tokenSession, string, error) {
	if token == "" {
		return nil, "", fail(wire.ErrAccessTokenMissing, "", "access token is missing")
	}
	claims, err := ts.parse(token)
	if err != nil {
		return nil, "", err
	}
	closeSessions(ts.sweep(ts.now(), false))
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if _, revoked := ts.revoked[claims.ID]; revoked {
		return nil, "", fail(wire.ErrInvalidAccessToken, "", "access token revoked")
	}
	s, ok := ts.sessions[claims.ID]
	if !ok {
		// Expired and swept, or issued by an earlier process.
		return nil, "", fail(wire.ErrInvalidAccessToken, "", "access token unknown")
	}
	return s, claims.ID, nil
}

// refresh revokes token and binds its session to a new token.
func (ts *tokenStore) refresh(token string) (issuedToken, uint32, error) {
	s, jti, err := ts.lookup(token)
	if err != nil {
		return issuedToken{}, 0, err
	}
	next, err := newJTI()
	if err != nil {
		return issuedToken{}, 0, err
	}
	tok, err := ts.sign(s.userID, next, ts.now())
	if err != nil {
		return issuedToken{}, 0, err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.sessions[jti] != s {
		return issuedToken{}, 0, fail(wire.ErrInvalidAccessToken, "", "access token revoked")
	}
	delete(ts.sessions, jti)
	ts.revoked[jti] = s.expiresAt
	s.expiresAt = tok.expiry
	ts.sessions[next] = s
	return tok, s.userID, nil
}

// revoke forgets token jti and returns its session for the caller to log
// out and close.
func (ts *tokenStore) revoke(jti string) (*tokenSession, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	s, ok := ts.sessions[jti]
	if !ok {
		return nil, false
	}
	delete(ts.sessions, jti)
	ts.revoked[jti] = s.expiresAt
	return s, true
}

// sweep drops expired sessions (returned for the caller to close outside
// the lock) and revocations past their token's expiry. Unless force, it
// runs at most once per sweepInterval.
func (ts *tokenStore) sweep(now time.Time, force bool) []*tokenSession {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !force && now.Sub(ts.lastSweep) < sweepInterval {
		return nil
	}
	ts.lastSweep = now
	var expired []*tokenSession
	for jti, s := range ts.sessions {
		if !now.Before(s.expiresAt) {
			delete(ts.sessions, jti)
			expired = append(expired, s)
		}
	}
	for jti, exp := range ts.revoked {
		if !now.Before(exp) {
			delete(ts.revoked, jti)
		}
	}
	return expired
}

// closeSessions logs each session out of the broker and closes it.
func closeSessions(sessions []*tokenSession) {
	for _, s := range sessions {
		endSession(s.session)
	}
}

// endSession logs a broker session out and closes it.
func endSession(ls *server.LocalSession) {
	// A failed logout is not reported: Close releases the session either
	// way.
	_, _ = ls.Do(&wire.LogoutRequest{})
	ls.Close()
}
