package metadata

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire/statecodec"
)

// Checkpoint format: statecodec's frame (magic, version, body, then the
// XXH3-64 of everything before it). Every list is in ascending id order,
// so equal states encode to equal bytes.
const (
	checkpointMagic uint32 = 0x444d5453 // "STMD"
	// checkpointVersion 3 adds the partitions' consensus group ids and
	// the next one to give out. Versions 1 (no consumer groups) and 2
	// are refused (ErrCheckpointVersion): their partitions' groups were
	// named by their stream, topic and partition ids, which a topic
	// deleted and created again reuses, and there is no migration.
	checkpointVersion uint16 = 3
	// checkpointBytesMax bounds a checkpoint Restore accepts.
	checkpointBytesMax = 1 << 30
)

// Checkpoint encodes the whole state deterministically.
func (m *Machine) Checkpoint() []byte {
	out := make([]byte, 0, 256)
	out = statecodec.AppendCheckpointHeader(out, checkpointMagic, checkpointVersion)
	out = statecodec.AppendU64(out, m.lastOp)
	out = statecodec.AppendU64(out, m.nextConsensusGroup)
	out = statecodec.AppendU32(out, uint32(len(m.streams)))
	for _, s := range m.Streams() {
		out = statecodec.AppendU32(out, s.ID)
		out = statecodec.AppendName(out, s.Name)
		out = statecodec.AppendU64(out, s.CreatedAt)
		topics := s.Topics()
		out = statecodec.AppendU32(out, uint32(len(topics)))
		for _, t := range topics {
			out = appendTopicState(out, t)
		}
	}
	users := m.Users()
	out = statecodec.AppendU32(out, uint32(len(users)))
	for _, u := range users {
		out = appendUserState(out, u)
	}
	return statecodec.SealCheckpoint(out)
}

func appendTopicState(out []byte, t *Topic) []byte {
	out = statecodec.AppendU32(out, t.ID)
	out = statecodec.AppendName(out, t.Name)
	out = statecodec.AppendU64(out, t.CreatedAt)
	out = t.Options.appendTo(out)
	out = statecodec.AppendBlob(out, t.ExplicitOptions)
	out = statecodec.AppendBlob(out, t.DerivedOptions)
	out = statecodec.AppendU32(out, uint32(len(t.Partitions)))
	for _, p := range t.Partitions {
		out = statecodec.AppendU32(out, p.ID)
		out = statecodec.AppendU64(out, p.CreatedAt)
		out = statecodec.AppendU64(out, p.ConsensusGroup)
	}
	return appendGroupsState(out, t)
}

