package client

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
)

// The REST API's permission shape: streams and topics keyed by id text.
type permissionsJSON struct {
	Global  GlobalPermissions                `json:"global"`
	Streams map[string]streamPermissionsJSON `json:"streams,omitempty"`
}

type streamPermissionsJSON struct {
	ManageStream bool                        `json:"manage_stream"`
	ReadStream   bool                        `json:"read_stream"`
	ManageTopics bool                        `json:"manage_topics"`
	ReadTopics   bool                        `json:"read_topics"`
	PollMessages bool                        `json:"poll_messages"`
	SendMessages bool                        `json:"send_messages"`
	Topics       map[string]TopicPermissions `json:"topics,omitempty"`
}

// permissionsToJSON renders Permissions in the REST shape (nil stays nil).
func permissionsToJSON(p *Permissions) *permissionsJSON {
	if p == nil {
		return nil
	}
	out := &permissionsJSON{Global: p.Global}
	for _, s := range p.Streams {
		if out.Streams == nil {
			out.Streams = make(map[string]streamPermissionsJSON, len(p.Streams))
		}
		sj := streamPermissionsJSON{ManageStream: s.ManageStream, ReadStream: s.ReadStream, ManageTopics: s.ManageTopics,
			ReadTopics: s.ReadTopics, PollMessages: s.PollMessages, SendMessages: s.SendMessages}
		for _, t := range s.Topics {
			if sj.Topics == nil {
				sj.Topics = make(map[string]TopicPermissions, len(s.Topics))
			}
			sj.Topics[strconv.FormatUint(uint64(t.TopicID), 10)] = t
		}
		out.Streams[strconv.FormatUint(uint64(s.StreamID), 10)] = sj
	}
	return out
}

// permissions converts the REST shape back; a key that is not a number
// is a protocol violation.
func (p *permissionsJSON) permissions() (*Permissions, error) {
	if p == nil {
		return nil, nil
	}
	out := &Permissions{Global: p.Global}
	for key, s := range p.Streams {
		id, err := strconv.ParseUint(key, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: stream permission key %q", ErrProtocol, key)
		}
		sp := StreamPermissions{StreamID: uint32(id), ManageStream: s.ManageStream, ReadStream: s.ReadStream,
			ManageTopics: s.ManageTopics, ReadTopics: s.ReadTopics, PollMessages: s.PollMessages, SendMessages: s.SendMessages}
		for tkey, t := range s.Topics {
			tid, err := strconv.ParseUint(tkey, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%w: topic permission key %q", ErrProtocol, tkey)
			}
			t.TopicID = uint32(tid)
			sp.Topics = append(sp.Topics, t)
		}
		out.Streams = append(out.Streams, sp)
	}
	return out, nil
}

type userJSON struct {
	ID          uint32            `json:"id"`
	CreatedAt   uint64            `json:"created_at"`
	Status      string            `json:"status"`
	Username    string            `json:"username"`
	Options     map[string]string `json:"options"`
	Permissions *permissionsJSON  `json:"permissions"`
}

// statusNames maps user status codes to their REST names.
var statusNames = map[uint8]string{UserActive: "active", UserInactive: "inactive"}

func (u *userJSON) user() User {
	status := UserActive
	if u.Status == "inactive" {
		status = UserInactive
	}
	return User{ID: u.ID, CreatedAt: u.CreatedAt, Status: status, Username: u.Username, Options: stringOptions(u.Options)}
}

func (u *userJSON) details() (*UserDetails, error) {
	perms, err := u.Permissions.permissions()
	if err != nil {
		return nil, err
	}
	return &UserDetails{User: u.user(), Permissions: perms}, nil
}

