package vsr

import (
	"errors"
	"fmt"
)

// Durability selects what a replica must retain before its PrepareOk counts.
type Durability uint8

const (
	// Replicated keeps prepares in memory only; a restarted replica has lost
	// them and runs the recovery protocol before it acks or votes.
	Replicated Durability = iota
	// Persisted writes every prepare to the journal and syncs it before
	// PrepareOk.
	Persisted
)

// String names the durability as the configuration spells it.
func (d Durability) String() string {
	if d == Persisted {
		return "persisted"
	}
	return "replicated"
}

// Limits on configuration values.
const (
	// ReplicaCountMax is the largest supported cluster.
	ReplicaCountMax = 6
	// JournalSlotsMin is the smallest journal.
	JournalSlotsMin = 16
	// JournalSlotsMax is the largest journal.
	JournalSlotsMax = 1 << 16
	// PipelinePrepareMaxLimit bounds Config.PipelinePrepareMax.
	PipelinePrepareMaxLimit = 64
	// ClientsMaxLimit bounds Config.ClientsMax.
	ClientsMaxLimit = 1 << 16
	// RequestQueueMaxLimit bounds Config.RequestQueueMax.
	RequestQueueMaxLimit = 1024
	// headersPerMessageMax bounds the headers carried by one message.
	headersPerMessageMax = 1024
	// repairRequestsPerTickMax bounds the RequestPrepare messages a replica
	// sends in one repair round.
	repairRequestsPerTickMax = 16
)

// HeadersMessageSize is the size of the largest message of headers a
// journal of slots makes: a DoViewChange carries a header per slot (and
// the op below them) and a bit per header saying whether its body is
// present. MessageSizeMax must be at least this.
func HeadersMessageSize(slots uint64) uint64 {
	return HeaderSize + slots*HeaderSize + (slots+7)/8
}

// ErrConfig reports an invalid Config.
var ErrConfig = errors.New("vsr: invalid config")