func appendUserState(out []byte, u *User) []byte {
	out = statecodec.AppendU32(out, u.ID)
	out = statecodec.AppendName(out, u.Username)
	out = statecodec.AppendText(out, u.PasswordHash)
	out = append(out, u.Status)
	out = statecodec.AppendU64(out, u.CreatedAt)
	out = appendOptionalPermissions(out, u.Permissions)
	out = statecodec.AppendBlob(out, u.Options)
	out = statecodec.AppendU32(out, uint32(len(u.Tokens)))
	for _, t := range u.Tokens {
		out = statecodec.AppendName(out, t.Name)
		out = statecodec.AppendText(out, t.Hash)
		out = statecodec.AppendU64(out, t.CreatedAt)
		out = statecodec.AppendU64(out, t.ExpiryAt)
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
	restored.sizeMax = m.sizeMax
	*m = *restored
	return nil
}

func decodeCheckpoint(data []byte) (*Machine, error) {
	version, body, err := statecodec.OpenCheckpoint(data, checkpointMagic, checkpointBytesMax, ErrCorruptCheckpoint)
	if err != nil {
		return nil, err
	}
	if version != checkpointVersion {
		return nil, fmt.Errorf("%w: %w: version %d, this build reads version %d (no migration: recreate the data directory)",
			ErrCorruptCheckpoint, ErrCheckpointVersion, version, checkpointVersion)
	}
	d := statecodec.NewDecoder(body, ErrMalformed)
	m := New()
	m.lastOp = d.U64()
	m.nextConsensusGroup = d.U64()
	if d.Err() != nil || m.nextConsensusGroup > ConsensusGroupLimit {
		return nil, corrupt(&d, "next consensus group")
	}
	if err := m.decodeStreams(&d); err != nil {
		return nil, err
	}
	if err := m.decodeUsers(&d); err != nil {
		return nil, err
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
	if err := m.invariantError(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
	return m, nil
}

// corrupt wraps a structural problem found while decoding a checkpoint.
func corrupt(d *statecodec.Decoder, what string) error {
	if d.Err() != nil {
		return fmt.Errorf("%w: %s: %w", ErrCorruptCheckpoint, what, d.Err())
	}
	return fmt.Errorf("%w: %s", ErrCorruptCheckpoint, what)
}

func (m *Machine) decodeStreams(d *statecodec.Decoder) error {
	n := d.Count(4 + 2 + 8 + 4)
	if n > streamsMax {
		return corrupt(d, "stream count")
	}
	var previous int64 = -1
	for i := 0; i < n; i++ {
		id, name, createdAt := d.U32(), d.Name(), d.U64()
		if d.Err() != nil || int64(id) <= previous || id >= streamsMax {
			return corrupt(d, "stream id")
		}
		previous = int64(id)
		if _, dup := m.streamNames[name]; dup {
			return corrupt(d, "duplicate stream name")
		}
		s := newStream(id, name, createdAt)
		m.streams[id] = s
		m.streamNames[name] = id
		if err := decodeTopics(d, s); err != nil {
			return err
		}
	}
	return d.Err()
}

func decodeTopics(d *statecodec.Decoder, s *Stream) error {
	n := d.Count(4 + 2 + 8)
	if n > topicsPerStreamMax {
		return corrupt(d, "topic count")
	}
	var previous int64 = -1
	for i := 0; i < n; i++ {
		t := &Topic{StreamID: s.ID, ID: d.U32(), Name: d.Name(), CreatedAt: d.U64()}
		t.Options = decodeTopicOptions(d)
		t.ExplicitOptions = d.Blob(optionsBlockBytesMax)
		t.DerivedOptions = d.Blob(optionsBlockBytesMax)
		if d.Err() != nil || int64(t.ID) <= previous || t.ID >= topicsPerStreamMax {
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
		partitions := d.Count(4 + 8 + 8)
		var previousPartition int64 = -1
		for j := 0; j < partitions; j++ {
			p := Partition{ID: d.U32(), CreatedAt: d.U64(), ConsensusGroup: d.U64()}
			if d.Err() != nil || int64(p.ID) <= previousPartition || p.ID >= partitionIDLimit {
				return corrupt(d, "partition")
			}
			previousPartition = int64(p.ID)
			t.Partitions = append(t.Partitions, p)
		}
		if err := decodeGroupsState(d, t); err != nil {
			return err
		}
		s.topics[t.ID] = t
		s.topicNames[t.Name] = t.ID
	}
	return d.Err()
}

func (m *Machine) decodeUsers(d *statecodec.Decoder) error {
	n := d.Count(4 + 2 + 4 + 1 + 8 + 1 + 4 + 4)
	var previous int64 = -1
	for i := 0; i < n; i++ {
		u := &User{ID: d.U32(), Username: d.Name(), PasswordHash: d.Text(hashBytesMax),
			Status: d.U8(), CreatedAt: d.U64()}
		u.Permissions = decodeOptionalPermissions(d)
		u.Options = d.Blob(optionsBlockBytesMax)
		if d.Err() != nil || int64(u.ID) <= previous || u.ID >= usersMax || !validOptionsBlock(u.Options) {
			return corrupt(d, "user")
		}
		previous = int64(u.ID)
		if u.Status != UserStatusActive && u.Status != UserStatusInactive {
			return corrupt(d, "user status")
		}
		if _, dup := m.userNames[u.Username]; dup {
			return corrupt(d, "duplicate username")
		}
		tokens := d.Count(2 + 4 + 8 + 8)
		if tokens > TokensPerUserMax {
			return corrupt(d, "token count")
		}
		for j := 0; j < tokens; j++ {
			t := Token{Name: d.Name(), Hash: d.Text(hashBytesMax), CreatedAt: d.U64(), ExpiryAt: d.U64()}
			if d.Err() != nil || t.Hash == "" || u.token(t.Name) >= 0 {
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
	return d.Err()
}

// validOptionsBlock reports whether a restored options block parses, so the
// record encoders can rely on it.
func validOptionsBlock(block []byte) bool {
	_, err := parseOptions(block)
	return err == nil
}
