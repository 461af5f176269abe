// Package config loads the server configuration: an embedded default TOML
// document, optionally a file given with --config, then environment
// overrides named STRATA_<SECTION>_<KEY>. Section and key names follow
// Iggy's server config wherever the feature exists.
package config

import (
	_ "embed"
	"errors"
	"fmt"
	"os"

	"github.com/BurntSushi/toml"
)

//go:embed default.toml
var defaultTOML string

// DefaultTOML returns the embedded default configuration document.
func DefaultTOML() string { return defaultTOML }

// ErrInvalid is wrapped by every validation failure; the message names the
// offending key.
var ErrInvalid = errors.New("invalid configuration")

// Config is the whole server configuration.
type Config struct {
	System              System              `toml:"system"`
	TCP                 ClientListener      `toml:"tcp"`
	QUIC                QUIC                `toml:"quic"`
	HTTP                HTTP                `toml:"http"`
	WebSocket           ClientListener      `toml:"websocket"`
	MessageBus          MessageBus          `toml:"message_bus"`
	Heartbeat           Heartbeat           `toml:"heartbeat"`
	Metadata            Metadata            `toml:"metadata"`
	Partition           PartitionWAL        `toml:"partition"`
	PersonalAccessToken PersonalAccessToken `toml:"personal_access_token"`
	Login               Login               `toml:"login"`
	Cluster             Cluster             `toml:"cluster"`
}

// System holds the [system] section and its subsections.
type System struct {
	Path       string     `toml:"path"`
	Logging    Logging    `toml:"logging"`
	IO         IO         `toml:"io"`
	Partition  Partition  `toml:"partition"`
	Sharding   Sharding   `toml:"sharding"`
	MemoryPool MemoryPool `toml:"memory_pool"`
}

// Logging is [system.logging].
type Logging struct {
	Level  string `toml:"level"`
	Format string `toml:"format"`
	Path   string `toml:"path"`
}

// IO is [system.io].
type IO struct {
	Engine string `toml:"engine"`
	// RingEntries sizes each io_uring submission queue and bounds the
	// operations in flight on it (the kernel rounds it up to a power of
	// two); RingEventInterval is how many queued tasks a shard runs
	// between two visits to its ring. Both were STRATA_SHARD_RUNTIME_CAPACITY
	// and STRATA_SHARD_EVENT_INTERVAL, outside the config.
	RingEntries       uint32 `toml:"ring_entries"`
	RingEventInterval uint32 `toml:"ring_event_interval"`
}

// Partition is [system.partition].
type Partition struct {
	EnforceFsync bool `toml:"enforce_fsync"`
	// OffsetReservation is how many offsets a partition reserves ahead in
	// its superblock before handing them out, so that no offset is given
	// to two messages after a crash; a crash skips at most about this many.
	OffsetReservation uint64 `toml:"offset_reservation"`
}

// Sharding is [system.sharding].
type Sharding struct {
	CPUAllocation string `toml:"cpu_allocation"`
	PinCores      bool   `toml:"pin_cores"`
	// SkipShardZeroForClients keeps shard 0 (listeners, metadata) out of
	// the rotation that serves client connections.
	SkipShardZeroForClients bool `toml:"skip_shard_zero_for_clients"`
}

// MemoryPool is [system.memory_pool].
type MemoryPool struct {
	Enabled        bool     `toml:"enabled"`
	Size           ByteSize `toml:"size"`
	BucketCapacity uint32   `toml:"bucket_capacity"`
	// IdleReleaseInterval is how often idle cached buffers are dropped
	// and their memory handed back to the operating system (0: never).
	IdleReleaseInterval Duration `toml:"idle_release_interval"`
}

// Listener is a transport section ([tcp], [http], [websocket]).
type Listener struct {
	Enabled bool   `toml:"enabled"`
	Address string `toml:"address"`
	TLS     TLS    `toml:"tls"`
}

// HTTP is [http]: the REST API's listener and its token signing.
type HTTP struct {
	Listener
	JWT JWT `toml:"jwt"`
}

// JWT is [http.jwt], with Iggy's key names. Tokens are HS256, so one key
// signs and verifies: when only one of the two is set it serves as both,
// and two different ones are refused. Both empty draws a random key per
// process (tokens do not survive a restart). Secrets are never written to
// runtime/current_config.toml nor to the log.
type JWT struct {
	EncodingSecret Secret `toml:"encoding_secret"`
	DecodingSecret Secret `toml:"decoding_secret"`
}

// Key is the HS256 key the secrets give, empty for a random one.
func (j JWT) Key() []byte {
	if j.EncodingSecret != "" {
		return []byte(j.EncodingSecret)
	}
	return []byte(j.DecodingSecret)
}

