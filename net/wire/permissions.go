package wire

import (
	"encoding/binary"
	"fmt"
)

// GlobalPermissions are the ten global flags of §4.10, in wire order.
type GlobalPermissions struct {
	ManageServers bool
	ReadServers   bool
	ManageUsers   bool
	ReadUsers     bool
	ManageStreams bool
	ReadStreams   bool
	ManageTopics  bool
	ReadTopics    bool
	PollMessages  bool
	SendMessages  bool
}

// StreamPermissions are the per-stream flags and topic entries.
type StreamPermissions struct {
	StreamID     uint32
	ManageStream bool
	ReadStream   bool
	ManageTopics bool
	ReadTopics   bool
	PollMessages bool
	SendMessages bool
	Topics       []TopicPermissions
}

// TopicPermissions are the per-topic flags.
type TopicPermissions struct {
	TopicID      uint32
	ManageTopic  bool
	ReadTopic    bool
	PollMessages bool
	SendMessages bool
}

// Permissions is a user's permission set (§4.10). Stream and topic entry
// order is kept as given (the reference emits map order).
type Permissions struct {
	Global  GlobalPermissions
	Streams []StreamPermissions
}

// permissionsFlag values for the embedded [flag][len][perms] form.
const permissionsPresent = 1

// AppendTo appends the bare permissions encoding.
func (p *Permissions) AppendTo(dst []byte) []byte {
	g := &p.Global
	for _, v := range [...]bool{g.ManageServers, g.ReadServers, g.ManageUsers, g.ReadUsers,
		g.ManageStreams, g.ReadStreams, g.ManageTopics, g.ReadTopics, g.PollMessages, g.SendMessages} {
		dst = appendBool(dst, v)
	}
	if len(p.Streams) == 0 {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	for i := range p.Streams {
		s := &p.Streams[i]
		dst = appendU32(dst, s.StreamID)
		for _, v := range [...]bool{s.ManageStream, s.ReadStream, s.ManageTopics, s.ReadTopics, s.PollMessages, s.SendMessages} {
			dst = appendBool(dst, v)
		}
		if len(s.Topics) == 0 {
			dst = append(dst, 0)
		} else {
			dst = append(dst, 1)
			for j := range s.Topics {
				t := &s.Topics[j]
				dst = appendU32(dst, t.TopicID)
				for _, v := range [...]bool{t.ManageTopic, t.ReadTopic, t.PollMessages, t.SendMessages} {
					dst = appendBool(dst, v)
				}
				dst = appendBool(dst, j+1 < len(s.Topics))
			}
		}
		dst = appendBool(dst, i+1 < len(p.Streams))
	}
	return dst
}

// DecodePermissions decodes a bare permissions encoding that must fill b
// exactly. Bools decode as non-zero = true.
func DecodePermissions(b []byte) (Permissions, error) {
	d := newDecoder(b)
	p := d.permissions("permissions")
	return p, d.end("permissions")
}

func (d *decoder) permissions(what string) Permissions {
	var p Permissions
	g := &p.Global
	for _, f := range [...]*bool{&g.ManageServers, &g.ReadServers, &g.ManageUsers, &g.ReadUsers,
		&g.ManageStreams, &g.ReadStreams, &g.ManageTopics, &g.ReadTopics, &g.PollMessages, &g.SendMessages} {
		*f = d.boolean(what)
	}
	more := d.boolean(what)
	for more && d.err == nil {
		var s StreamPermissions
		s.StreamID = d.u32(what)
		for _, f := range [...]*bool{&s.ManageStream, &s.ReadStream, &s.ManageTopics, &s.ReadTopics, &s.PollMessages, &s.SendMessages} {
			*f = d.boolean(what)
		}
		moreTopics := d.boolean(what)
		for moreTopics && d.err == nil {
			var t TopicPermissions
			t.TopicID = d.u32(what)
			for _, f := range [...]*bool{&t.ManageTopic, &t.ReadTopic, &t.PollMessages, &t.SendMessages} {
				*f = d.boolean(what)
			}
			moreTopics = d.boolean(what)
			s.Topics = append(s.Topics, t)
		}
		more = d.boolean(what)
		p.Streams = append(p.Streams, s)
	}
	return p
}

// AppendOptionalPermissions appends the embedded request form
// [flag u8][perm_len u32][permissions] (flag 1) or a single 0 flag when p
// is nil.
func AppendOptionalPermissions(dst []byte, p *Permissions) []byte {
	if p == nil {
		return append(dst, 0)
	}
	at := len(dst) + 1
	dst = p.AppendTo(appendU32(append(dst, permissionsPresent), 0))
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// optionalPermissions decodes the embedded request form: flag 1 = present
// (perm_len must equal the decoded length), anything else = absent and
// nothing follows.
func (d *decoder) optionalPermissions(what string) *Permissions {
	if d.u8(what) != permissionsPresent || d.err != nil {
		return nil
	}
	return d.permissionsBlock(what)
}

// permissionsBlock decodes [perm_len u32][permissions], the block of both
// embedded forms; perm_len must equal the decoded length.
func (d *decoder) permissionsBlock(what string) *Permissions {
	block := d.bytes32(what)
	if d.err != nil {
		return nil
	}
	p, err := DecodePermissions(block)
	if err != nil {
		d.failf(ErrBadPermissions, "%s: %w", what, err)
		return nil
	}
	return &p
}

// appendDetailsPermissions appends the UserDetails form: [1][len][perms]
// or four zero bytes when p is nil (§4.11.5).
func appendDetailsPermissions(dst []byte, p *Permissions) []byte {
	if p == nil {
		return appendU32(dst, 0)
	}
	return AppendOptionalPermissions(dst, p)
}

// detailsPermissions decodes the UserDetails form.
func (d *decoder) detailsPermissions(what string) *Permissions {
	if d.err != nil {
		return nil
	}
	if d.remaining() >= 4 && binary.LittleEndian.Uint32(d.b[d.off:]) == 0 {
		d.off += 4
		return nil
	}
	flag := d.u8(what)
	if d.err == nil && flag != permissionsPresent {
		d.failf(ErrBadPermissions, "%s flag %d", what, flag)
		return nil
	}
	return d.permissionsBlock(what)
}

// String summarises p for logs.
func (p *Permissions) String() string {
	return fmt.Sprintf("permissions(global=%+v, streams=%d)", p.Global, len(p.Streams))
}
