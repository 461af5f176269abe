package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// loginRequest is the body of POST /users/login.
type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Version  string `json:"version,omitempty"`
	Context  string `json:"context,omitempty"`
}

// tokenRequest is the body of POST /users/refresh-token and
// POST /personal-access-tokens/login.
type tokenRequest struct {
	Token string `json:"token"`
}

// tokenInfo is an access token and its expiry in seconds since the epoch.
type tokenInfo struct {
	Token  string `json:"token"`
	Expiry uint64 `json:"expiry"`
}

// identityInfo is the reply of the login and refresh routes.
type identityInfo struct {
	UserID      uint32     `json:"user_id"`
	AccessToken *tokenInfo `json:"access_token"`
}

func identity(userID uint32, tok issuedToken) identityInfo {
	return identityInfo{UserID: userID, AccessToken: &tokenInfo{Token: tok.token, Expiry: uint64(tok.expiry.Unix())}}
}

// login handles POST /users/login.
func (a *api) login(w http.ResponseWriter, r *http.Request) error {
	var body loginRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	return a.openSession(w, r, body.Username, func(ls *server.LocalSession) (uint32, error) {
		return ls.Login(body.Username, body.Password)
	})
}

// loginWithPAT handles POST /personal-access-tokens/login.
func (a *api) loginWithPAT(w http.ResponseWriter, r *http.Request) error {
	var body tokenRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	return a.openSession(w, r, "", func(ls *server.LocalSession) (uint32, error) {
		return ls.LoginWithToken(body.Token)
	})
}

// openSession runs a login (of username, empty for a token) on a new
// broker session behind the failed-login limiter and binds the session to
// a new access token. Once the credentials are verified, and before the
// session commits, the login must pass the successful-login limiter of
// its (user, address) and find room in the token store.
func (a *api) openSession(w http.ResponseWriter, r *http.Request, username string, login func(*server.LocalSession) (uint32, error)) error {
	address := clientAddress(r)
	attempt, ok, wait := a.logins.Take(address, username)
	if !ok {
		return &apiError{code: wire.ErrError, status: http.StatusTooManyRequests, retryAfter: wait,
			sentinel: ErrTooManyLogins, reason: ErrTooManyLogins.Error() + " from this address for this user; retry later"}
	}
	ls, err := a.srv.OpenLocalSession(wire.TransportHTTP, r.RemoteAddr)
	if err != nil {
		a.logins.Refund(attempt)
		return err
	}
	var refused error
	ls.SetAdmission(func(userID uint32) bool {
		if ok, wait := a.successes.Allow(server.UserAddressKey(userID, address)); !ok {
			refused = &apiError{code: wire.ErrError, status: http.StatusTooManyRequests, retryAfter: wait,
				sentinel: ErrLoginRateExceeded, reason: ErrLoginRateExceeded.Error() + " of this user from this address; retry later"}
			return false
		}
		if !a.tokens.admits(userID) {
			refused = &apiError{code: wire.ErrTransientNotAccepted,
				reason: fmt.Sprintf("the HTTP gateway holds %d sessions of other users; retry later", a.cfg.SessionsMax)}
			return false
		}
		return true
	})
	userID, err := login(ls)
	if err != nil {
		ls.Close()
		switch {
		case refused != nil:
			a.logins.Refund(attempt)
			return refused
		case errors.Is(err, wire.ErrTransientNotAccepted) || errors.Is(err, wire.ErrTransientNotCommitted):
			a.logins.Refund(attempt)
		default:
			a.logins.Fail(attempt)
		}
		return loginError(err)
	}
	a.logins.Refund(attempt)
	tok, err := a.tokens.add(ls, userID)
	if err != nil {
		endSession(ls)
		return err
	}
	writeJSON(w, http.StatusOK, identity(userID, tok))
	return nil
}

// loginError maps a failed binary login (often an eviction) to the code
// the HTTP API reports.
func loginError(err error) error {
	code := wire.CodeOf(err)
	switch code {
	case wire.ErrInvalidCredentials, wire.ErrInvalidPersonalAccessToken, wire.ErrUserInactive,
		wire.ErrPersonalAccessTokenExpired, wire.ErrInvalidUsername, wire.ErrInvalidPassword,
		wire.ErrTransientNotAccepted, wire.ErrTransientNotCommitted:
		return fail(code, "", "%s", readableName(code.String()))
	}
	return fail(wire.ErrInvalidCredentials, "", "login failed (%s)", readableName(code.String()))
}

// refreshToken handles POST /users/refresh-token: the token in the body is
// revoked and a new one bound to the same session is returned.
func (a *api) refreshToken(w http.ResponseWriter, r *http.Request) error {
	var body tokenRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.Token == "" {
		body.Token = bearerToken(r)
	}
	tok, userID, err := a.tokens.refresh(body.Token)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, identity(userID, tok))
	return nil
}

// logout handles DELETE /users/logout: the bearer token is revoked and
// its broker session logged out and closed. It needs the token's id, not
// its session, so it looks the token up itself instead of going through
// authed.
func (a *api) logout(w http.ResponseWriter, r *http.Request) error {
	_, jti, err := a.tokens.lookup(bearerToken(r))
	if err != nil {
		return err
	}
	if s, ok := a.tokens.revoke(jti); ok {
		endSession(s.session)
	}
	writeEmpty(w, http.StatusNoContent)
	return nil
}