// ClientListener is a binary-protocol transport section ([tcp],
// [websocket]): a listener and the limits on its client connections.
type ClientListener struct {
	Listener
	ClientLimits
}

// ClientLimits bound what a client connection of a binary transport
// ([tcp], [websocket], [quic]) may hold before and during its requests.
// Iggy has no keys for these; the names follow its style.
type ClientLimits struct {
	// UnauthenticatedMaxMessageSize is the largest frame read from a
	// connection with no bound session (Ping, Register, Logout); a larger
	// size closes the connection before its body is read.
	UnauthenticatedMaxMessageSize ByteSize `toml:"unauthenticated_max_message_size"`
	// UnauthenticatedIdleTimeout closes a connection with no bound session
	// that completes no request for this long.
	UnauthenticatedIdleTimeout Duration `toml:"unauthenticated_idle_timeout"`
	// RequestReadTimeout bounds the reading of one request, header and
	// body, from its first byte.
	RequestReadTimeout Duration `toml:"request_read_timeout"`
}

// TLS is a listener's [*.tls] subsection: the same listener speaks TLS
// when enabled, with the certificate files, or a self-signed certificate
// made at start when both are empty (development only).
type TLS struct {
	Enabled  bool   `toml:"enabled"`
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
}

// QUIC is [quic].
type QUIC struct {
	Enabled     bool        `toml:"enabled"`
	Address     string      `toml:"address"`
	Certificate Certificate `toml:"certificate"`
	ClientLimits
}

// Certificate names a TLS certificate and key (PEM files); both empty
// means a self-signed certificate generated at start (development only).
type Certificate struct {
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
}

// MessageBus is [message_bus].
type MessageBus struct {
	MaxMessageSize uint32 `toml:"max_message_size"`
	// ConnectionsMax caps the open client connections of the TCP,
	// WebSocket and QUIC listeners together (0: no cap).
	ConnectionsMax uint32 `toml:"connections_max"`
	// InFlightBytesMax bounds the bytes of request frames larger than a
	// connection's own buffer held at once (being read or handled), all
	// connections together.
	InFlightBytesMax ByteSize `toml:"in_flight_bytes_max"`
}

// Heartbeat is [heartbeat].
type Heartbeat struct {
	Enabled  bool     `toml:"enabled"`
	Interval Duration `toml:"interval"`
}

// Metadata is [metadata].
type Metadata struct {
	JournalSlots    uint32 `toml:"journal_slots"`
	ClientsTableMax uint32 `toml:"clients_table_max"`
	// ClientsPerUserMax bounds one user's share of the client table: past
	// it, the user's own oldest session goes.
	ClientsPerUserMax uint32 `toml:"clients_per_user_max"`
	// ClientsTableBytesMax bounds the client table's bytes (sessions and
	// their cached replies) in a metadata checkpoint: past it the least
	// recent sessions' cached replies go first (a duplicate of such a
	// request gets 59), then those sessions.
	ClientsTableBytesMax ByteSize `toml:"clients_table_bytes_max"`
}

// PartitionWAL is [partition].
type PartitionWAL struct {
	WALBytesMax ByteSize `toml:"wal_bytes_max"`
}

// PersonalAccessToken is [personal_access_token].
type PersonalAccessToken struct {
	MaxTokensPerUser uint32 `toml:"max_tokens_per_user"`
}

// Login is [login]: the login limits of every transport (no Iggy
// equivalent). Failed logins are counted per (address, username), per
// username and per address; successful HTTP logins per (user, address).
type Login struct {
	FailuresPerUserAddress  uint32   `toml:"failures_per_user_address"`
	FailuresPerUser         uint32   `toml:"failures_per_user"`
	FailuresPerAddress      uint32   `toml:"failures_per_address"`
	FailureRefill           Duration `toml:"failure_refill"`
	SuccessesPerUserAddress uint32   `toml:"successes_per_user_address"`
	SuccessRefill           Duration `toml:"success_refill"`
	HTTPSessionsPerUser     uint32   `toml:"http_sessions_per_user"`
	HTTPSessionsMax         uint32   `toml:"http_sessions_max"`
}

// Cluster is [cluster].
type Cluster struct {
	Enabled bool `toml:"enabled"`
}