// Config holds a replica's identity and limits. Timeouts are in ticks.
type Config struct {
	// Cluster identifies the cluster; every message carries it.
	Cluster uint64
	// Group identifies the replica's consensus group within the cluster
	// (one metadata group, one group per partition); every message, the
	// root of the log and the superblock carry it, and the primary of view
	// v is replica (v + Group) % ReplicaCount, so that groups spread their
	// primaries over the replicas.
	Group uint64
	// ReplicaCount is the number of replicas, 1..ReplicaCountMax.
	ReplicaCount uint8
	// ReplicaIndex is this replica's index, 0..ReplicaCount-1.
	ReplicaIndex uint8
	// Durability selects replicated or persisted prepares.
	Durability Durability
	// JournalSlots is the number of prepares the journal holds.
	JournalSlots uint64
	// WALBytesMax bounds the bytes of journaled prepares not yet covered by
	// a checkpoint; reaching it forces a checkpoint and backpressure.
	WALBytesMax uint64
	// MessageSizeMax bounds every message, header included; a multiple of
	// SectorSize.
	MessageSizeMax uint32
	// CheckpointSizeMax bounds a checkpoint (client table and state
	// machine), a multiple of SectorSize; zero means 64 * MessageSizeMax.
	// ZoneCheckpoint holds two of them.
	CheckpointSizeMax uint64
	// PipelinePrepareMax bounds the uncommitted prepares of a primary.
	PipelinePrepareMax uint32
	// RequestQueueMax bounds the requests a primary queues behind a full
	// pipeline; later ones are dropped and the clients retry. Zero queues
	// nothing.
	RequestQueueMax uint32
	// CheckpointIntervalOps is how many applied ops beyond the last
	// checkpoint trigger a new one; zero means the most the journal allows,
	// JournalSlots - 2*PipelinePrepareMax.
	CheckpointIntervalOps uint64
	// ClientsMax bounds the client table; the least recently committed
	// session is evicted beyond it.
	ClientsMax uint32
	// ClientsPerOwnerMax bounds the sessions of one owner (the owner a
	// register names, RegisterBody; the metadata group's owner is the
	// logged-in user), zero for no bound. A register past it ends the
	// owner's own least recently committed session, and so does a register
	// into a full table while the owner holds one: one owner's registers
	// never end another's sessions unless the table is full and the owner
	// holds none (ClientTableAdmits tells a host beforehand).
	ClientsPerOwnerMax uint32
	// ClientRepliesMax is how many committed replies a session caches for
	// duplicates (its latest requests'); zero means 1. A duplicate of a
	// request whose reply is no longer cached is answered
	// DispositionAlreadyApplied.
	ClientRepliesMax uint32
	// ClientTableBytesMax bounds the client table's share of a checkpoint
	// (its sessions and cached replies); zero means half of
	// CheckpointSizeMax. Past it, a commit gives up other sessions' cached
	// replies, least recent first, then their sessions (clientTable.trim),
	// so that the table never makes a checkpoint too large for its area.
	ClientTableBytesMax uint64
	// EndsSession names sessioned operations that end their client's
	// session once applied (a logout): the entry and its cached reply go,
	// and the client's next request is answered with an eviction.
	EndsSession OperationSet
	// CommitHeartbeatTicks is how often an idle primary announces its commit.
	CommitHeartbeatTicks uint64
	// NormalHeartbeatTimeoutTicks is how long a backup waits to hear from
	// the primary before starting a view change.
	NormalHeartbeatTimeoutTicks uint64
	// PrepareTimeoutTicks is how long a primary waits before resending
	// prepares that lack a quorum.
	PrepareTimeoutTicks uint64
	// ViewChangeTimeoutTicks is how long a view change may stall before the
	// replica moves on to the next view.
	ViewChangeTimeoutTicks uint64
	// RepairTimeoutTicks is how often a replica re-requests missing data.
	RepairTimeoutTicks uint64
	// RecoveryTimeoutTicks is how often a recovering replica resends
	// Recovery.
	RecoveryTimeoutTicks uint64
	// Sessionless names the operations that need no session: at-least-once
	// operations (the partition plane's sends and offset stores) that are
	// never deduplicated by request number. A request of one needs no
	// registered client, is never answered from the reply cache, and
	// commits as a new op every time it arrives, a replay of the same
	// request number included; its reply goes to its client id. The other
	// operations keep the client table's exactly-once sessions (the
	// metadata plane). Only operations from OperationUserMin may be named.
	Sessionless OperationSet
	// HostCheckpoints leaves the choice of checkpoints to the host: the
	// replica takes none at an interval or at half of WALBytesMax, and the
	// host calls Replica.CheckpointAt with a state of its own making (a
	// partition's small descriptor, taken once its segments are synced).
	// The journal window still bounds the ops above the last checkpoint:
	// a host that does not checkpoint sees requests held back and then
	// answered Overloaded, never dropped.
	HostCheckpoints bool
	// ReleaseApplied drops a prepare's body once it is applied. Only a
	// replicated group of one may set it: no peer can ask for the body and
	// no restart reloads it, so keeping it only costs memory (the header
	// stays for the chain).
	ReleaseApplied bool
	// RecoverLostSuperblock lets a replica of a group with peers whose
	// superblock copies are all damaged open as a replica that lost its
	// memory and recover from its peers (memory_lost.go), instead of
	// failing Open with ErrSuperblockLost. The host sets it when its state
	// machine's storage follows what vsr restores (a partition's segments
	// are cut back to the restored machine and rebuilt from the ops that
	// follow); a host whose storage does not must keep Open failing.
	RecoverLostSuperblock bool
	// SealLazily lets a persisted group of one count a prepare as held
	// (commit and reply) once the prepare is durable, before its
	// HeaderDurable record (the seal) is: the seal is written at once and
	// made durable by the next sync (the next prepare's, or SyncSeals), so
	// that an op costs one sync instead of two in a row. A restart reloads
	// a durable prepare without its seal (and writes the seal again); what
	// the seal adds is that a later read failure of the prepare's sectors
	// stops the open (ErrJournalFaulty) instead of cutting the log before
	// it, and until the seal is durable that protection is missing for the
	// ops committed since the last sync. Only a persisted group of one may
	// set it: a replica with peers acks only sealed prepares, since its
	// acks are votes.
	SealLazily bool
	// Bugs plants deliberate protocol bugs. Only tests and the simulator's
	// --bug flag set it; production code must leave it zero.
	Bugs BugSet
}

// OperationSet is a set of operation numbers (a bitmap, comparable and
// free of functions so that a Config stays plain data).
type OperationSet [4]uint64

// Add puts operation into the set.
func (s *OperationSet) Add(operation uint8) { s[operation/64] |= 1 << (operation % 64) }

