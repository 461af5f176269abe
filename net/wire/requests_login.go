package wire

import "fmt"

// Go SDK identity, for clients built on this package.
const (
	// SDKName is what Strata's Go client announces at login.
	SDKName = "strata-go"
)

// ClientVersionInfo is the common prefix of both login bodies (§2.3).
type ClientVersionInfo struct {
	// ProtocolVersion is packed (PackVersion); ProtocolVersion for us.
	ProtocolVersion uint32
	SDKName         string // 1..255 bytes
	SDKVersion      string // 1..255 bytes
}

// AppendTo appends the prefix.
func (v *ClientVersionInfo) AppendTo(dst []byte) ([]byte, error) {
	dst = appendU32(dst, v.ProtocolVersion)
	dst, err := AppendName(dst, v.SDKName)
	if err != nil {
		return dst, fmt.Errorf("sdk name: %w", err)
	}
	dst, err = AppendName(dst, v.SDKVersion)
	if err != nil {
		return dst, fmt.Errorf("sdk version: %w", err)
	}
	return dst, nil
}

func (d *decoder) clientVersionInfo() ClientVersionInfo {
	return ClientVersionInfo{
		ProtocolVersion: d.u32("protocol version"),
		SDKName:         d.name("sdk name"),
		SDKVersion:      d.name("sdk version"),
	}
}

// LoginRegisterRequest is code 40 (operation Register, request 0, session
// 0): version prefix, username (u8 length 1..255), password (u8 length
// 0..255), client context (u32 length; empty = none). Bytes after the
// context are ignored.
type LoginRegisterRequest struct {
	Version       ClientVersionInfo
	Username      string
	Password      string
	ClientContext string
}

// Code returns CodeLoginRegister.
func (*LoginRegisterRequest) Code() Code { return CodeLoginRegister }

// AppendTo appends the body.
func (r *LoginRegisterRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.Version.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	if dst, err = AppendName(dst, r.Username); err != nil {
		return dst, fmt.Errorf("username: %w", err)
	}
	if dst, err = appendText8(dst, r.Password, "password"); err != nil {
		return dst, err
	}
	return appendText32(dst, r.ClientContext), nil
}

// Decode decodes the whole body (prefix included).
func (r *LoginRegisterRequest) Decode(b []byte) error {
	d := newDecoder(b)
	r.Version = d.clientVersionInfo()
	r.decodeTail(&d)
	return d.err
}

func (r *LoginRegisterRequest) decodeTail(d *decoder) {
	r.Username = d.name("username")
	r.Password = d.text8("password")
	r.ClientContext = d.text32("client context")
}

// LoginRegisterWithPatRequest is code 45: version prefix, token (u8
// length 0..255), client context (u32 length). Bytes after the context are
// ignored.
type LoginRegisterWithPatRequest struct {
	Version       ClientVersionInfo
	Token         string
	ClientContext string
}

// Code returns CodeLoginRegisterWithPat.
func (*LoginRegisterWithPatRequest) Code() Code { return CodeLoginRegisterWithPat }

// AppendTo appends the body.
func (r *LoginRegisterWithPatRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.Version.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	if dst, err = appendText8(dst, r.Token, "token"); err != nil {
		return dst, err
	}
	return appendText32(dst, r.ClientContext), nil
}

// Decode decodes the whole body (prefix included).
func (r *LoginRegisterWithPatRequest) Decode(b []byte) error {
	d := newDecoder(b)
	r.Version = d.clientVersionInfo()
	r.decodeTail(&d)
	return d.err
}

func (r *LoginRegisterWithPatRequest) decodeTail(d *decoder) {
	r.Token = d.text8("token")
	r.ClientContext = d.text32("client context")
}

// Login is a Register body decoded both ways, as the server needs it
// (§2.3 steps 1-5): the code is not on the wire, so the server tries the
// password shape first and then the token shape.
type Login struct {
	Version ClientVersionInfo
	// Password is the username/password reading, nil if the tail does
	// not decode that way.
	Password *LoginRegisterRequest
	// Token is the personal-access-token reading, nil if the tail does
	// not decode that way.
	Token *LoginRegisterWithPatRequest
}

// ParseLogin decodes a Register body. An error means the version prefix
// does not decode (Eviction 15 MalformedLogin); otherwise either reading
// may be nil, and both nil is also Eviction 15.
func ParseLogin(body []byte) (Login, error) {
	d := newDecoder(body)
	version := d.clientVersionInfo()
	if d.err != nil {
		return Login{}, d.err
	}
	login := Login{Version: version}
	tail := d
	var p LoginRegisterRequest
	p.Version = version
	if p.decodeTail(&tail); tail.err == nil {
		login.Password = &p
	}
	tail = d
	var t LoginRegisterWithPatRequest
	t.Version = version
	if t.decodeTail(&tail); tail.err == nil {
		login.Token = &t
	}
	return login, nil
}

// DefaultClientVersionInfo is the login prefix Strata's own clients send:
// protocol 0.11.0, SDK name SDKName, SDK version ServerVersion.
func DefaultClientVersionInfo() ClientVersionInfo {
	return ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: SDKName, SDKVersion: ServerVersion}
}