// Limits on configuration values, checked by Validate.
const (
	frameSizeMin         = 256
	frameSizeMax         = 1 << 30
	journalSlotsMin      = 16
	walBytesMin          = 256 << 10
	journalSlotsMax      = 1 << 20
	memoryPoolMin        = 512 << 20
	clientsTableMaxLimit = 1 << 16 // vsr.ClientsMaxLimit: the metadata group's client table
	// The client table's bytes: at least two of the metadata group's
	// largest replies, at most half of its 64 MiB checkpoint (the state
	// has the other half; server/metastore.go's metaCheckpointMax).
	clientsTableBytesMin = 1 << 20
	clientsTableBytesMax = 32 << 20
	// ringEntriesMax is the kernel's limit on submission queue entries;
	// ringEventIntervalMax keeps a shard from running unboundedly many
	// tasks without visiting its ring (runtime/uring checks both again).
	ringEntriesMax       = 32768
	ringEventIntervalMax = 1 << 16
	// unauthenticatedFrameMin holds a login with the longest names a
	// Register body allows (PROTOCOL.md §2.3) and an empty context.
	unauthenticatedFrameMin = 2 << 10
	// offsetReservationMax keeps a crash's skip far from the end of the
	// offset space.
	offsetReservationMax = 1 << 32
)

// validate checks [login]: every bound at least 1, every refill positive.
func (l *Login) validate(bad func(key string, format string, args ...any) error) error {
	for _, k := range []struct {
		key string
		n   uint32
	}{{"failures_per_user_address", l.FailuresPerUserAddress}, {"failures_per_user", l.FailuresPerUser},
		{"failures_per_address", l.FailuresPerAddress}, {"successes_per_user_address", l.SuccessesPerUserAddress},
		{"http_sessions_per_user", l.HTTPSessionsPerUser}, {"http_sessions_max", l.HTTPSessionsMax}} {
		if k.n < 1 {
			return bad("login."+k.key, "must be at least 1")
		}
	}
	if l.HTTPSessionsPerUser > l.HTTPSessionsMax {
		return bad("login.http_sessions_per_user", "%d is above login.http_sessions_max (%d)", l.HTTPSessionsPerUser, l.HTTPSessionsMax)
	}
	if l.FailureRefill <= 0 {
		return bad("login.failure_refill", "must be positive")
	}
	if l.SuccessRefill <= 0 {
		return bad("login.success_refill", "must be positive")
	}
	return nil
}

// Load builds the configuration: the embedded default, then the file at
// path (when path is not empty), then environment overrides from environ
// (os.Environ() in production). It validates the result.
func Load(path string, environ []string) (*Config, error) {
	var cfg Config
	if _, err := toml.Decode(defaultTOML, &cfg); err != nil {
		return nil, fmt.Errorf("embedded default config: %w", err)
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read config %s: %w", path, err)
		}
		meta, err := toml.Decode(string(data), &cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
		}
		if undecoded := meta.Undecoded(); len(undecoded) > 0 {
			key := undecoded[0].String()
			return nil, fmt.Errorf("%w: %s: unknown key %q; did you mean %q?", ErrInvalid, path, key, NearestName(key, keyPaths()))
		}
	}
	if err := applyEnv(&cfg, environ); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// validateClientLimits checks the connection limits of the binary
// transports and the request budget.
func (c *Config) validateClientLimits(bad func(key string, format string, args ...any) error) error {
	for _, l := range []struct {
		section string
		limits  ClientLimits
	}{{"tcp", c.TCP.ClientLimits}, {"websocket", c.WebSocket.ClientLimits}, {"quic", c.QUIC.ClientLimits}} {
		if n := l.limits.UnauthenticatedMaxMessageSize; n < unauthenticatedFrameMin || n > ByteSize(c.MessageBus.MaxMessageSize) {
			return bad(l.section+".unauthenticated_max_message_size", "%d is outside %d..message_bus.max_message_size", n, unauthenticatedFrameMin)
		}
		if l.limits.UnauthenticatedIdleTimeout <= 0 {
			return bad(l.section+".unauthenticated_idle_timeout", "must be positive")
		}
		if l.limits.RequestReadTimeout <= 0 {
			return bad(l.section+".request_read_timeout", "must be positive")
		}
	}
	if n := c.MessageBus.InFlightBytesMax; n < ByteSize(c.MessageBus.MaxMessageSize) {
		return bad("message_bus.in_flight_bytes_max", "%d is below message_bus.max_message_size, so a frame of the largest size could never be read", n)
	}
	if mp := c.System.MemoryPool; mp.Enabled && c.MessageBus.InFlightBytesMax > mp.Size {
		return bad("message_bus.in_flight_bytes_max", "%d is over system.memory_pool.size %d, which lends the frames", c.MessageBus.InFlightBytesMax, mp.Size)
	}
	if c.System.MemoryPool.IdleReleaseInterval < 0 {
		return bad("system.memory_pool.idle_release_interval", "must not be negative")
	}
	return nil
}