// Has reports whether operation is in the set.
func (s *OperationSet) Has(operation uint8) bool { return s[operation/64]&(1<<(operation%64)) != 0 }

// DefaultConfig returns a Config with the default limits for a replica of a
// cluster of replicaCount.
func DefaultConfig(cluster uint64, replicaCount, replicaIndex uint8) Config {
	return Config{
		Cluster:                     cluster,
		ReplicaCount:                replicaCount,
		ReplicaIndex:                replicaIndex,
		Durability:                  Replicated,
		JournalSlots:                1024,
		WALBytesMax:                 256 << 20,
		MessageSizeMax:              1 << 20,
		PipelinePrepareMax:          8,
		RequestQueueMax:             64,
		ClientsMax:                  64,
		CommitHeartbeatTicks:        10,
		NormalHeartbeatTimeoutTicks: 100,
		PrepareTimeoutTicks:         20,
		ViewChangeTimeoutTicks:      60,
		RepairTimeoutTicks:          20,
		RecoveryTimeoutTicks:        30,
	}
}

// Validate reports the first invalid field of c.
func (c *Config) Validate() error {
	switch {
	case c.ReplicaCount == 0 || c.ReplicaCount > ReplicaCountMax:
		return fmt.Errorf("%w: replica count %d", ErrConfig, c.ReplicaCount)
	case c.ReplicaIndex >= c.ReplicaCount:
		return fmt.Errorf("%w: replica index %d of %d", ErrConfig, c.ReplicaIndex, c.ReplicaCount)
	case c.JournalSlots < JournalSlotsMin || c.JournalSlots > JournalSlotsMax:
		return fmt.Errorf("%w: journal slots %d", ErrConfig, c.JournalSlots)
	case c.PipelinePrepareMax == 0 || c.PipelinePrepareMax > PipelinePrepareMaxLimit:
		return fmt.Errorf("%w: pipeline prepare max %d", ErrConfig, c.PipelinePrepareMax)
	case uint64(c.PipelinePrepareMax)*4 > c.JournalSlots:
		return fmt.Errorf("%w: journal slots %d must be at least 4 * pipeline %d", ErrConfig, c.JournalSlots, c.PipelinePrepareMax)
	case c.MessageSizeMax < 2*SectorSize || c.MessageSizeMax > MessageSizeMaxLimit || c.MessageSizeMax%SectorSize != 0:
		return fmt.Errorf("%w: message size max %d", ErrConfig, c.MessageSizeMax)
	case c.WALBytesMax < 2*uint64(c.MessageSizeMax):
		// A checkpoint starts at half of WALBytesMax, so a prepare of the
		// largest size is admitted once the checkpoint below it is taken.
		return fmt.Errorf("%w: wal bytes max %d below 2 maximal messages of %d", ErrConfig, c.WALBytesMax, c.MessageSizeMax)
	case c.CheckpointSizeMax%SectorSize != 0:
		return fmt.Errorf("%w: checkpoint size max %d not a multiple of %d", ErrConfig, c.CheckpointSizeMax, SectorSize)
	case c.RequestQueueMax > RequestQueueMaxLimit:
		return fmt.Errorf("%w: request queue max %d", ErrConfig, c.RequestQueueMax)
	case c.CheckpointIntervalOps > c.JournalSlots-2*uint64(c.PipelinePrepareMax):
		return fmt.Errorf("%w: checkpoint interval %d beyond journal slots %d - 2 * pipeline %d", ErrConfig, c.CheckpointIntervalOps, c.JournalSlots, c.PipelinePrepareMax)
	case c.ClientsMax == 0 || c.ClientsMax > ClientsMaxLimit:
		return fmt.Errorf("%w: clients max %d", ErrConfig, c.ClientsMax)
	case c.CommitHeartbeatTicks == 0 || c.NormalHeartbeatTimeoutTicks <= c.CommitHeartbeatTicks:
		return fmt.Errorf("%w: heartbeat %d must be below the normal timeout %d", ErrConfig, c.CommitHeartbeatTicks, c.NormalHeartbeatTimeoutTicks)
	case c.PrepareTimeoutTicks == 0 || c.ViewChangeTimeoutTicks == 0 || c.RepairTimeoutTicks == 0 || c.RecoveryTimeoutTicks == 0:
		return fmt.Errorf("%w: zero timeout", ErrConfig)
	case c.Durability > Persisted:
		return fmt.Errorf("%w: durability %d", ErrConfig, c.Durability)
	case c.ReleaseApplied && (c.ReplicaCount != 1 || c.Durability != Replicated):
		return fmt.Errorf("%w: release applied bodies needs a replicated group of one", ErrConfig)
	case c.Sessionless[0]&(1<<OperationUserMin-1) != 0:
		return fmt.Errorf("%w: sessionless operations below %d", ErrConfig, OperationUserMin)
	case c.EndsSession[0]&(1<<OperationUserMin-1) != 0:
		return fmt.Errorf("%w: session-ending operations below %d", ErrConfig, OperationUserMin)
	case c.SealLazily && (c.ReplicaCount != 1 || c.Durability != Persisted):
		return fmt.Errorf("%w: lazy seals need a persisted group of one", ErrConfig)
	case c.ClientRepliesMax > 64:
		return fmt.Errorf("%w: client replies max %d over 64", ErrConfig, c.ClientRepliesMax)
	case c.ClientsPerOwnerMax > c.ClientsMax:
		return fmt.Errorf("%w: clients per owner max %d over clients max %d", ErrConfig, c.ClientsPerOwnerMax, c.ClientsMax)
	case c.ClientTableBytesMax != 0 && (c.ClientTableBytesMax < clientTableBytesMin(c.MessageSizeMax) || c.ClientTableBytesMax > c.checkpointAreaSize()-checkpointFrameBytes):
		return fmt.Errorf("%w: client table bytes max %d outside %d..%d (two maximal replies; the checkpoint area less its frame)",
			ErrConfig, c.ClientTableBytesMax, clientTableBytesMin(c.MessageSizeMax), c.checkpointAreaSize()-checkpointFrameBytes)
	}
	return nil
}

