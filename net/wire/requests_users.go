package wire

// GetUserRequest is code 31: `Id` (numeric id or username).
type GetUserRequest struct{ UserID Identifier }

// DeleteUserRequest is code 34: `Id`.
type DeleteUserRequest struct{ UserID Identifier }

func (*GetUserRequest) Code() Code                               { return CodeGetUser }
func (*DeleteUserRequest) Code() Code                            { return CodeDeleteUser }
func (r *GetUserRequest) AppendTo(dst []byte) ([]byte, error)    { return r.UserID.AppendTo(dst) }
func (r *DeleteUserRequest) AppendTo(dst []byte) ([]byte, error) { return r.UserID.AppendTo(dst) }
func (r *GetUserRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { r.UserID = d.identifier("user id") })
}
func (r *DeleteUserRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { r.UserID = d.identifier("user id") })
}

// CreateUserRequest is code 33: `Name username`, `[pw_len u8][password]`,
// `[status u8]`, `[has_perms u8]` (+ `[perm_len u32][Permissions]`),
// trailing options (must be empty).
type CreateUserRequest struct {
	Username string
	Password string
	// Status is 1 active or 2 inactive; Decode maps any other byte to
	// active, as the server does.
	Status      UserStatus
	Permissions *Permissions
	Options     Options
}

// Code returns CodeCreateUser.
func (*CreateUserRequest) Code() Code { return CodeCreateUser }

// AppendTo appends the body.
func (r *CreateUserRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := AppendName(dst, r.Username)
	if err != nil {
		return dst, err
	}
	if dst, err = appendText8(dst, r.Password, "password"); err != nil {
		return dst, err
	}
	dst = AppendOptionalPermissions(append(dst, byte(r.Status)), r.Permissions)
	return r.Options.AppendTo(dst)
}

// Decode decodes the body.
func (r *CreateUserRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		r.Username = d.name("username")
		r.Password = d.text8("password")
		r.Status = UserStatus(d.u8("status"))
		if r.Status != UserInactive {
			r.Status = UserActive
		}
		r.Permissions = d.optionalPermissions("permissions")
		r.Options = d.trailingOptions("user options")
	})
}

// UpdateUserRequest is code 35: `Id`, `[has_username u8]` (+ `Name`),
// `[has_status u8]` (+ `[status u8]`), trailing options (must be empty).
// A flag byte of 1 means present.
type UpdateUserRequest struct {
	UserID   Identifier
	Username *string
	// Status as sent; the server ignores values other than 1 and 2.
	Status  *UserStatus
	Options Options
}

// Code returns CodeUpdateUser.
func (*UpdateUserRequest) Code() Code { return CodeUpdateUser }

// AppendTo appends the body.
func (r *UpdateUserRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.UserID.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	if r.Username == nil {
		dst = append(dst, 0)
	} else if dst, err = AppendName(append(dst, 1), *r.Username); err != nil {
		return dst, err
	}
	if r.Status == nil {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1, byte(*r.Status))
	}
	return r.Options.AppendTo(dst)
}

// Decode decodes the body.
func (r *UpdateUserRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		r.UserID = d.identifier("user id")
		r.Username, r.Status = nil, nil
		if d.u8("has username") == 1 && d.err == nil {
			name := d.name("username")
			r.Username = &name
		}
		if d.u8("has status") == 1 && d.err == nil {
			status := UserStatus(d.u8("status"))
			r.Status = &status
		}
		r.Options = d.trailingOptions("user options")
	})
}

// UpdatePermissionsRequest is code 36: `Id`, `[has_perms u8]` (+
// `[perm_len u32][Permissions]`); nil Permissions removes them all.
type UpdatePermissionsRequest struct {
	UserID      Identifier
	Permissions *Permissions
}

// Code returns CodeUpdatePermissions.
func (*UpdatePermissionsRequest) Code() Code { return CodeUpdatePermissions }

// AppendTo appends the body.
func (r *UpdatePermissionsRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.UserID.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	return AppendOptionalPermissions(dst, r.Permissions), nil
}

// Decode decodes the body.
func (r *UpdatePermissionsRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		r.UserID = d.identifier("user id")
		r.Permissions = d.optionalPermissions("permissions")
	})
}

// ChangePasswordRequest is code 37: `Id`, `[cur_len u8][current]`,
// `[new_len u8][new]`.
type ChangePasswordRequest struct {
	UserID          Identifier
	CurrentPassword string
	NewPassword     string
}

// Code returns CodeChangePassword.
func (*ChangePasswordRequest) Code() Code { return CodeChangePassword }

// AppendTo appends the body.
func (r *ChangePasswordRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.UserID.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	if dst, err = appendText8(dst, r.CurrentPassword, "current password"); err != nil {
		return dst, err
	}
	return appendText8(dst, r.NewPassword, "new password")
}

// Decode decodes the body.
func (r *ChangePasswordRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		r.UserID = d.identifier("user id")
		r.CurrentPassword = d.text8("current password")
		r.NewPassword = d.text8("new password")
	})
}

// Personal access token expiry values (§5.3).
const (
	// TokenExpiryServerDefault asks for the server default (never).
	TokenExpiryServerDefault uint64 = 0
	// TokenExpiryNever never expires.
	TokenExpiryNever uint64 = 1<<64 - 1
)

// CreatePersonalAccessTokenRequest is code 42: `Name name`, `[expiry
// u64]` micros of lifetime (0 = server default, MaxUint64 = never).
type CreatePersonalAccessTokenRequest struct {
	Name   string
	Expiry uint64
}

// Code returns CodeCreatePersonalAccessToken.
func (*CreatePersonalAccessTokenRequest) Code() Code { return CodeCreatePersonalAccessToken }

// AppendTo appends the body.
func (r *CreatePersonalAccessTokenRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := AppendName(dst, r.Name)
	if err != nil {
		return dst, err
	}
	return appendU64(dst, r.Expiry), nil
}

// Decode decodes the body.
func (r *CreatePersonalAccessTokenRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		r.Name = d.name("token name")
		r.Expiry = d.u64("token expiry")
	})
}

// DeletePersonalAccessTokenRequest is code 43: `Name name`.
type DeletePersonalAccessTokenRequest struct{ Name string }

// Code returns CodeDeletePersonalAccessToken.
func (*DeletePersonalAccessTokenRequest) Code() Code { return CodeDeletePersonalAccessToken }

// AppendTo appends the body.
func (r *DeletePersonalAccessTokenRequest) AppendTo(dst []byte) ([]byte, error) {
	return AppendName(dst, r.Name)
}

// Decode decodes the body.
func (r *DeletePersonalAccessTokenRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { r.Name = d.name("token name") })
}
