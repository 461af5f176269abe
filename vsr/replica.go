package vsr

import (
	"errors"
	"fmt"

	"github.com/stratabroker/strata/journal"
)

// Status is a replica's protocol status.
type Status uint8

const (
	// StatusNormal serves the current view.
	StatusNormal Status = iota
	// StatusViewChange is electing the primary of a new view.
	StatusViewChange
	// StatusRecovering has lost state and is rebuilding it from peers.
	StatusRecovering
	// StatusOpening has not finished Open.
	StatusOpening
)

// String returns the status name.
func (s Status) String() string {
	switch s {
	case StatusNormal:
		return "normal"
	case StatusViewChange:
		return "view_change"
	case StatusRecovering:
		return "recovering"
	}
	return "opening"
}

// Errors of the replica.
var (
	// ErrNotOpen means the replica was used before Open completed.
	ErrNotOpen = errors.New("vsr: replica not open")
	// ErrStorage wraps a storage failure the replica cannot repair locally.
	ErrStorage = errors.New("vsr: storage")
)

// Replica is one member of a VSR cluster, a pure state machine. Only the
// goroutine that owns it may call its methods: runtime/ in production and
// sim/ in simulation. Inputs are Open, Tick, Step and storage completions;
// effects go through Storage, Network and StateMachine.
type Replica struct {
	cfg     Config
	storage Storage
	network Network
	// announcer is the network's CommitAnnouncer, if it is one.
	announcer CommitAnnouncer
	sm        StateMachine
	clock     Clock
	journal   *journal.Journal

	replicationQuorum int
	viewChangeQuorum  int

	status Status
	// Invariant: logView <= view.
	view    uint64
	logView uint64
	// Invariant: commitMin <= commitMax and checkpointOp <= commitMin.
	op        uint64 // highest op in the log
	commitMin uint64 // highest applied op
	commitMax uint64 // highest op known committed
	// checkpointOp is the op of the latest checkpoint; the journal never
	// overwrites an op above it.
	checkpointOp     uint64
	checkpointHeader Header
	checkpointData   []byte
	// Invariant: checkpointChecksum == checksum(checkpointData) when
	// checkpointData is not empty.
	checkpointChecksum Uint128
	// checkpointSize is the size of the durable checkpoint: that of
	// checkpointData, or, while stateMissing, of the checkpoint the
	// superblock names but the replica could not read back.
	checkpointSize uint64
	checkpointArea uint8
	// stateMissing is set when the checkpoint at checkpointOp could not be
	// read back at open: the log above it is intact (the journal chains
	// from the checkpoint's header, which the superblock holds), but the
	// state machine is empty, so nothing is applied until a checkpoint at
	// checkpointOp or later is fetched from a peer (transfer.behind).
	stateMissing bool
	// checkpointWanted is set, with Config.HostCheckpoints, when the
	// replica needs a checkpoint it may not take itself (its journal bytes
	// reached half of WALBytesMax, or its journal window must move to hold
	// a view's log or the next op): the host takes one (CheckpointWanted,
	// CheckpointAt).
	checkpointWanted bool
	rootHeader       Header

	log          log
	clients      clientTable
	requestQueue []*Message
	// queuedBytes sums the encoded sizes of requestQueue's requests: with
	// the prepares above the checkpoint they are what WALBytesMax bounds.
	queuedBytes  uint64
	timestampMax uint64

	// Backup state: the highest op acknowledged to the primary in view.
	ackedOp uint64
	// stuckCommit and stuckRounds track a primary that cannot commit
	// because a prepare body is missing everywhere it asked.
	stuckCommit uint64
	stuckRounds int
	// lastHeadersRequest is the tick of the last RequestHeaders sent.
	lastHeadersRequest uint64
	// lastStartViewRequest is the view and tick of the last
	// RequestStartView sent.
	lastStartViewRequest struct{ view, tick uint64 }

	viewChange viewChangeState
	recovery   recoveryState
	restart    restartState // restart.go
	// local is the host's optional source of local checkpoints newer than
	// the durable one, for a restart of the group only (restart.go,
	// SetLocalCheckpointer); nil for every other host.
	local LocalCheckpointer
	// read is a primary's read rounds (read_index.go).
	read     readIndex
	transfer stateTransfer
	sb       superblockWriter
	// journalSeq is the write sequence of the next journal record.
	journalSeq uint64
	// installWrites counts journal header changes not yet written.
	installWrites int
	// journalDamaged is set at open when the journal shows a hole below
	// records of later ops; the replica then runs the recovery protocol.
	journalDamaged bool
	// logViewLost is set when a transferred checkpoint cut the log of the
	// replica's log view (finishTransfer): ops above the checkpoint that do
	// not chain to it were dropped, and the replica may have acked them in
	// that log view. Its log no longer holds what it acknowledged there, so
	// it must not vote (DoViewChange) with that log view: it recovers a
	// view's log from its peers (startRecovery), which clears the flag. The
	// superblock records the flag (superblockState.LogViewLost), so that a
	// restart recovers too.
	logViewLost bool
	// memoryLost is set while the replica recovers from the loss of its
	// superblock (every copy damaged: Open, openMemoryLost): it forgot its
	// view promise, its log view and what it acknowledged, so it may
	// neither ack nor vote until the recovery protocol, with a quorum of
	// peers that includes the primary of the latest view, gave it a log
	// and a view (viewKept false), and it takes no part in a restart of
	// the group (restart.go). Every superblock written meanwhile records
	// it (superblockFlagMemoryLost), so a restart before the recovery
	// completes starts it again the same way.
	memoryLost bool
	// logViewHead is the head (op and checksum) the log of the log view
	// started at when the replica took it; the journal records of changes
	// name it (changeTag). journalLogView is, at open, the newest such tag
	// of a log view the superblock does not hold (adoptJournalLogView).
	logViewHead    Header
	journalLogView changeTag
	// journalLogViewReplaced is set, at open, when a change of a log view
	// the superblock does not hold replaced an op of the log.
	journalLogViewReplaced bool
	// journalOwnHead is, at open, the highest head above the checkpoint
	// that a journal record of a change of the durable log view names:
	// the log of that log view reached it when the replica took it, and
	// within one log view a log only grows (adoptJournalLogView).
	journalOwnHead Header
	// journalStrays lists, at open, the ops the journal holds above the
	// log's chain (dropStrays).
	journalStrays []uint64
	syncs         syncState

	timers timers

	// lastError is the first storage error the replica could not handle.
	lastError error
	// foreignGroup counts messages of this cluster addressed to another
	// group, dropped by Step.
	foreignGroup uint64
	// abdicating: the host cannot serve the state machine; the replica
	// starts no view of its own (abdicate.go). abdications counts the
	// views it handed on.
	abdicating  bool
	abdications uint64
	// applied remembers the checksums of recently applied ops (invariants
	// builds only): an applied op's header never changes.
	applied []appliedMark
	// keep is the op whose header a group that releases applied ops keeps
	// for its host's checkpoint (KeepForCheckpoint).
	keep uint64
	// announcement is OnCommitAnnouncement's message, reused.
	announcement Message
}

