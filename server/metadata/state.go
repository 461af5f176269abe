package metadata

import "sort"

// Stream is one stream of the applied state. Callers outside the package
// must treat it as read-only; it stays valid until the next Apply or
// Restore.
type Stream struct {
	ID        uint32
	Name      string
	CreatedAt uint64
	// topics by id; topicNames maps names to ids.
	// Invariant: topicNames[t.Name] == t.ID for every t in topics.
	topics     map[uint32]*Topic
	topicNames map[string]uint32
}

// Topic is one topic of the applied state (read-only outside the package).
type Topic struct {
	ID        uint32
	StreamID  uint32
	Name      string
	CreatedAt uint64
	Options   TopicOptions
	// ExplicitOptions and DerivedOptions are the §4.8 response blocks.
	ExplicitOptions []byte
	DerivedOptions  []byte
	// Partitions in ascending id order.
	// Invariant: ids strictly ascending, all below partitionIDLimit.
	Partitions []Partition
	// groups are the topic's consumer groups in ascending id order.
	// Invariant: ids strictly ascending and below nextGroupID; names
	// unique.
	groups []*ConsumerGroup
	// nextGroupID is the id the next created group receives (ids are
	// never reused).
	nextGroupID uint32
}

// Partition is a partition as metadata knows it; messages and offsets live
// in server/partition.
type Partition struct {
	ID        uint32
	CreatedAt uint64
	// ConsensusGroup is the id of the partition's consensus (VSR) group,
	// taken from Machine.nextConsensusGroup when the partition was
	// created. Ids are never reused: a partition deleted and created again
	// under the same stream, topic and partition ids is a new group, so a
	// message or a file of the old one is never taken for the new one's.
	// Invariant: below Machine.nextConsensusGroup, unique in the state.
	ConsensusGroup uint64
}

// User is one user of the applied state (read-only outside the package).
type User struct {
	ID           uint32
	Username     string
	PasswordHash string
	Status       uint8
	CreatedAt    uint64
	// Permissions is nil when the user has none.
	Permissions *Permissions
	// Options is the user's options block as sent (§4.11.4).
	Options []byte
	// Tokens in creation order.
	// Invariant: names unique, at most TokensPerUserMax.
	Tokens []Token
}

// Token is a personal access token (§5.3). Only its hash is kept.
type Token struct {
	Name      string
	Hash      string
	CreatedAt uint64
	// ExpiryAt is micros since the epoch, 0 = never.
	ExpiryAt uint64
}

// Machine is the metadata state machine. It implements the
// vsr.StateMachine contract: Apply, Checkpoint, Restore. One goroutine at a
// time may call it; the server serialises Apply and reads.
type Machine struct {
	// Invariant: streamNames[s.Name] == s.ID for every stream.
	streams     map[uint32]*Stream
	streamNames map[string]uint32
	// Invariant: userNames[u.Username] == u.ID; tokenHashes[t.Hash] == owner id.
	users       map[uint32]*User
	userNames   map[string]uint32
	tokenHashes map[string]uint32
	// lastOp is the commit number of the last applied operation.
	lastOp uint64
	// nextConsensusGroup is the consensus group id the next created
	// partition receives: a counter of every partition ever created, so
	// the same operations give the same ids on every replica.
	// Invariant: at most ConsensusGroupLimit.
	nextConsensusGroup uint64
	// effects accumulates what the server must do on disk, drained by
	// TakeEffects.
	effects []Effect
	// sizeMax bounds the encoded state (StateBytesMax); size caches its
	// encoded length, -1 when an op changed it since (stateBytes).
	sizeMax int
	size    int
}

// New returns an empty machine (no streams, no users). The server applies
// BootstrapRoot's operation on first boot.
func New() *Machine {
	return &Machine{
		streams:     make(map[uint32]*Stream),
		streamNames: make(map[string]uint32),
		users:       make(map[uint32]*User),
		userNames:   make(map[string]uint32),
		tokenHashes: make(map[string]uint32),
		sizeMax:     StateBytesMax,
		size:        -1,
	}
}

// LastOp returns the commit number of the last applied operation.
func (m *Machine) LastOp() uint64 { return m.lastOp }

// NextConsensusGroup returns the consensus group id the next created
// partition receives (every id below it was given out once).
func (m *Machine) NextConsensusGroup() uint64 { return m.nextConsensusGroup }

// takeConsensusGroups reserves count consensus group ids and returns the
// first, or false when the id space below ConsensusGroupLimit is spent.
func (m *Machine) takeConsensusGroups(count uint32) (uint64, bool) {
	if m.nextConsensusGroup > ConsensusGroupLimit-uint64(count) {
		return 0, false
	}
	first := m.nextConsensusGroup
	m.nextConsensusGroup += uint64(count)
	return first, true
}

// sortedKeys returns the keys of a map with uint32 keys in ascending order.
func sortedKeys[V any](in map[uint32]V) []uint32 {
	keys := make([]uint32, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// lowestFreeID returns the smallest id not in used, or false when every id
// below limit is taken.
func lowestFreeID[V any](used map[uint32]V, limit uint32) (uint32, bool) {
	for id := uint32(0); id < limit; id++ {
		if _, ok := used[id]; !ok {
			return id, true
		}
	}
	return 0, false
}

func newStream(id uint32, name string, createdAt uint64) *Stream {
	return &Stream{ID: id, Name: name, CreatedAt: createdAt,
		topics: make(map[uint32]*Topic), topicNames: make(map[string]uint32)}
}

// TopicsCount returns the number of topics of s.
func (s *Stream) TopicsCount() int { return len(s.topics) }

// Topics returns the topics of s in ascending id order.
func (s *Stream) Topics() []*Topic {
	out := make([]*Topic, 0, len(s.topics))
	for _, id := range sortedKeys(s.topics) {
		out = append(out, s.topics[id])
	}
	return out
}

// partitionIDs returns the ids of t's partitions in ascending order.
func (t *Topic) partitionIDs() []uint32 {
	out := make([]uint32, len(t.Partitions))
	for i := range t.Partitions {
		out[i] = t.Partitions[i].ID
	}
	return out
}

// HasPartition reports whether t has a partition with id.
func (t *Topic) HasPartition(id uint32) bool {
	i := sort.Search(len(t.Partitions), func(i int) bool { return t.Partitions[i].ID >= id })
	return i < len(t.Partitions) && t.Partitions[i].ID == id
}

// token returns the index of u's token named name, or -1.
func (u *User) token(name string) int {
	for i := range u.Tokens {
		if u.Tokens[i].Name == name {
			return i
		}
	}
	return -1
}
