package client

import (
	"context"
	"fmt"

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
	code := wire.CodeLoginRegister
	if lr.withToken {
		code = wire.CodeLoginRegisterWithPat
	}
	info, _ := wire.LookupCode(code)
	var id Identity
	err := c.execLocked(ctx, request{code: code, info: info,
		build: func(dst []byte) ([]byte, error) { return c.appendLoginBody(dst, lr) },
		decode: func(p []byte) error {
			r := reader{b: p}
			id.UserID = r.u32("user_id")
			id.Session = r.u64("session")
			id.ServerProtocolVersion = r.u32("server protocol version")
			id.ServerVersion = r.name("server version")
			if r.err != nil {
				return r.err
			}
			if id.Session == 0 {
				return fmt.Errorf("register reply with session 0: %w", wire.ErrBadValue)
			}
			return nil
		}})
	if err != nil {
		return nil, err
	}
	c.session, c.userID = id.Session, id.UserID
	c.relogin = lr
	return &id, nil
}

// appendLoginBody appends ClientVersionInfo and the password or token
// tail (§2.3).
func (c *Client) appendLoginBody(dst []byte, lr *loginRequest) ([]byte, error) {
	dst = appendU32(dst, c.opts.protocolVersion)
	dst, err := appendName(dst, "SDK name", c.opts.sdkName)
	if err != nil {
		return nil, err
	}
	if dst, err = appendName(dst, "SDK version", c.opts.sdkVersion); err != nil {
		return nil, err
	}
	if lr.withToken {
		if dst, err = appendShortBytes(dst, "token", lr.token); err != nil {
			return nil, err
		}
	} else {
		if dst, err = appendName(dst, "username", lr.username); err != nil {
			return nil, err
		}
		if dst, err = appendShortBytes(dst, "password", lr.password); err != nil {
			return nil, err
		}
	}
	return appendU32(dst, 0), nil // no client_context
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
	info, _ := wire.LookupCode(wire.CodeLogoutUser)
	if err := c.execLocked(ctx, request{code: wire.CodeLogoutUser, info: info}); err != nil {
		return err
	}
	c.session, c.userID, c.relogin = 0, 0, nil
	return c.newClientID()
}

// Ping sends a Ping (NonReplicated code 1, current request number); it is
// allowed before login.
func (c *Client) Ping(ctx context.Context) error {
	return c.exec(ctx, wire.CodePing, nil, nil)
}
