package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/stratabroker/strata/net/units"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// parseUserStatus reads "active"/"inactive" (empty = active).
func parseUserStatus(s string) (wire.UserStatus, error) {
	switch strings.ToLower(s) {
	case "", "active":
		return wire.UserActive, nil
	case "inactive":
		return wire.UserInactive, nil
	}
	return 0, &apiError{code: wire.ErrInvalidUserStatus, field: "status", reason: "status must be active or inactive"}
}

// stringOptions turns a JSON options map into string-valued options; the
// broker parses values of every kind it accepts from their text.
func stringOptions(m map[string]string) wire.Options {
	if len(m) == 0 {
		return nil
	}
	out := make(wire.Options, 0, len(m))
	for k, v := range m {
		out = append(out, wire.StringOption(k, v))
	}
	return out.Sorted()
}

// getUsers handles GET /users.
func (a *api) getUsers(w http.ResponseWriter, _ *http.Request, ls *server.LocalSession) error {
	payload, err := ls.Do(&wire.GetUsersRequest{})
	if err != nil {
		return err
	}
	users, err := wire.DecodeUsers(payload)
	if err != nil {
		return err
	}
	out := make([]userJSON, 0, len(users))
	for i := range users {
		out = append(out, userFrom(&users[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getUser handles GET /users/{user_id}.
func (a *api) getUser(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	id, err := pathID(r, "user_id")
	if err != nil {
		return err
	}
	payload, err := ls.Do(&wire.GetUserRequest{UserID: id})
	if err != nil {
		return err
	}
	if len(payload) == 0 {
		return fail(wire.ErrResourceNotFound, "user_id", "user %s not found", id)
	}
	var details wire.UserDetails
	if err := details.Decode(payload); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, userDetailsFrom(&details))
	return nil
}

// createUserRequest is the body of POST /users.
type createUserRequest struct {
	Username    string           `json:"username"`
	Password    string           `json:"password"`
	Status      string           `json:"status"`
	Permissions *permissionsJSON `json:"permissions"`
}

// createUser handles POST /users.
func (a *api) createUser(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	var body createUserRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	status, err := parseUserStatus(body.Status)
	if err != nil {
		return err
	}
	req := wire.CreateUserRequest{Username: body.Username, Password: body.Password, Status: status}
	if body.Permissions != nil {
		if req.Permissions, err = body.Permissions.toWire(); err != nil {
			return err
		}
	}
	var details wire.UserDetails
	if err := doDecode(ls, &req, &details); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, userDetailsFrom(&details))
	return nil
}

// updateUserRequest is the body of PUT /users/{user_id}.
type updateUserRequest struct {
	Username *string           `json:"username"`
	Status   *string           `json:"status"`
	Options  map[string]string `json:"options"`
}

// updateUser handles PUT /users/{user_id}.
func (a *api) updateUser(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	id, err := pathID(r, "user_id")
	if err != nil {
		return err
	}
	var body updateUserRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	req := wire.UpdateUserRequest{UserID: id, Username: body.Username, Options: stringOptions(body.Options)}
	if body.Status != nil {
		status, err := parseUserStatus(*body.Status)
		if err != nil {
			return err
		}
		req.Status = &status
	}
	return doEmpty(w, ls, &req, http.StatusNoContent)
}

// deleteUser handles DELETE /users/{user_id}.
func (a *api) deleteUser(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	id, err := pathID(r, "user_id")
	if err != nil {
		return err
	}
	return doEmpty(w, ls, &wire.DeleteUserRequest{UserID: id}, http.StatusNoContent)
}

// changePasswordRequest is the body of PUT /users/{user_id}/password.
type changePasswordRequest struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// changePassword handles PUT /users/{user_id}/password.
func (a *api) changePassword(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	id, err := pathID(r, "user_id")
	if err != nil {
		return err
	}
	var body changePasswordRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	req := wire.ChangePasswordRequest{UserID: id, CurrentPassword: body.CurrentPassword, NewPassword: body.NewPassword}
	return doEmpty(w, ls, &req, http.StatusNoContent)
}

// updatePermissionsRequest is the body of PUT /users/{user_id}/permissions;
// null or absent permissions remove them all.
type updatePermissionsRequest struct {
	Permissions *permissionsJSON `json:"permissions"`
}

// updatePermissions handles PUT /users/{user_id}/permissions.
func (a *api) updatePermissions(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	id, err := pathID(r, "user_id")
	if err != nil {
		return err
	}
	var body updatePermissionsRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	req := wire.UpdatePermissionsRequest{UserID: id}
	if body.Permissions != nil {
		if req.Permissions, err = body.Permissions.toWire(); err != nil {
			return err
		}
	}
	return doEmpty(w, ls, &req, http.StatusNoContent)
}

// getPATs handles GET /personal-access-tokens.
func (a *api) getPATs(w http.ResponseWriter, _ *http.Request, ls *server.LocalSession) error {
	payload, err := ls.Do(&wire.GetPersonalAccessTokensRequest{})
	if err != nil {
		return err
	}
	tokens, err := wire.DecodePersonalAccessTokens(payload)
	if err != nil {
		return err
	}
	out := make([]patJSON, 0, len(tokens))
	for _, t := range tokens {
		entry := patJSON{Name: t.Name}
		if t.ExpiryAt != 0 {
			at := t.ExpiryAt
			entry.ExpiryAt = &at
		}
		out = append(out, entry)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// createPATRequest is the body of POST /personal-access-tokens. Expiry is
// micros (0 = never) or a duration string ("1h", "7 days", "never").
type createPATRequest struct {
	Name   string          `json:"name"`
	Expiry json.RawMessage `json:"expiry"`
}

// patNameBytesMin and patNameBytesMax bound PAT names on the HTTP path
// (§9).
const (
	patNameBytesMin = 3
	patNameBytesMax = 30
)

// parsePATExpiry reads the expiry of a PAT request.
func parsePATExpiry(raw json.RawMessage) (uint64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if v, err := strconv.ParseUint(n.String(), 10, 64); err == nil {
			return v, nil
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, badRequest("expiry", "expiry must be micros or a duration string")
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "never", "never_expire", "unlimited", "none":
		return 0, nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return 0, &apiError{code: wire.ErrInvalidPersonalAccessTokenExpiry, field: "expiry", reason: err.Error()}
	}
	return d.Micros(), nil
}

// createPAT handles POST /personal-access-tokens.
func (a *api) createPAT(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	var body createPATRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if n := len(body.Name); n < patNameBytesMin || n > patNameBytesMax {
		return &apiError{code: wire.ErrInvalidPersonalAccessTokenName, field: "name",
			reason: "personal access token names are 3 to 30 bytes"}
	}
	expiry, err := parsePATExpiry(body.Expiry)
	if err != nil {
		return err
	}
	var created wire.CreatedPersonalAccessToken
	if err := doDecode(ls, &wire.CreatePersonalAccessTokenRequest{Name: body.Name, Expiry: expiry}, &created); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tokenRequest{Token: created.Token})
	return nil
}

// deletePAT handles DELETE /personal-access-tokens/{name}.
func (a *api) deletePAT(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	name := r.PathValue("name")
	return doEmpty(w, ls, &wire.DeletePersonalAccessTokenRequest{Name: name}, http.StatusNoContent)
}
