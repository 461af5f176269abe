package metadata

import "errors"

// Limits of PROTOCOL.md §9 enforced inside Apply.
const (
	// streamsMax is the number of streams a server holds at most (1020).
	streamsMax = 1 << 20
	// topicsPerStreamMax is the number of topics a stream holds at most (2021).
	topicsPerStreamMax = 4096
	// partitionIDLimit bounds partition ids: every id is below it (3013).
	partitionIDLimit = 1_000_000
	// partitionsPerRequestMax bounds one create/delete partitions request (2015).
	partitionsPerRequestMax = 1000
	// usersMax bounds the user table (55).
	usersMax = 1 << 20
	// usernameLengthMin and usernameLengthMax bound usernames in bytes (43).
	usernameLengthMin = 3
	usernameLengthMax = 50
	// TokensPerUserMax is personal_access_token.max_tokens_per_user (52).
	TokensPerUserMax = 100
	// preallocatedBytesMax bounds segment_size × partitions_count when
	// preallocate_segments is on (4042).
	preallocatedBytesMax = 64 << 30
	// optionsBlockBytesMax is the largest options block (§4.8).
	optionsBlockBytesMax = 100_000
	// optionsPairsMax is the most pairs an options block holds (§4.8).
	optionsPairsMax = 1024
	// hashBytesMax bounds the opaque password and token hashes an operation
	// carries.
	hashBytesMax = 1024
	// permissionsBytesMax bounds an encoded permissions structure.
	permissionsBytesMax = 1 << 24
)

// ConsensusGroupLimit bounds the partitions' consensus group ids: every
// one is below it (3013 once they are spent), so none is the metadata
// group's (server/group.MetaGroupID, 1<<63).
const ConsensusGroupLimit uint64 = 1 << 63

// RootUserID is the id of the root user. Requests made by this id bypass
// every permission check; the first boot's bootstrap CreateUser is issued
// under it before any user exists.
const RootUserID uint32 = 0

// User status values of §4.11.4.
const (
	UserStatusActive   uint8 = 1
	UserStatusInactive uint8 = 2
)

// Durability values of a topic (DESIGN.md decision 5).
const (
	DurabilityReplicated uint8 = 1
	DurabilityPersisted  uint8 = 2
)

// Compression algorithm codes of the TopicHeader.
const (
	CompressionNone uint8 = 1
	CompressionGzip uint8 = 2
)

// NeverExpires is the message_expiry and max_topic_size value meaning
// "never" / "unlimited".
const NeverExpires = ^uint64(0)

var (
	// ErrMalformed reports an operation body or checkpoint that does not
	// decode.
	ErrMalformed = errors.New("metadata: malformed encoding")
	// ErrUnknownOperation reports an operation byte this machine does not
	// apply.
	ErrUnknownOperation = errors.New("metadata: unknown operation")
	// ErrCorruptCheckpoint reports a checkpoint whose magic, version,
	// checksum or content is invalid.
	ErrCorruptCheckpoint = errors.New("metadata: corrupt checkpoint")
	// ErrCheckpointVersion reports a checkpoint of a version this build
	// does not read (it wraps ErrCorruptCheckpoint too): a data directory
	// of an older build, refused without a migration.
	ErrCheckpointVersion = errors.New("metadata: checkpoint of another version")
)
