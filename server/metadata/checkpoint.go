package metadata

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
)

// Checkpoint format: magic, version, body, then the XXH3-64 of everything
// before it. Every list is in ascending id order, so equal states encode to
// equal bytes.
const (
	checkpointMagic uint32 = 0x444d5453 // "STMD"
	// checkpointVersion 2 adds consumer groups; version 1 (no groups) is
	// still read.
	checkpointVersion   uint16 = 2
	checkpointVersionV1 uint16 = 1
	checkpointHeader           = 4 + 2
	checkpointTrailer          = 8
	// checkpointBytesMax bounds a checkpoint Restore accepts.
	checkpointBytesMax = 1 << 30
)

// Checkpoint encodes the whole state deterministically.
func (m *Machine) Checkpoint() []byte {
	out := make([]byte, 0, 256)
	out = appendU32(out, checkpointMagic)
	out = binary.LittleEndian.AppendUint16(out, checkpointVersion)
	out = appendU64(out, m.lastOp)
	out = appendU32(out, uint32(len(m.streams)))
	for _, s := range m.Streams() {
		out = appendU32(out, s.ID)
		out = appendName(out, s.Name)
		out = appendU64(out, s.CreatedAt)
		topics := s.Topics()
		out = appendU32(out, uint32(len(topics)))
		for _, t := range topics {
			out = appendTopicState(out, t)
		}
	}
	users := m.Users()
	out = appendU32(out, uint32(len(users)))
	for _, u := range users {
		out = appendUserState(out, u)
	}
	return appendU64(out, xxh3.Hash(out))
}

func appendTopicState(out []byte, t *Topic) []byte {
	out = appendU32(out, t.ID)
	out = appendName(out, t.Name)
	out = appendU64(out, t.CreatedAt)
	out = t.Options.appendTo(out)
	out = appendBlob(out, t.ExplicitOptions)
	out = appendBlob(out, t.DerivedOptions)
	out = appendU32(out, uint32(len(t.Partitions)))
	for _, p := range t.Partitions {
		out = appendU32(out, p.ID)
		out = appendU64(out, p.CreatedAt)
	}
	return appendGroupsState(out, t)
}

func appendUserState(out []byte, u *User) []byte {
	out = appendU32(out, u.ID)
	out = appendName(out, u.Username)
	out = appendText(out, u.PasswordHash)
	out = appendU8(out, u.Status)
	out = appendU64(out, u.CreatedAt)
	out = appendOptionalPermissions(out, u.Permissions)
	out = appendBlob(out, u.Options)
	out = appendU32(out, uint32(len(u.Tokens)))
	for _, t := range u.Tokens {
		out = appendName(out, t.Name)
		out = appendText(out, t.Hash)
		out = appendU64(out, t.CreatedAt)
		out = appendU64(out, t.ExpiryAt)
	}
	return out
}

// Restore replaces the whole state with a checkpoint made by Checkpoint.
// On any error (wrapping ErrCorruptCheckpoint) the old state is kept.
// Pending effects are dropped: a restored machine starts with none.
func (m *Machine) Restore(data []byte) error {
	restored, err := decodeCheckpoint(data)
	if err != nil {
		return err
	}
	*m = *restored
	return nil
}

func decodeCheckpoint(data []byte) (*Machine, error) {
	if len(data) < checkpointHeader+checkpointTrailer || len(data) > checkpointBytesMax {
		return nil, fmt.Errorf("%w: size %d", ErrCorruptCheckpoint, len(data))
	}
	body := data[:len(data)-checkpointTrailer]
	if got, want := xxh3.Hash(body), binary.LittleEndian.Uint64(data[len(body):]); got != want {
		return nil, fmt.Errorf("%w: checksum %x, want %x", ErrCorruptCheckpoint, got, want)
	}
	if magic := binary.LittleEndian.Uint32(body); magic != checkpointMagic {
		return nil, fmt.Errorf("%w: magic %x", ErrCorruptCheckpoint, magic)
	}
	version := binary.LittleEndian.Uint16(body[4:])
	if version != checkpointVersion && version != checkpointVersionV1 {
		return nil, fmt.Errorf("%w: version %d", ErrCorruptCheckpoint, version)
	}
	d := decoder{buf: body, off: checkpointHeader}
	m := New()
	m.lastOp = d.u64()
	if err := m.decodeStreams(&d, version >= checkpointVersion); err != nil {
		return nil, err
	}
	if err := m.decodeUsers(&d); err != nil {
		return nil, err
	}
	if err := d.end(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
	if err := m.invariantError(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
	return m, nil
}

// corrupt wraps a structural problem found while decoding a checkpoint.
func corrupt(d *decoder, what string) error {
	if d.err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCorruptCheckpoint, what, d.err)
	}
	return fmt.Errorf("%w: %s", ErrCorruptCheckpoint, what)
}

