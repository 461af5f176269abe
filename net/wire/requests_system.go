package wire

import "fmt"

// GetClientRequest is code 21: `[client_id u32]` (the ClientInfo
// connection number).
type GetClientRequest struct{ ClientID uint32 }

// Code returns CodeGetClient.
func (*GetClientRequest) Code() Code { return CodeGetClient }

// AppendTo appends the body.
func (r *GetClientRequest) AppendTo(dst []byte) ([]byte, error) {
	return appendU32(dst, r.ClientID), nil
}

// Decode decodes the body.
func (r *GetClientRequest) Decode(b []byte) error {
	d := newDecoder(b)
	r.ClientID = d.u32("client id")
	return d.err
}

// DescribeOptionsRequest is code 13: `[scope u8]`, 1 topic, 2 stream,
// 3 user; any other scope is a decode error (Deny 3).
type DescribeOptionsRequest struct{ Scope OptionScope }

// Code returns CodeDescribeOptions.
func (*DescribeOptionsRequest) Code() Code { return CodeDescribeOptions }

// AppendTo appends the body.
func (r *DescribeOptionsRequest) AppendTo(dst []byte) ([]byte, error) {
	if r.Scope < OptionScopeTopic || r.Scope > OptionScopeUser {
		return dst, fmt.Errorf("%w: options scope %d", ErrBadValue, r.Scope)
	}
	return append(dst, byte(r.Scope)), nil
}

// Decode decodes the body.
func (r *DescribeOptionsRequest) Decode(b []byte) error {
	d := newDecoder(b)
	r.Scope = OptionScope(d.u8("scope"))
	if d.err == nil && (r.Scope < OptionScopeTopic || r.Scope > OptionScopeUser) {
		d.failf(ErrBadValue, "options scope %d", r.Scope)
	}
	return d.err
}

// Snapshot compression codes and content types (§5.1).
const (
	SnapshotCompressionStored   uint8 = 1
	SnapshotCompressionDeflated uint8 = 2
	SnapshotCompressionBzip2    uint8 = 3
	SnapshotCompressionZstd     uint8 = 4
	SnapshotCompressionLzma     uint8 = 5
	SnapshotCompressionXz       uint8 = 6

	SnapshotFilesystemOverview uint8 = 1
	SnapshotProcessList        uint8 = 2
	SnapshotResourceUsage      uint8 = 3
	SnapshotTest               uint8 = 4
	SnapshotServerLogs         uint8 = 5
	SnapshotServerConfig       uint8 = 6
	SnapshotAll                uint8 = 100
)

func validSnapshotType(t uint8) bool {
	return (t >= SnapshotFilesystemOverview && t <= SnapshotServerConfig) || t == SnapshotAll
}

// GetSnapshotRequest is code 11: `[compression u8][types_count u8][type
// u8 × types_count]`. Unknown codes are decode errors (Deny 3).
type GetSnapshotRequest struct {
	Compression uint8
	Types       []uint8
}

// Code returns CodeGetSnapshot.
func (*GetSnapshotRequest) Code() Code { return CodeGetSnapshot }

// AppendTo appends the body.
func (r *GetSnapshotRequest) AppendTo(dst []byte) ([]byte, error) {
	if r.Compression < SnapshotCompressionStored || r.Compression > SnapshotCompressionXz || len(r.Types) > 255 {
		return dst, fmt.Errorf("%w: snapshot compression %d with %d types", ErrBadValue, r.Compression, len(r.Types))
	}
	for _, t := range r.Types {
		if !validSnapshotType(t) {
			return dst, fmt.Errorf("%w: snapshot type %d", ErrBadValue, t)
		}
	}
	return append(append(dst, r.Compression, byte(len(r.Types))), r.Types...), nil
}

// Decode decodes the body.
func (r *GetSnapshotRequest) Decode(b []byte) error {
	d := newDecoder(b)
	r.Compression = d.u8("compression")
	if d.err == nil && (r.Compression < SnapshotCompressionStored || r.Compression > SnapshotCompressionXz) {
		d.failf(ErrBadValue, "snapshot compression %d", r.Compression)
	}
	types := d.take(int(d.u8("types count")), "snapshot types")
	r.Types = nil
	for _, t := range types {
		if !validSnapshotType(t) {
			d.failf(ErrBadValue, "snapshot type %d", t)
			break
		}
		r.Types = append(r.Types, t)
	}
	return d.err
}