// NewReplica checks cfg and returns a replica that must be opened with Open
// before it takes part in the protocol.
func NewReplica(cfg Config, storage Storage, network Network, sm StateMachine, clock Clock) (*Replica, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if storage == nil || network == nil || sm == nil || clock == nil {
		return nil, fmt.Errorf("%w: nil dependency", ErrConfig)
	}
	if HeadersMessageSize(cfg.JournalSlots) > uint64(cfg.MessageSizeMax) {
		return nil, fmt.Errorf("%w: a DoViewChange of %d journal slots of headers (%d bytes) exceeds message size max %d", ErrConfig, cfg.JournalSlots, HeadersMessageSize(cfg.JournalSlots), cfg.MessageSizeMax)
	}
	for _, z := range []Zone{ZoneSuperblock, ZoneWALHeaders, ZoneWALPrepares, ZoneCheckpoint} {
		if storage.ZoneSize(z) < cfg.ZoneSize(z) {
			return nil, fmt.Errorf("%w: zone %d holds %d bytes, need %d", ErrConfig, z, storage.ZoneSize(z), cfg.ZoneSize(z))
		}
	}
	r := &Replica{
		cfg:               cfg,
		sm:                sm,
		clock:             clock,
		replicationQuorum: ReplicationQuorum(int(cfg.ReplicaCount)),
		viewChangeQuorum:  ViewChangeQuorum(int(cfg.ReplicaCount)),
		status:            StatusOpening,
	}
	// Every storage completion and every message sent passes the
	// replica's assertions (assert.go).
	r.storage = assertedStorage{storage, r}
	r.network = assertedNetwork{network, r}
	r.announcer, _ = network.(CommitAnnouncer)
	var prepares journal.Device = zoneDevice{r.storage, ZoneWALPrepares}
	if rr, ok := storage.(RecordReader); ok {
		prepares = recordZoneDevice{zoneDevice{r.storage, ZoneWALPrepares}, rr}
	}
	j, err := journal.New(journal.Config{Slots: cfg.JournalSlots, PrepareSlotSize: uint64(cfg.MessageSizeMax)},
		zoneDevice{r.storage, ZoneWALHeaders}, prepares)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	r.journal = j
	r.rootHeader = rootHeader(cfg.Cluster, cfg.Group)
	r.checkpointHeader = r.rootHeader
	r.log.init(cfg.JournalSlots)
	r.clients.init(int(cfg.ClientsMax))
	r.clients.perOwnerMax = int(cfg.ClientsPerOwnerMax)
	r.clients.repliesMax = max(int(cfg.ClientRepliesMax), 1)
	r.clients.bytesMax = cfg.clientTableBytesMax()
	r.timers.init(&r.cfg)
	return r, nil
}

