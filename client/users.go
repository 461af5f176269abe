package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// CreateUser creates a user (command 33). status is UserActive or
// UserInactive; permissions may be nil.
func (c *Client) CreateUser(ctx context.Context, username, password string, status uint8, permissions *Permissions) (*UserDetails, error) {
	var out *UserDetails
	err := c.exec(ctx, &wire.CreateUserRequest{Username: username, Password: password,
		Status: wire.UserStatus(status), Permissions: permissionsToWire(permissions)}, func(p []byte) (err error) {
		out, err = decodeUserDetails(p)
		return err
	})
	return out, err
}

// GetUser returns a user with permissions (command 31); ErrNotFound when
// unknown.
func (c *Client) GetUser(ctx context.Context, user Identifier) (*UserDetails, error) {
	var out *UserDetails
	err := c.exec(ctx, &wire.GetUserRequest{UserID: user.toWire()}, func(p []byte) (err error) {
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
	err := c.exec(ctx, &wire.GetUsersRequest{}, func(p []byte) error {
		users, err := wire.DecodeUsers(p)
		out = fromWire(users, userFromWire)
		return err
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
	req := wire.UpdateUserRequest{UserID: user.toWire(), Username: update.Username}
	if update.Status != nil {
		status := wire.UserStatus(*update.Status)
		req.Status = &status
	}
	return c.exec(ctx, &req, nil)
}

// DeleteUser deletes a user (command 34).
func (c *Client) DeleteUser(ctx context.Context, user Identifier) error {
	return c.exec(ctx, &wire.DeleteUserRequest{UserID: user.toWire()}, nil)
}

// ChangePassword changes a user's password (command 37).
func (c *Client) ChangePassword(ctx context.Context, user Identifier, current, next string) error {
	return c.exec(ctx, &wire.ChangePasswordRequest{UserID: user.toWire(), CurrentPassword: current, NewPassword: next}, nil)
}

// UpdatePermissions replaces a user's permissions (command 36); nil
// removes them all.
func (c *Client) UpdatePermissions(ctx context.Context, user Identifier, permissions *Permissions) error {
	return c.exec(ctx, &wire.UpdatePermissionsRequest{UserID: user.toWire(), Permissions: permissionsToWire(permissions)}, nil)
}

// CreatePersonalAccessToken creates a token for the logged-in user
// (command 42) and returns the raw token, shown only once. expiryMicros is
// the lifetime; 0 or MaxUint64 = never expires.
func (c *Client) CreatePersonalAccessToken(ctx context.Context, name string, expiryMicros uint64) (string, error) {
	var token string
	err := c.exec(ctx, &wire.CreatePersonalAccessTokenRequest{Name: name, Expiry: expiryMicros}, func(p []byte) error {
		var w wire.CreatedPersonalAccessToken
		err := w.Decode(p)
		token = w.Token
		return err
	})
	return token, err
}

// GetPersonalAccessTokens lists the logged-in user's tokens (command 41).
func (c *Client) GetPersonalAccessTokens(ctx context.Context) ([]PersonalAccessToken, error) {
	var out []PersonalAccessToken
	err := c.exec(ctx, &wire.GetPersonalAccessTokensRequest{}, func(p []byte) error {
		tokens, err := wire.DecodePersonalAccessTokens(p)
		out = fromWire(tokens, func(t *wire.PersonalAccessTokenInfo) PersonalAccessToken { return PersonalAccessToken(*t) })
		return err
	})
	return out, err
}

// DeletePersonalAccessToken deletes one of the logged-in user's tokens
// (command 43).
func (c *Client) DeletePersonalAccessToken(ctx context.Context, name string) error {
	return c.exec(ctx, &wire.DeletePersonalAccessTokenRequest{Name: name}, nil)
}
