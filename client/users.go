package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// CreateUser creates a user (command 33). status is UserActive or
// UserInactive; permissions may be nil.
func (c *Client) CreateUser(ctx context.Context, username, password string, status uint8, permissions *Permissions) (*UserDetails, error) {
	var out *UserDetails
	err := c.exec(ctx, wire.CodeCreateUser, func(dst []byte) ([]byte, error) {
		dst, err := appendName(dst, "username", username)
		if err != nil {
			return nil, err
		}
		if dst, err = appendShortBytes(dst, "password", password); err != nil {
			return nil, err
		}
		dst = append(dst, status)
		return appendOptionalPermissions(dst, permissions), nil
	}, func(p []byte) (err error) {
		out, err = decodeUserDetails(p)
		return err
	})
	return out, err
}

// GetUser returns a user with permissions (command 31); ErrNotFound when
// unknown.
func (c *Client) GetUser(ctx context.Context, user Identifier) (*UserDetails, error) {
	var out *UserDetails
	err := c.exec(ctx, wire.CodeGetUser, identifierBody(user), func(p []byte) (err error) {
		if len(p) == 0 {
			return ErrNotFound
		}
		out, err = decodeUserDetails(p)
		return err
	})
	return out, err
}

// GetUsers lists every user (command 32).
func (c *Client) GetUsers(ctx context.Context) ([]User, error) {
	var out []User
	err := c.exec(ctx, wire.CodeGetUsers, nil, func(p []byte) error {
		r := reader{b: p}
		for !r.done() {
			out = append(out, readUser(&r))
		}
		return r.err
	})
	return out, err
}

// UserUpdate says what UpdateUser changes; nil fields keep their value.
type UserUpdate struct {
	Username *string
	Status   *uint8
}

// UpdateUser renames a user and/or changes its status (command 35).
func (c *Client) UpdateUser(ctx context.Context, user Identifier, update UserUpdate) error {
	return c.exec(ctx, wire.CodeUpdateUser, func(dst []byte) ([]byte, error) {
		dst, err := appendIdentifier(dst, user)
		if err != nil {
			return nil, err
		}
		if update.Username != nil {
			dst = append(dst, 1)
			if dst, err = appendName(dst, "username", *update.Username); err != nil {
				return nil, err
			}
		} else {
			dst = append(dst, 0)
		}
		if update.Status != nil {
			dst = append(dst, 1, *update.Status)
		} else {
			dst = append(dst, 0)
		}
		return dst, nil
	}, nil)
}

// DeleteUser deletes a user (command 34).
func (c *Client) DeleteUser(ctx context.Context, user Identifier) error {
	return c.exec(ctx, wire.CodeDeleteUser, identifierBody(user), nil)
}

// ChangePassword changes a user's password (command 37).
func (c *Client) ChangePassword(ctx context.Context, user Identifier, current, next string) error {
	return c.exec(ctx, wire.CodeChangePassword, func(dst []byte) ([]byte, error) {
		dst, err := appendIdentifier(dst, user)
		if err != nil {
			return nil, err
		}
		if dst, err = appendShortBytes(dst, "current password", current); err != nil {
			return nil, err
		}
		return appendShortBytes(dst, "new password", next)
	}, nil)
}

// UpdatePermissions replaces a user's permissions (command 36); nil
// removes them all.
func (c *Client) UpdatePermissions(ctx context.Context, user Identifier, permissions *Permissions) error {
	return c.exec(ctx, wire.CodeUpdatePermissions, func(dst []byte) ([]byte, error) {
		dst, err := appendIdentifier(dst, user)
		if err != nil {
			return nil, err
		}
		return appendOptionalPermissions(dst, permissions), nil
	}, nil)
}

// CreatePersonalAccessToken creates a token for the logged-in user
// (command 42) and returns the raw token, shown only once. expiryMicros is
// the lifetime; 0 or MaxUint64 = never expires.
func (c *Client) CreatePersonalAccessToken(ctx context.Context, name string, expiryMicros uint64) (string, error) {
	var token string
	err := c.exec(ctx, wire.CodeCreatePersonalAccessToken, func(dst []byte) ([]byte, error) {
		dst, err := appendName(dst, "token name", name)
		if err != nil {
			return nil, err
		}
		return appendU64(dst, expiryMicros), nil
	}, func(p []byte) error {
		r := reader{b: p}
		token = r.name("token")
		return finish(&r)
	})
	return token, err
}

// GetPersonalAccessTokens lists the logged-in user's tokens (command 41).
func (c *Client) GetPersonalAccessTokens(ctx context.Context) ([]PersonalAccessToken, error) {
	var out []PersonalAccessToken
	err := c.exec(ctx, wire.CodeGetPersonalAccessTokens, nil, func(p []byte) error {
		r := reader{b: p}
		for !r.done() {
			out = append(out, PersonalAccessToken{Name: r.name("token name"), ExpiryAt: r.u64("expiry_at")})
		}
		return r.err
	})
	return out, err
}

// DeletePersonalAccessToken deletes one of the logged-in user's tokens
// (command 43).
func (c *Client) DeletePersonalAccessToken(ctx context.Context, name string) error {
	return c.exec(ctx, wire.CodeDeletePersonalAccessToken, func(dst []byte) ([]byte, error) {
		return appendName(dst, "token name", name)
	}, nil)
}