// CreateUser creates a user (POST /users).
func (c *HTTPClient) CreateUser(ctx context.Context, username, password string, status uint8, permissions *Permissions) (*UserDetails, error) {
	name, ok := statusNames[status]
	if !ok {
		return nil, fmt.Errorf("%w: user status %d", ErrInvalidArgument, status)
	}
	body := struct {
		Username    string           `json:"username"`
		Password    string           `json:"password"`
		Status      string           `json:"status"`
		Permissions *permissionsJSON `json:"permissions"`
	}{username, password, name, permissionsToJSON(permissions)}
	var out userJSON
	if err := c.call(ctx, http.MethodPost, "/users", nil, body, &out, false); err != nil {
		return nil, err
	}
	return out.details()
}

// GetUser reads one user; ErrNotFound when missing.
func (c *HTTPClient) GetUser(ctx context.Context, user Identifier) (*UserDetails, error) {
	var out userJSON
	if err := c.call(ctx, http.MethodGet, pathOf("users", user.String()), nil, nil, &out, true); err != nil {
		return nil, err
	}
	return out.details()
}

// GetUsers lists the users.
func (c *HTTPClient) GetUsers(ctx context.Context) ([]User, error) {
	var out []userJSON
	if err := c.call(ctx, http.MethodGet, "/users", nil, nil, &out, false); err != nil {
		return nil, err
	}
	users := make([]User, 0, len(out))
	for i := range out {
		users = append(users, out[i].user())
	}
	return users, nil
}

// DeleteUser deletes a user.
func (c *HTTPClient) DeleteUser(ctx context.Context, user Identifier) error {
	return c.call(ctx, http.MethodDelete, pathOf("users", user.String()), nil, nil, nil, false)
}

// ChangePassword changes a user's password.
func (c *HTTPClient) ChangePassword(ctx context.Context, user Identifier, current, next string) error {
	body := map[string]string{"current_password": current, "new_password": next}
	return c.call(ctx, http.MethodPut, pathOf("users", user.String(), "password"), nil, body, nil, false)
}

// UpdatePermissions replaces a user's permissions (nil clears them).
func (c *HTTPClient) UpdatePermissions(ctx context.Context, user Identifier, permissions *Permissions) error {
	body := struct {
		Permissions *permissionsJSON `json:"permissions"`
	}{permissionsToJSON(permissions)}
	return c.call(ctx, http.MethodPut, pathOf("users", user.String(), "permissions"), nil, body, nil, false)
}

// CreatePersonalAccessToken creates a PAT for the caller and returns its
// secret; expiryMicros 0 means it never expires.
func (c *HTTPClient) CreatePersonalAccessToken(ctx context.Context, name string, expiryMicros uint64) (string, error) {
	body := struct {
		Name   string `json:"name"`
		Expiry uint64 `json:"expiry"`
	}{name, expiryMicros}
	var out struct {
		Token string `json:"token"`
	}
	if err := c.call(ctx, http.MethodPost, "/personal-access-tokens", nil, body, &out, false); err != nil {
		return "", err
	}
	if out.Token == "" {
		return "", fmt.Errorf("%w: PAT reply without a token", ErrProtocol)
	}
	return out.Token, nil
}

// GetPersonalAccessTokens lists the caller's PATs.
func (c *HTTPClient) GetPersonalAccessTokens(ctx context.Context) ([]PersonalAccessToken, error) {
	var out []struct {
		Name     string  `json:"name"`
		ExpiryAt *uint64 `json:"expiry_at"`
	}
	if err := c.call(ctx, http.MethodGet, "/personal-access-tokens", nil, nil, &out, false); err != nil {
		return nil, err
	}
	tokens := make([]PersonalAccessToken, 0, len(out))
	for _, t := range out {
		p := PersonalAccessToken{Name: t.Name}
		if t.ExpiryAt != nil {
			p.ExpiryAt = *t.ExpiryAt
		}
		tokens = append(tokens, p)
	}
	return tokens, nil
}

// DeletePersonalAccessToken deletes one of the caller's PATs.
func (c *HTTPClient) DeletePersonalAccessToken(ctx context.Context, name string) error {
	return c.call(ctx, http.MethodDelete, pathOf("personal-access-tokens", name), nil, nil, nil, false)
}