// rootHeader returns the header of op 0, the root of every log's chain. It
// names the group, so that no log of one group chains onto another's.
func rootHeader(cluster, group uint64) Header {
	m := Message{Header: Header{Command: CommandPrepare, Cluster: cluster, Group: group, Operation: OperationRoot}}
	m.Seal()
	return m.Header
}

// zoneDevice adapts one Storage zone to journal.Device.
type zoneDevice struct {
	storage Storage
	zone    Zone
}

func (d zoneDevice) Read(offset uint64, buf []byte, done func(error)) {
	d.storage.Read(d.zone, offset, buf, done)
}

func (d zoneDevice) Write(offset uint64, data []byte, done func(error)) {
	d.storage.Write(d.zone, offset, data, done)
}

// RecordReader is an optional interface of a Storage: ReadRecord reads the
// journal record that starts at offset of zone (a WAL prepare slot), of at
// most max bytes, as journal.RecordReader says, so that a journal open
// does not read every slot whole (a slot is MessageSizeMax bytes). The
// completion rules are Read's.
type RecordReader interface {
	ReadRecord(zone Zone, offset, max uint64, done func(buf []byte, err error))
}

// recordZoneDevice is the prepare zone of a Storage that reads records.
type recordZoneDevice struct {
	zoneDevice
	rr RecordReader
}

func (d recordZoneDevice) ReadRecord(offset, max uint64, done func([]byte, error)) {
	r := d.storage.(assertedStorage).r
	d.rr.ReadRecord(d.zone, offset, max, func(buf []byte, err error) {
		before := r.mark()
		done(buf, err)
		r.assertInput(before)
	})
}

// Index returns the replica's index.
func (r *Replica) Index() uint8 { return r.cfg.ReplicaIndex }

// Status returns the replica's protocol status.
func (r *Replica) Status() Status { return r.status }

// View returns the current view number.
func (r *Replica) View() uint64 { return r.view }

// LogView returns the last view in which the replica's status was normal.
func (r *Replica) LogView() uint64 { return r.logView }

// OpNumber returns the highest op in the replica's log.
func (r *Replica) OpNumber() uint64 { return r.op }

// CommitNumber returns the highest op the replica has applied.
func (r *Replica) CommitNumber() uint64 { return r.commitMin }

// CommitMax returns the highest op the replica knows to be committed.
func (r *Replica) CommitMax() uint64 { return r.commitMax }

// HoldsLog reports whether the replica holds the prepare (with its body)
// of every op above its commit number: a replica that recovered only
// headers, or still repairs, does not.
func (r *Replica) HoldsLog() bool {
	for op := r.commitMin + 1; op <= r.op && op-r.commitMin <= r.cfg.JournalSlots; op++ {
		if r.log.prepare(op) == nil {
			return false
		}
	}
	return true
}

// CheckpointOp returns the op of the replica's latest checkpoint.
func (r *Replica) CheckpointOp() uint64 { return r.checkpointOp }

// Primary reports whether the replica is the primary of its view and in
// normal status.
func (r *Replica) Primary() bool {
	return r.status == StatusNormal && r.primaryIndex(r.view) == r.cfg.ReplicaIndex
}

// Group returns the replica's consensus group.
func (r *Replica) Group() uint64 { return r.cfg.Group }