// Validate checks every value that has a constrained range and names the
// offending key in its error.
func (c *Config) Validate() error {
	bad := func(key string, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalid, key, fmt.Sprintf(format, args...))
	}
	if c.System.Path == "" {
		return bad("system.path", "must not be empty")
	}
	switch c.System.Logging.Level {
	case "debug", "info", "warn", "error":
	default:
		return bad("system.logging.level", "%q is not one of debug, info, warn, error", c.System.Logging.Level)
	}
	switch c.System.Logging.Format {
	case "text", "json":
	default:
		return bad("system.logging.format", "%q is not one of text, json", c.System.Logging.Format)
	}
	switch c.System.IO.Engine {
	case "auto", "uring", "sync":
	default:
		return bad("system.io.engine", "%q is not one of auto, uring, sync", c.System.IO.Engine)
	}
	if n := c.System.IO.RingEntries; n < 1 || n > ringEntriesMax {
		return bad("system.io.ring_entries", "%d is outside 1..%d", n, ringEntriesMax)
	}
	if n := c.System.IO.RingEventInterval; n < 1 || n > ringEventIntervalMax {
		return bad("system.io.ring_event_interval", "%d is outside 1..%d", n, ringEventIntervalMax)
	}
	if j := c.HTTP.JWT; j.EncodingSecret != "" && j.DecodingSecret != "" && j.EncodingSecret != j.DecodingSecret {
		return bad("http.jwt.decoding_secret", "differs from encoding_secret: HS256 signs and verifies with one key (set one of them)")
	}
	if c.System.MemoryPool.Enabled && c.System.MemoryPool.Size < memoryPoolMin {
		return bad("system.memory_pool.size", "%d is below the minimum %d", c.System.MemoryPool.Size, memoryPoolMin)
	}
	if n := c.System.Partition.OffsetReservation; n < 1 || n > offsetReservationMax {
		return bad("system.partition.offset_reservation", "%d is outside 1..%d", n, uint64(offsetReservationMax))
	}
	if c.TCP.Enabled && c.TCP.Address == "" {
		return bad("tcp.address", "must not be empty when tcp.enabled")
	}
	if cert := c.QUIC.Certificate; (cert.CertFile == "") != (cert.KeyFile == "") {
		return bad("quic.certificate", "cert_file and key_file must be given together")
	}
	for _, l := range []struct {
		key string
		tls TLS
	}{{"tcp.tls", c.TCP.TLS}, {"http.tls", c.HTTP.TLS}, {"websocket.tls", c.WebSocket.TLS}} {
		if (l.tls.CertFile == "") != (l.tls.KeyFile == "") {
			return bad(l.key, "cert_file and key_file must be given together")
		}
	}
	if m := c.MessageBus.MaxMessageSize; m < frameSizeMin || m > frameSizeMax {
		return bad("message_bus.max_message_size", "%d is outside %d..%d", m, frameSizeMin, frameSizeMax)
	}
	if err := c.validateClientLimits(bad); err != nil {
		return err
	}
	if n := c.Metadata.JournalSlots; n < journalSlotsMin || n > journalSlotsMax {
		return bad("metadata.journal_slots", "%d is outside %d..%d", n, journalSlotsMin, journalSlotsMax)
	}
	if n := c.Metadata.ClientsTableMax; n < 1 || n > clientsTableMaxLimit {
		return bad("metadata.clients_table_max", "%d is outside 1..%d", n, clientsTableMaxLimit)
	}
	if n := c.Metadata.ClientsPerUserMax; n < 1 || n > c.Metadata.ClientsTableMax {
		return bad("metadata.clients_per_user_max", "%d is outside 1..clients_table_max (%d)", n, c.Metadata.ClientsTableMax)
	}
	if n := uint64(c.Metadata.ClientsTableBytesMax); n < clientsTableBytesMin || n > clientsTableBytesMax {
		return bad("metadata.clients_table_bytes_max", "%d is outside %d..%d", n, uint64(clientsTableBytesMin), uint64(clientsTableBytesMax))
	}
	if n := uint64(c.Partition.WALBytesMax); n < walBytesMin {
		// A persisted cluster partition's prepare WAL needs two prepares
		// of at least 128 KiB (server/partition_wal.go).
		return bad("partition.wal_bytes_max", "%d is below the minimum %d", n, uint64(walBytesMin))
	}
	if err := c.Login.validate(bad); err != nil {
		return err
	}
	if c.Heartbeat.Enabled && c.Heartbeat.Interval <= 0 {
		return bad("heartbeat.interval", "must be positive")
	}
	if c.PersonalAccessToken.MaxTokensPerUser < 1 {
		return bad("personal_access_token.max_tokens_per_user", "must be at least 1")
	}
	if c.Cluster.Enabled {
		return bad("cluster.enabled", "clustering is not available in this build")
	}
	return nil
}