// checkpointIntervalOps is how many applied ops beyond the last checkpoint
// trigger a new one: CheckpointIntervalOps, or at most what leaves room for
// two pipelines of prepares in the journal, so that the primary can always
// keep committing.
func (c *Config) checkpointIntervalOps() uint64 {
	if c.CheckpointIntervalOps > 0 {
		return c.CheckpointIntervalOps
	}
	return c.JournalSlots - 2*uint64(c.PipelinePrepareMax)
}

// ZoneSize returns the bytes a Storage must provide for zone under c; the
// simulator and production size their storage with it. A replicated
// replica never touches the journal zones (its prepares stay in memory),
// so it needs none: only a persisted journal is sized from slots times the
// message size.
func (c *Config) ZoneSize(zone Zone) uint64 {
	switch zone {
	case ZoneSuperblock:
		return superblockCopies * SectorSize
	case ZoneWALHeaders:
		if c.Durability != Persisted {
			return 0
		}
		return c.JournalSlots * SectorSize
	case ZoneWALPrepares:
		if c.Durability != Persisted {
			return 0
		}
		return c.JournalSlots * uint64(c.MessageSizeMax)
	case ZoneCheckpoint:
		return 2 * c.checkpointAreaSize()
	}
	return 0
}

// clientTableBytesMax is the client table's bound (ClientTableBytesMax).
func (c *Config) clientTableBytesMax() int {
	if c.ClientTableBytesMax > 0 {
		return int(c.ClientTableBytesMax)
	}
	return int(max(c.checkpointAreaSize()/2, clientTableBytesMin(c.MessageSizeMax)))
}

// checkpointFrameBytes is what a checkpoint adds to its client table and
// state: magic, its op's header, the table's length (encodeCheckpointState).
const checkpointFrameBytes = 4 + HeaderSize + 8

// checkpointAreaSize is the size of each of the two checkpoint areas.
func (c *Config) checkpointAreaSize() uint64 {
	if c.CheckpointSizeMax > 0 {
		return c.CheckpointSizeMax
	}
	return uint64(c.MessageSizeMax) * 64
}

// BugSet plants protocol bugs for the simulator to catch. It exists only
// for tests and `strata-sim --bug`; production code never sets it, and the
// zero value plants nothing.
type BugSet uint32