// ForeignGroupMessages returns how many messages of this cluster but of
// another group Step dropped (a misrouted message, for the host's metrics).
func (r *Replica) ForeignGroupMessages() uint64 { return r.foreignGroup }

// Err returns the first storage error the replica could not recover from,
// or nil. A replica with an error stops acknowledging and voting.
func (r *Replica) Err() error { return r.lastError }

// CommittedEntry is an applied op as the commit-prefix checker sees it.
type CommittedEntry struct {
	Op        uint64
	Operation uint8
	Checksum  Uint128
	Body      []byte
}

// Committed returns the applied op at op if the journal still holds it
// (ops from CheckpointOp+1, or older ones not yet overwritten, up to
// CommitNumber). The body aliases replica memory: read, do not keep.
func (r *Replica) Committed(op uint64) (CommittedEntry, bool) {
	if op == 0 || op > r.commitMin {
		return CommittedEntry{}, false
	}
	p := r.log.prepare(op)
	if p == nil {
		return CommittedEntry{}, false
	}
	return CommittedEntry{Op: op, Operation: p.Operation, Checksum: p.Checksum, Body: p.Body}, true
}

func (r *Replica) primaryIndex(view uint64) uint8 {
	return PrimaryIndex(view, r.cfg.Group, r.cfg.ReplicaCount)
}

// PrimaryIndex returns the primary of view in group: (view + group) %
// replicaCount, so that groups whose views are all 0 are led by different
// replicas (group 0 by replica 0, as before groups existed).
func PrimaryIndex(view, group uint64, replicaCount uint8) uint8 {
	n := uint64(replicaCount)
	return uint8((view%n + group%n) % n)
}

func (r *Replica) isPrimaryOf(view uint64) bool {
	return r.primaryIndex(view) == r.cfg.ReplicaIndex
}

func (r *Replica) solo() bool { return r.cfg.ReplicaCount == 1 }

func (r *Replica) persisted() bool { return r.cfg.Durability == Persisted }

// fail records an unrecoverable storage error; the replica stops acking
// and voting (it fences itself) but keeps answering nothing wrong.
func (r *Replica) fail(err error) {
	if r.lastError == nil {
		r.lastError = fmt.Errorf("%w: %w", ErrStorage, err)
	}
}

// Tick advances the replica's timeouts by one tick.
func (r *Replica) Tick() {
	if r.status == StatusOpening || r.lastError != nil {
		return
	}
	defer r.assertTick(r.mark())
	r.timers.tick()
	switch r.status {
	case StatusNormal:
		if r.Primary() {
			if r.timers.commitHeartbeat.fired() {
				r.sendCommitHeartbeat()
			}
			r.tickReadRounds()
			if r.timers.prepare.fired() && !r.checkStuck() {
				r.resendUncommitted()
			}
		} else if r.timers.normalHeartbeat.fired() {
			r.startViewChange(r.view + 1)
		}
		if r.timers.repair.fired() {
			r.repair()
		}
	case StatusViewChange:
		if r.timers.viewChange.fired() {
			r.viewChangeTimeout()
		}
	case StatusRecovering:
		if r.timers.recovery.fired() {
			r.sendRecovery()
		}
	}
}

// Step handles one message from a peer or a client. The replica does not
// keep m beyond the call (it clones what it stores).
func (r *Replica) Step(m *Message) {
	if m == nil {
		return
	}
	if m.Cluster != r.cfg.Cluster || (!m.Valid() && !(r.cfg.Bugs.Has(BugAcceptCorruptBody) && m.validHeader())) {
		return
	}
	r.step(m)
}

// Request hands the replica a client request that its host built and
// sealed (Message.Seal) in this process: it is handled as Step handles a
// request, without verifying again the checksums Seal just computed (a
// batch of up to 64 MiB is checksummed once on its way to the prepare).
func (r *Replica) Request(m *Message) {
	if m == nil || m.Command != CommandRequest || m.Cluster != r.cfg.Cluster || int(m.Size) != HeaderSize+len(m.Body) {
		return
	}
	r.step(m)
}

