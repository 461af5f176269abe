package metadata

import "github.com/stratabroker/strata/net/wire/statecodec"

func (m *Machine) findUser(id Identifier) *User {
	if id.Numeric {
		return m.users[id.ID]
	}
	uid, ok := m.userNames[id.Name]
	if !ok {
		return nil
	}
	return m.users[uid]
}

func validUsername(name string) bool {
	return len(name) >= usernameLengthMin && len(name) <= usernameLengthMax
}

// normalizeStatus maps a requested status to a stored one: inactive stays
// inactive, anything else is active (§5.2).
func normalizeStatus(status uint8) uint8 {
	if status == UserStatusInactive {
		return UserStatusInactive
	}
	return UserStatusActive
}

// managedUser resolves the target of an operation that needs the
// manage-users permission, or returns 41 (unauthorized) / 20, checked in
// that order.
func (m *Machine) managedUser(env Envelope, id Identifier) (*User, Code) {
	if !m.allowed(env.UserID, (*Permissions).CanManageUsers) {
		return nil, CodeUnauthorized
	}
	u := m.findUser(id)
	if u == nil {
		return nil, CodeResourceNotFound
	}
	return u, CodeOK
}

func (m *Machine) createUser(env Envelope, timestamp uint64, o *CreateUser) ([]byte, Code) {
	if !m.allowed(env.UserID, (*Permissions).CanManageUsers) {
		return nil, CodeUnauthorized
	}
	if !validUsername(o.Username) {
		return nil, CodeInvalidUsername
	}
	if _, taken := m.userNames[o.Username]; taken {
		return nil, CodeUserAlreadyExists
	}
	if _, err := parseOptions(o.Options); err != nil {
		return nil, CodeInvalidOptionValue
	}
	id, ok := lowestFreeID(m.users, usersMax)
	if !ok {
		return nil, CodeUsersLimitReached
	}
	u := &User{
		ID: id, Username: o.Username, PasswordHash: o.PasswordHash,
		Status: normalizeStatus(o.Status), CreatedAt: timestamp,
		Permissions: clonePermissions(o.Permissions), Options: o.Options,
	}
	m.users[id] = u
	m.userNames[u.Username] = id
	details := UserDetailsRecord(u)
	return appendRecord(nil, &details), CodeOK
}

func (m *Machine) updateUser(env Envelope, o *UpdateUser) Code {
	u, code := m.managedUser(env, o.User)
	if code != CodeOK {
		return code
	}
	if o.SetUsername {
		if !validUsername(o.Username) {
			return CodeInvalidUsername
		}
		if other, taken := m.userNames[o.Username]; taken && other != u.ID {
			return CodeUserAlreadyExists
		}
		delete(m.userNames, u.Username)
		u.Username = o.Username
		m.userNames[u.Username] = u.ID
	}
	if o.SetStatus && (o.Status == UserStatusActive || o.Status == UserStatusInactive) {
		u.Status = o.Status
	}
	return CodeOK
}

func (m *Machine) deleteUser(env Envelope, o *DeleteUser) Code {
	u, code := m.managedUser(env, o.User)
	if code != CodeOK {
		return code
	}
	if u.ID == RootUserID {
		return CodeCannotDeleteUser
	}
	for _, t := range u.Tokens {
		delete(m.tokenHashes, t.Hash)
	}
	delete(m.userNames, u.Username)
	delete(m.users, u.ID)
	m.emit(Effect{Kind: EffectUserDeleted, UserID: u.ID})
	return CodeOK
}

func (m *Machine) changePassword(env Envelope, o *ChangePassword) Code {
	u := m.findUser(o.User)
	if u == nil {
		return CodeResourceNotFound
	}
	if u.ID != env.UserID && !m.allowed(env.UserID, (*Permissions).CanManageUsers) {
		return CodeUnauthorized
	}
	if o.VerifiedHash == "" || o.VerifiedHash != u.PasswordHash || o.NewPasswordHash == "" {
		return CodeInvalidCredentials
	}
	u.PasswordHash = o.NewPasswordHash
	return CodeOK
}

func (m *Machine) updatePermissions(env Envelope, o *UpdatePermissions) Code {
	u, code := m.managedUser(env, o.User)
	if code != CodeOK {
		return code
	}
	if u.ID == RootUserID {
		return CodeCannotChangePermissions
	}
	u.Permissions = clonePermissions(o.Permissions)
	return CodeOK
}

// tokenExpiryAt resolves a requested lifetime to an absolute expiry (0 =
// never). ok is false when the expiry does not fit (56).
func tokenExpiryAt(timestamp, lifetimeMicros uint64) (uint64, bool) {
	if lifetimeMicros == 0 || lifetimeMicros == NeverExpires {
		return 0, true
	}
	at := timestamp + lifetimeMicros
	if at < timestamp || at == NeverExpires {
		return 0, false
	}
	return at, true
}

// createToken records the token hash. The success payload is the token's
// Name; the server, which holds the raw token, replaces that payload with
// Name(raw token) before replying to the client (§5.3).
func (m *Machine) createToken(env Envelope, timestamp uint64, o *CreatePersonalAccessToken) ([]byte, Code) {
	u := m.users[env.UserID]
	if u == nil {
		return nil, CodeResourceNotFound
	}
	if u.token(o.Name) >= 0 {
		return nil, CodePersonalAccessTokenExists
	}
	if len(u.Tokens) >= TokensPerUserMax {
		return nil, CodePersonalAccessTokensLimit
	}
	if _, clash := m.tokenHashes[o.TokenHash]; clash || o.TokenHash == "" {
		return nil, CodePersonalAccessTokenExists
	}
	at, ok := tokenExpiryAt(timestamp, o.ExpiryMicros)
	if !ok {
		return nil, CodeInvalidTokenExpiry
	}
	u.Tokens = append(u.Tokens, Token{Name: o.Name, Hash: o.TokenHash, CreatedAt: timestamp, ExpiryAt: at})
	m.tokenHashes[o.TokenHash] = u.ID
	return statecodec.AppendName(nil, o.Name), CodeOK
}

func (m *Machine) deleteToken(env Envelope, o *DeletePersonalAccessToken) Code {
	u := m.users[env.UserID]
	if u == nil {
		return CodeResourceNotFound
	}
	i := u.token(o.Name)
	if i < 0 {
		return CodeResourceNotFound
	}
	delete(m.tokenHashes, u.Tokens[i].Hash)
	u.Tokens = append(u.Tokens[:i:i], u.Tokens[i+1:]...)
	return CodeOK
}