func (m *Machine) decodeStreams(d *decoder, withGroups bool) error {
	n := d.count(4 + 2 + 8 + 4)
	if n > streamsMax {
		return corrupt(d, "stream count")
	}
	var previous int64 = -1
	for i := 0; i < n; i++ {
		id, name, createdAt := d.u32(), d.name(), d.u64()
		if d.err != nil || int64(id) <= previous || id >= streamsMax {
			return corrupt(d, "stream id")
		}
		previous = int64(id)
		if _, dup := m.streamNames[name]; dup {
			return corrupt(d, "duplicate stream name")
		}
		s := newStream(id, name, createdAt)
		m.streams[id] = s
		m.streamNames[name] = id
		if err := decodeTopics(d, s, withGroups); err != nil {
			return err
		}
	}
	return d.err
}

func decodeTopics(d *decoder, s *Stream, withGroups bool) error {
	n := d.count(4 + 2 + 8)
	if n > topicsPerStreamMax {
		return corrupt(d, "topic count")
	}
	var previous int64 = -1
	for i := 0; i < n; i++ {
		t := &Topic{StreamID: s.ID, ID: d.u32(), Name: d.name(), CreatedAt: d.u64()}
		t.Options = decodeTopicOptions(d)
		t.ExplicitOptions = d.blob(optionsBlockBytesMax)
		t.DerivedOptions = d.blob(optionsBlockBytesMax)
		if d.err != nil || int64(t.ID) <= previous || t.ID >= topicsPerStreamMax {
			return corrupt(d, "topic")
		}
		if !validOptionsBlock(t.ExplicitOptions) || !validOptionsBlock(t.DerivedOptions) ||
			!validCompression(t.Options.CompressionAlgorithm) {
			return corrupt(d, "topic options")
		}
		previous = int64(t.ID)
		if _, dup := s.topicNames[t.Name]; dup {
			return corrupt(d, "duplicate topic name")
		}
		partitions := d.count(12)
		var previousPartition int64 = -1
		for j := 0; j < partitions; j++ {
			p := Partition{ID: d.u32(), CreatedAt: d.u64()}
			if d.err != nil || int64(p.ID) <= previousPartition || p.ID >= partitionIDLimit {
				return corrupt(d, "partition")
			}
			previousPartition = int64(p.ID)
			t.Partitions = append(t.Partitions, p)
		}
		if withGroups {
			if err := decodeGroupsState(d, t); err != nil {
				return err
			}
		}
		s.topics[t.ID] = t
		s.topicNames[t.Name] = t.ID
	}
	return d.err
}

func (m *Machine) decodeUsers(d *decoder) error {
	n := d.count(4 + 2 + 4 + 1 + 8 + 1 + 4 + 4)
	var previous int64 = -1
	for i := 0; i < n; i++ {
		u := &User{ID: d.u32(), Username: d.name(), PasswordHash: d.text(hashBytesMax),
			Status: d.u8(), CreatedAt: d.u64()}
		u.Permissions = decodeOptionalPermissions(d)
		u.Options = d.blob(optionsBlockBytesMax)
		if d.err != nil || int64(u.ID) <= previous || u.ID >= usersMax || !validOptionsBlock(u.Options) {
			return corrupt(d, "user")
		}
		previous = int64(u.ID)
		if u.Status != UserStatusActive && u.Status != UserStatusInactive {
			return corrupt(d, "user status")
		}
		if _, dup := m.userNames[u.Username]; dup {
			return corrupt(d, "duplicate username")
		}
		tokens := d.count(2 + 4 + 8 + 8)
		if tokens > TokensPerUserMax {
			return corrupt(d, "token count")
		}
		for j := 0; j < tokens; j++ {
			t := Token{Name: d.name(), Hash: d.text(hashBytesMax), CreatedAt: d.u64(), ExpiryAt: d.u64()}
			if d.err != nil || t.Hash == "" || u.token(t.Name) >= 0 {
				return corrupt(d, "token")
			}
			if _, dup := m.tokenHashes[t.Hash]; dup {
				return corrupt(d, "duplicate token hash")
			}
			u.Tokens = append(u.Tokens, t)
			m.tokenHashes[t.Hash] = u.ID
		}
		m.users[u.ID] = u
		m.userNames[u.Username] = u.ID
	}
	return d.err
}

// validOptionsBlock reports whether a restored options block parses, so the
// record encoders can rely on it.
func validOptionsBlock(block []byte) bool {
	_, err := parseOptions(block)
	return err == nil
}