const (
	// BugCommitWithoutQuorum commits once any one backup acked.
	BugCommitWithoutQuorum BugSet = 1 << iota
	// BugAckPersistedBeforeSync sends PrepareOk before the journal sync.
	BugAckPersistedBeforeSync
	// BugViewChangeLogByOpOnly picks the view-change log by op alone.
	BugViewChangeLogByOpOnly
	// BugForgetClientTableOnViewChange clears the client table when a view
	// starts.
	BugForgetClientTableOnViewChange
	// BugRecoverWithoutPrimary finishes recovery without waiting for the
	// primary, adopting the shortest log among the responses.
	BugRecoverWithoutPrimary
	// BugAcceptCorruptBody handles a message whose body checksum does not
	// match, as long as its header is intact (a packet corrupted in its
	// body).
	BugAcceptCorruptBody
	// BugVoteBeforeDurableView sends DoViewChange (persisted) before the
	// superblock recording the new view is durable.
	BugVoteBeforeDurableView
	// BugPollPastCommit is a broker-level bug, honoured by the read path of
	// a partition group (the simulator's broker binding): a poll serves the
	// sends the primary prepared above its commit number as if they were
	// committed, at once, without the read index that confirms the
	// primary still leads its view (ReadIndex). vsr itself does nothing
	// different.
	BugPollPastCommit
	// BugCheckpointBeforeSegmentSync is a broker-level bug, honoured by a
	// partition group's host (server/group): a descriptor checkpoint is
	// handed to the replica as soon as it is captured, without waiting for
	// the binding's sync of the segment and offset writes it covers, so the
	// journal history below it is reclaimed while the segments that replace
	// it may still be lost to a power loss.
	BugCheckpointBeforeSegmentSync
	// BugOffsetStoreBeforeCommit is a broker-level bug, honoured by a
	// partition group's host: the primary applies a consumer offset store
	// to its partition machine (and offset file) when the request arrives,
	// at prepare time, before it commits.
	BugOffsetStoreBeforeCommit
	// BugPersistedReplyBeforeSync is a broker-level bug, honoured by a
	// partition group's host: a persisted topic's committed reply is
	// delivered at once instead of after the segment sync (the barrier)
	// its op's effects started.
	BugPersistedReplyBeforeSync
	// BugPartitionOpBeforeTopic is a broker-level bug, honoured by the
	// simulator's broker binding: a node admits a partition operation
	// without looking its topic up in its applied metadata, so a send may
	// commit in a partition group before the metadata group committed the
	// topic's create.
	BugPartitionOpBeforeTopic
	// BugRequestLeftUnanswered is a broker-level bug, honoured by the
	// group hosts (server/group/waiters.go): a host answers no request
	// vsr leaves unanswered (none at the request timeout, none of a
	// replica that left its view or failed), as the hosts did before they
	// kept waiters. vsr itself does nothing different.
	BugRequestLeftUnanswered
)

var bugNames = []struct {
	bug  BugSet
	name string
}{
	{BugCommitWithoutQuorum, "commit-without-quorum"},
	{BugAckPersistedBeforeSync, "ack-persisted-before-sync"},
	{BugViewChangeLogByOpOnly, "view-change-log-by-op-only"},
	{BugForgetClientTableOnViewChange, "forget-client-table-on-view-change"},
	{BugRecoverWithoutPrimary, "recover-without-primary"},
	{BugAcceptCorruptBody, "accept-corrupt-body"},
	{BugVoteBeforeDurableView, "vote-before-durable-view"},
	{BugPollPastCommit, "poll-past-commit"},
	{BugCheckpointBeforeSegmentSync, "wal-reclaimed-before-segment-sync"},
	{BugOffsetStoreBeforeCommit, "offset-store-before-commit"},
	{BugPersistedReplyBeforeSync, "persisted-reply-before-sync"},
	{BugPartitionOpBeforeTopic, "partition-op-before-topic"},
	{BugRequestLeftUnanswered, "request-left-unanswered"},
}

// BugNames lists the planted bug names accepted by ParseBug, in order.
func BugNames() []string {
	names := make([]string, len(bugNames))
	for i, b := range bugNames {
		names[i] = b.name
	}
	return names
}

// ParseBug maps a planted bug name to its BugSet bit.
func ParseBug(name string) (BugSet, error) {
	for _, b := range bugNames {
		if b.name == name {
			return b.bug, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown bug %q", ErrConfig, name)
}

// Has reports whether bug is planted.
func (b BugSet) Has(bug BugSet) bool { return b&bug != 0 }