func (r *Replica) step(m *Message) {
	if m.Group != r.cfg.Group {
		r.foreignGroup++
		return
	}
	if r.status == StatusOpening || r.lastError != nil {
		if m.Command == CommandRequest {
			r.answer(m, DispositionNotPrimary)
		}
		return
	}
	defer r.assertInput(r.mark())
	if m.Command != CommandRequest && m.Replica >= r.cfg.ReplicaCount {
		return
	}
	// A prepare keeps the index of the primary that made it, which may be
	// this replica when a peer sends it back for repair.
	if m.Command != CommandRequest && m.Command != CommandPrepare && m.Replica == r.cfg.ReplicaIndex {
		return
	}
	switch m.Command {
	case CommandRecovery:
		r.onRecovery(m)
		return
	case CommandRecoveryResponse:
		r.onRecoveryResponse(m)
		return
	case CommandCheckpoint:
		// A recovering replica may need a checkpoint before it can hold
		// the cluster's log.
		r.onCheckpoint(m)
		return
	}
	if r.status == StatusRecovering {
		if m.Command == CommandRequest {
			r.answer(m, DispositionViewChange)
		}
		return
	}
	switch m.Command {
	case CommandRequest:
		r.onRequest(m)
	case CommandPrepare:
		r.onPrepare(m)
	case CommandPrepareOk:
		r.onPrepareOk(m)
	case CommandCommit:
		r.onCommit(m)
	case CommandCommitOk:
		r.onCommitOk(m)
	case CommandStartViewChange:
		r.onStartViewChange(m)
	case CommandDoViewChange:
		r.onDoViewChange(m)
	case CommandStartView:
		r.onStartView(m)
	case CommandRequestStartView:
		r.onRequestStartView(m)
	case CommandRequestPrepare:
		r.onRequestPrepare(m)
	case CommandRequestHeaders:
		r.onRequestHeaders(m)
	case CommandHeaders:
		r.onHeaders(m)
	case CommandRequestCheckpoint:
		r.onRequestCheckpoint(m)
	case CommandCheckpoint:
		r.onCheckpoint(m)
	}
}

// stamp marks m as this replica's: its cluster, group and index.
func (r *Replica) stamp(m *Message) {
	m.Cluster = r.cfg.Cluster
	m.Group = r.cfg.Group
	m.Replica = r.cfg.ReplicaIndex
}

// send seals m as coming from this replica and sends it to replica to.
func (r *Replica) send(to uint8, m *Message) {
	r.stamp(m)
	m.Seal()
	r.network.SendToReplica(to, m)
}

// broadcast sends a copy of m to every other replica.
func (r *Replica) broadcast(m *Message) {
	r.stamp(m)
	m.Seal()
	for i := uint8(0); i < r.cfg.ReplicaCount; i++ {
		if i != r.cfg.ReplicaIndex {
			r.network.SendToReplica(i, m.Clone())
		}
	}
}

// header returns the header of op if the replica knows it.
func (r *Replica) header(op uint64) (*Header, bool) {
	if op == 0 {
		return &r.rootHeader, true
	}
	if h, ok := r.log.header(op); ok {
		return h, true
	}
	if op == r.checkpointOp && r.checkpointHeader.Op == op {
		return &r.checkpointHeader, true
	}
	return nil, false
}

// assertState checks the cheap invariants of the replica's state after
// every input (always on; the invariants build adds the expensive ones).
func (r *Replica) assertState() {
	if r.status == StatusOpening {
		return
	}
	if r.logView > r.view {
		panic(fmt.Sprintf("vsr: log view %d above view %d", r.logView, r.view))
	}
	if r.checkpointOp > r.commitMin || r.commitMin > r.commitMax || r.commitMin > r.op {
		panic(fmt.Sprintf("vsr: checkpoint %d, commit min %d, commit max %d, op %d out of order", r.checkpointOp, r.commitMin, r.commitMax, r.op))
	}
	if r.op > r.opPrepareMax() {
		panic(fmt.Sprintf("vsr: op %d beyond the journal window of checkpoint %d", r.op, r.checkpointOp))
	}
	if r.status == StatusNormal && r.isPrimaryOf(r.view) && (r.logView != r.view || r.commitMax > r.op) {
		panic(fmt.Sprintf("vsr: normal primary with log view %d in view %d, commit %d past op %d", r.logView, r.view, r.commitMax, r.op))
	}
	if r.stateMissing && (r.commitMin != r.checkpointOp || !(r.transfer.behind || r.transfer.installing)) {
		panic(fmt.Sprintf("vsr: missing state at checkpoint %d with commit %d, not fetching it", r.checkpointOp, r.commitMin))
	}
}
