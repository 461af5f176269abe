// Package vsr implements Viewstamped Replication as a pure state machine.
//
// A Replica is driven only by Tick, Step and the completions of the storage
// operations it submitted. It acts on the world through the three narrow
// interfaces in this file, which production (runtime/) and the simulator
// (sim/) implement. Nothing in this package touches the OS, starts a
// goroutine, reads the wall clock or draws global randomness.
package vsr

// Zone names a region of a replica's durable storage. Each zone is an
// independent byte space starting at offset 0 and holding at most
// Storage.ZoneSize(zone) bytes.
type Zone uint8

const (
	// ZoneSuperblock holds the alternating superblock copies.
	ZoneSuperblock Zone = iota + 1
	// ZoneWALHeaders holds the journal's prepare headers, one slot each.
	ZoneWALHeaders
	// ZoneWALPrepares holds the journal's full prepares, one slot each.
	ZoneWALPrepares
	// ZoneCheckpoint holds the latest state machine checkpoint.
	ZoneCheckpoint
)

// SectorSize is the unit of atomicity of Storage: a write is torn, if at
// all, only at sector boundaries, and offsets and lengths of every request
// are multiples of it.
const SectorSize = 4096

// Storage is a replica's durable storage. Every method submits work and
// returns at once; the completion callback runs later, on the goroutine that
// drives the replica, never inside the submitting call. A write is durable
// only once a Sync submitted after its completion has completed. Errors are
// values: a failed read returns a non-nil error (for example a latent sector
// error), and the replica repairs the data from a peer.
type Storage interface {
	// Read fills buf from zone at offset.
	Read(zone Zone, offset uint64, buf []byte, done func(err error))
	// Write stores data to zone at offset. The callee may keep data only
	// until done is called.
	Write(zone Zone, offset uint64, data []byte, done func(err error))
	// Sync makes every completed write durable.
	Sync(done func(err error))
	// ZoneSize reports the capacity of zone in bytes.
	ZoneSize(zone Zone) uint64
}

// Network carries messages between replicas and to clients. Send never
// blocks and never fails visibly: a message may be lost, delayed,
// duplicated or reordered. The callee owns m after the call.
type Network interface {
	// SendToReplica sends m to the replica with index replica.
	SendToReplica(replica uint8, m *Message)
	// SendToClient sends m (a reply or an eviction) to the client with id
	// client.
	SendToClient(client Uint128, m *Message)
}

// CommitAnnouncer is an optional interface of a Network. A host of many
// groups implements it to coalesce their commit heartbeats: a replica
// whose network implements it announces its commit through AnnounceCommit
// instead of sending a Commit message to every other replica, and the
// host delivers the announcement to the group's peers, which hand it to
// Replica.OnCommitAnnouncement. Read rounds (a Commit with a nonce) stay
// messages.
type CommitAnnouncer interface {
	// AnnounceCommit stands for a Commit heartbeat of this replica in view
	// with commit number commit and checkpoint checkpointOp, to every
	// other replica of the group. It never blocks and may be lost.
	AnnounceCommit(view, commit, checkpointOp uint64)
}

// StateMachine is the deterministic application that VSR replicates.
// Apply runs only for committed operations, exactly once each, in op
// order; it must not depend on anything but its inputs and prior state.
type StateMachine interface {
	// Apply executes one committed operation and returns the reply body.
	// timestamp is the primary-assigned timestamp of the prepare.
	Apply(op uint64, timestamp uint64, operation uint8, body []byte) (reply []byte)
	// Checkpoint encodes the whole state for state transfer and
	// checkpointing.
	Checkpoint() []byte
	// Restore replaces the whole state with a checkpoint made by Checkpoint.
	// It returns an error (and keeps the old state) if data is corrupt.
	Restore(data []byte) error
}

// Clock gives the replica the only wall-clock reading it may use: the
// timestamp a primary assigns to a prepare. Timeouts are counted in ticks.
type Clock interface {
	// RealtimeMicros returns the current time in microseconds since the
	// Unix epoch. Successive calls may return equal or smaller values; the
	// replica keeps its own timestamps monotonic.
	RealtimeMicros() uint64
}

// Uint128 is a 128-bit unsigned integer, as used for client ids and
// checksums. Lo holds the low 64 bits.
type Uint128 struct {
	Lo, Hi uint64
}

// IsZero reports whether u is zero.
func (u Uint128) IsZero() bool { return u.Lo == 0 && u.Hi == 0 }
