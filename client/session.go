package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// Identity is the result of a successful login (the Register reply, §2.3).
type Identity struct {
	UserID uint32
	// Session is the server's session number for this login.
	Session uint64
	// ServerProtocolVersion is the packed protocol version of the server.
	ServerProtocolVersion uint32
	// ServerVersion is the server's version string.
	ServerVersion string
}

// loginRequest holds what a login sends, kept for re-login after a
// reconnect.
type loginRequest struct {
	token              string
	username, password string
	withToken          bool
}

// LoginUser logs in with a username and password (command 40, sent as
// Register: request 0, session 0). A login on a bound connection logs out
// first, as the Go SDK does. Every login uses a fresh random client id.
func (c *Client) LoginUser(ctx context.Context, username, password string) (*Identity, error) {
	return c.login(ctx, &loginRequest{username: username, password: password})
}

// LoginWithToken logs in with a personal access token (command 45).
func (c *Client) LoginWithToken(ctx context.Context, token string) (*Identity, error) {
	return c.login(ctx, &loginRequest{token: token, withToken: true})
}

func (c *Client) login(ctx context.Context, lr *loginRequest) (*Identity, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.conn == nil {
		if err := c.newClientID(); err != nil {
			return nil, err
		}
		if err := c.connectLocked(ctx); err != nil {
			return nil, err
		}
	}
	if c.session != 0 {
		if err := c.logoutLocked(ctx); err != nil {
			return nil, err
		}
	}
	return c.loginLocked(ctx, lr)
}

// loginLocked sends a Register with a fresh client id. Caller holds mu and
// a connection.
func (c *Client) loginLocked(ctx context.Context, lr *loginRequest) (*Identity, error) {
	if err := c.newClientID(); err != nil {
		return nil, err
	}
	var id Identity
	r, err := newRequest(c.loginBody(lr), func(p []byte) error {
		var w wire.RegisterReply
		if err := w.Decode(p); err != nil {
			return err
		}
		id = Identity(w)
		return nil
	})
	if err == nil {
		err = c.execLocked(ctx, r)
	}
	if err != nil {
		return nil, err
	}
	c.session, c.userID = id.Session, id.UserID
	c.relogin = lr
	return &id, nil
}

// loginBody returns the Register body of lr: ClientVersionInfo and the
// password or token tail, with no client context (§2.3).
func (c *Client) loginBody(lr *loginRequest) requestBody {
	version := wire.ClientVersionInfo{ProtocolVersion: c.opts.protocolVersion, SDKName: c.opts.sdkName,
		SDKVersion: c.opts.sdkVersion}
	if lr.withToken {
		return &wire.LoginRegisterWithPatRequest{Version: version, Token: lr.token}
	}
	return &wire.LoginRegisterRequest{Version: version, Username: lr.username, Password: lr.password}
}

// Logout ends the session (command 39, operation 3, request = next
// number). The connection stays open and unauthenticated; the next login
// uses a fresh client id.
func (c *Client) Logout(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ensureConnLocked(ctx); err != nil {
		return err
	}
	return c.logoutLocked(ctx)
}

func (c *Client) logoutLocked(ctx context.Context) error {
	if c.session == 0 {
		return nil // already logged out; a session-0 Logout would be dropped (§1.8)
	}
	r, err := newRequest(&wire.LogoutRequest{}, nil)
	if err == nil {
		err = c.execLocked(ctx, r)
	}
	if err != nil {
		return err
	}
	c.session, c.userID, c.relogin = 0, 0, nil
	return c.newClientID()
}

// Ping sends a Ping (NonReplicated code 1, current request number); it is
// allowed before login.
func (c *Client) Ping(ctx context.Context) error {
	return c.exec(ctx, &wire.PingRequest{}, nil)
}
