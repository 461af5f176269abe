package metadata

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire"
)

// Conversions from the applied state to net/wire's records (§4.11). Apply
// encodes its reply payloads with them, and the server uses them for its
// read replies, passing the counters that live in the partitions.

// StreamRecord returns the Stream record of s with the given counters.
// Streams carry no options.
func StreamRecord(s *Stream, sizeBytes, messagesCount uint64) wire.Stream {
	return wire.Stream{ID: s.ID, CreatedAt: s.CreatedAt, TopicsCount: uint32(len(s.topics)),
		SizeBytes: sizeBytes, MessagesCount: messagesCount, Name: s.Name}
}

// TopicHeaderRecord returns the TopicHeader record of t with the given
// counters and its explicit and derived option blocks.
func TopicHeaderRecord(t *Topic, sizeBytes, messagesCount uint64) wire.TopicHeader {
	return wire.TopicHeader{
		ID: t.ID, CreatedAt: t.CreatedAt, PartitionsCount: uint32(len(t.Partitions)),
		MessageExpiry: t.Options.MessageExpiryMicros, CompressionAlgorithm: t.Options.CompressionAlgorithm,
		MaxTopicSize: t.Options.MaxTopicSizeBytes, SizeBytes: sizeBytes, MessagesCount: messagesCount,
		Name: t.Name, Options: mustParseOptions(t.ExplicitOptions), Derived: mustParseOptions(t.DerivedOptions),
	}
}

// PartitionRecord returns the Partition record of p with the given
// counters.
func PartitionRecord(p Partition, segmentsCount uint32, currentOffset, sizeBytes, messagesCount uint64) wire.Partition {
	return wire.Partition{ID: p.ID, CreatedAt: p.CreatedAt, SegmentsCount: segmentsCount,
		CurrentOffset: currentOffset, SizeBytes: sizeBytes, MessagesCount: messagesCount}
}

// UserRecord returns the User record of u.
func UserRecord(u *User) wire.User {
	return wire.User{ID: u.ID, CreatedAt: u.CreatedAt, Status: wire.UserStatus(u.Status),
		Username: u.Username, Options: mustParseOptions(u.Options)}
}

// UserDetailsRecord returns the UserDetails record of u.
func UserDetailsRecord(u *User) wire.UserDetails {
	return wire.UserDetails{User: UserRecord(u), Permissions: u.Permissions.Wire()}
}

// TokenRecord returns the PersonalAccessToken list entry of t.
func TokenRecord(t *Token) wire.PersonalAccessTokenInfo {
	return wire.PersonalAccessTokenInfo{Name: t.Name, ExpiryAt: t.ExpiryAt}
}

// Wire converts p to net/wire's form (nil stays nil): a deep copy.
func (p *Permissions) Wire() *wire.Permissions {
	return (*wire.Permissions)(clonePermissions(p))
}

// PermissionsFromWire converts a decoded request's permissions (nil stays
// nil), sorting entries by id and keeping the last of repeated ids, as
// DecodePermissions does. p is not modified.
func PermissionsFromWire(p *wire.Permissions) *Permissions {
	if p == nil {
		return nil
	}
	out := clonePermissions((*Permissions)(p))
	for i := range out.Streams {
		out.Streams[i].Topics = normalizeTopicPermissions(out.Streams[i].Topics)
	}
	out.Streams = normalizeStreamPermissions(out.Streams)
	return out
}

// mustParseOptions parses a stored options block. Blocks are validated
// when an operation stores them and when a checkpoint is restored, so a
// failure here is a bug in this package.
func mustParseOptions(block []byte) wire.Options {
	o, err := wire.ParseOptions(block)
	if err != nil {
		panic(fmt.Sprintf("metadata: stored options block invalid: %v", err))
	}
	return o
}

// appender is a record that appends itself with net/wire's encoder.
type appender interface {
	AppendTo(dst []byte) ([]byte, error)
}

// appendRecord appends r. Names are 1..255 bytes (checked when decoded)
// and options blocks valid, so a failure is a bug in this package.
func appendRecord(dst []byte, r appender) []byte {
	out, err := r.AppendTo(dst)
	if err != nil {
		panic(fmt.Sprintf("metadata: encoding %T: %v", r, err))
	}
	return out
}
