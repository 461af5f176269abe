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
	jti       string
	expiresAt time.Time
}

// tokenStore issues and verifies access tokens and maps each live token id
// (jti) to the broker session it stands for. It holds at most sessionsMax
// sessions, at most perUserMax of one user: a login past the user's bound
// ends that user's oldest session, and a login into a store full of other
// users' sessions is refused, so no user's logins displace another's.
// Logged-out, refreshed and expired tokens leave nothing behind: a token
// whose id is not live is refused.
type tokenStore struct {
	secret      []byte
	expiry      time.Duration
	sessionsMax int
	perUserMax  int
	now         func() time.Time

	mu sync.Mutex
	// Invariant: s is in sessions[s.jti] iff it is in byUser[s.userID],
	// which lists a user's sessions oldest login first and is never empty.
	sessions  map[string]*tokenSession
	byUser    map[uint32][]*tokenSession
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
		perUserMax:  min(cfg.SessionsPerUser, cfg.SessionsMax),
		now:         cfg.Now,
		sessions:    map[string]*tokenSession{},
		byUser:      map[uint32][]*tokenSession{},
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

// admits reports whether a login of userID would find room: the store
// is not full, or the user has a session of its own to give up. The
// gateway asks it before the login commits, so a refused login costs the
// broker nothing.
func (ts *tokenStore) admits(userID uint32) bool {
	now := ts.now()
	ts.mu.Lock()
	expired := ts.sweepLocked(now, len(ts.sessions) >= ts.sessionsMax)
	ok := len(ts.sessions) < ts.sessionsMax || len(ts.byUser[userID]) > 0
	ts.mu.Unlock()
	closeSessions(expired)
	return ok
}

// add binds a logged-in session to a new token. Past the user's bound
// (or in a full store) the user's oldest session is ended; a store full
// of other users' sessions refuses with TransientNotAccepted.
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
	ts.mu.Lock()
	ended := ts.sweepLocked(now, len(ts.sessions) >= ts.sessionsMax || len(ts.byUser[userID]) >= ts.perUserMax)
	own := ts.byUser[userID]
	if len(ts.sessions) >= ts.sessionsMax && len(own) == 0 {
		ts.mu.Unlock()
		closeSessions(ended)
		return issuedToken{}, &apiError{code: wire.ErrTransientNotAccepted,
			reason: fmt.Sprintf("the HTTP gateway holds %d sessions of other users; retry later", ts.sessionsMax)}
	}
	if len(own) >= ts.perUserMax || len(ts.sessions) >= ts.sessionsMax {
		oldest := own[0]
		ts.removeLocked(oldest)
		ended = append(ended, oldest)
	}
	s := &tokenSession{session: ls, userID: userID, jti: jti, expiresAt: tok.expiry}
	ts.sessions[jti] = s
	ts.byUser[userID] = append(ts.byUser[userID], s)
	ts.mu.Unlock()
	closeSessions(ended)
	return tok, nil
}

// removeLocked forgets s. Callers hold mu.
func (ts *tokenStore) removeLocked(s *tokenSession) {
	delete(ts.sessions, s.jti)
	own := ts.byUser[s.userID]
	for i, o := range own {
		if o == s {
			own = append(own[:i:i], own[i+1:]...)
			break
		}
	}
	if len(own) == 0 {
		delete(ts.byUser, s.userID)
	} else {
		ts.byUser[s.userID] = own
	}
}

// lookup returns the session of a valid, live token and its id.
func (ts *tokenStore) lookup(token string) (*tokenSession, string, error) {
	if token == "" {
		return nil, "", fail(wire.ErrAccessTokenMissing, "", "access token is missing")
	}
	claims, err := ts.parse(token)
	if err != nil {
		return nil, "", err
	}
	now := ts.now()
	ts.mu.Lock()
	expired := ts.sweepLocked(now, false)
	s, ok := ts.sessions[claims.ID]
	ts.mu.Unlock()
	closeSessions(expired)
	if !ok {
		// Logged out, refreshed, replaced by a newer login of its user
		// past the per-user bound, or issued by an earlier process.
		return nil, "", fail(wire.ErrInvalidAccessToken, "", "access token revoked")
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
	s.jti, s.expiresAt = next, tok.expiry
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
	ts.removeLocked(s)
	return s, true
}

// sweepLocked drops expired sessions and returns them for the caller to
// close outside the lock. Unless force, it runs at most once per
// sweepInterval. Callers hold mu.
func (ts *tokenStore) sweepLocked(now time.Time, force bool) []*tokenSession {
	if !force && now.Sub(ts.lastSweep) < sweepInterval {
		return nil
	}
	ts.lastSweep = now
	var expired []*tokenSession
	for _, s := range ts.sessions {
		if !now.Before(s.expiresAt) {
			expired = append(expired, s)
		}
	}
	for _, s := range expired {
		ts.removeLocked(s)
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
