package wire

// UserStatus is a user's status byte.
type UserStatus uint8

// User statuses.
const (
	UserActive   UserStatus = 1
	UserInactive UserStatus = 2
)

// User is the record of §4.11.4 (GetUsers lists them, no count).
type User struct {
	ID        uint32
	CreatedAt uint64
	Status    UserStatus
	Username  string
	Options   Options
}

// AppendTo appends the record.
func (u *User) AppendTo(dst []byte) ([]byte, error) {
	dst = appendU32(dst, u.ID)
	dst = appendU64(dst, u.CreatedAt)
	dst = append(dst, byte(u.Status))
	dst, err := AppendName(dst, u.Username)
	if err != nil {
		return dst, err
	}
	return u.Options.AppendBlock(dst)
}

func (d *decoder) user() User {
	return User{
		ID:        d.u32("user id"),
		CreatedAt: d.u64("user created_at"),
		Status:    UserStatus(d.u8("user status")),
		Username:  d.name("username"),
		Options:   d.optionsBlock("user options"),
	}
}

// Decode decodes a body holding exactly one User.
func (u *User) Decode(b []byte) error {
	d := newDecoder(b)
	*u = d.user()
	return d.end("user")
}

// UserDetails is a User followed by its permissions (§4.11.5): the
// embedded [1][len][perms] form, or four zero bytes when Permissions is
// nil.
type UserDetails struct {
	User
	Permissions *Permissions
}

// AppendTo appends the record.
func (u *UserDetails) AppendTo(dst []byte) ([]byte, error) {
	dst, err := u.User.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	return appendDetailsPermissions(dst, u.Permissions), nil
}

// Decode decodes a body holding exactly one UserDetails.
func (u *UserDetails) Decode(b []byte) error {
	d := newDecoder(b)
	u.User = d.user()
	u.Permissions = d.detailsPermissions("user permissions")
	return d.end("user details")
}

// AppendUsers appends the GetUsers payload (records, no count).
func AppendUsers(dst []byte, users []User) ([]byte, error) {
	var err error
	for i := 0; err == nil && i < len(users); i++ {
		dst, err = users[i].AppendTo(dst)
	}
	return dst, err
}

// DecodeUsers decodes the GetUsers payload.
func DecodeUsers(b []byte) ([]User, error) { return decodeList(b, (*decoder).user, "users") }

// PersonalAccessTokenInfo is a GetPersonalAccessTokens list entry
// (§4.11.6).
type PersonalAccessTokenInfo struct {
	Name string
	// ExpiryAt in micros since the epoch; 0 = never expires.
	ExpiryAt uint64
}

// AppendTo appends [name][expiry_at u64].
func (p *PersonalAccessTokenInfo) AppendTo(dst []byte) ([]byte, error) {
	dst, err := AppendName(dst, p.Name)
	if err != nil {
		return dst, err
	}
	return appendU64(dst, p.ExpiryAt), nil
}

func (d *decoder) personalAccessToken() PersonalAccessTokenInfo {
	return PersonalAccessTokenInfo{Name: d.name("token name"), ExpiryAt: d.u64("token expiry")}
}

// AppendPersonalAccessTokens appends the list payload (no count).
func AppendPersonalAccessTokens(dst []byte, tokens []PersonalAccessTokenInfo) ([]byte, error) {
	var err error
	for i := 0; err == nil && i < len(tokens); i++ {
		dst, err = tokens[i].AppendTo(dst)
	}
	return dst, err
}

// DecodePersonalAccessTokens decodes the list payload.
func DecodePersonalAccessTokens(b []byte) ([]PersonalAccessTokenInfo, error) {
	return decodeList(b, (*decoder).personalAccessToken, "personal access tokens")
}

// CreatedPersonalAccessToken is the CreatePersonalAccessToken payload: the
// raw token as a WireName, shown once.
type CreatedPersonalAccessToken struct {
	Token string
}

// AppendTo appends the token.
func (c *CreatedPersonalAccessToken) AppendTo(dst []byte) ([]byte, error) {
	return AppendName(dst, c.Token)
}

// Decode decodes the payload.
func (c *CreatedPersonalAccessToken) Decode(b []byte) error {
	d := newDecoder(b)
	c.Token = d.name("token")
	return d.end("token")
}

// RegisterReply is the Register (login) success payload (§2.3); on the
// wire it follows the result prefix [count u32 = 0] (AppendResultOK).
type RegisterReply struct {
	UserID uint32
	// Session is the non-zero session number the client echoes @184.
	Session               uint64
	ServerProtocolVersion uint32
	ServerVersion         string
}

// AppendTo appends the payload (without the result prefix).
func (r *RegisterReply) AppendTo(dst []byte) ([]byte, error) {
	dst = appendU32(dst, r.UserID)
	dst = appendU64(dst, r.Session)
	dst = appendU32(dst, r.ServerProtocolVersion)
	return AppendName(dst, r.ServerVersion)
}

// Decode decodes the payload (after the result prefix).
func (r *RegisterReply) Decode(b []byte) error {
	d := newDecoder(b)
	r.UserID = d.u32("user_id")
	r.Session = d.u64("session")
	r.ServerProtocolVersion = d.u32("server protocol version")
	r.ServerVersion = d.name("server version")
	if d.err == nil && r.Session == 0 {
		d.failf(ErrBadValue, "session 0")
	}
	return d.end("register reply")
}
