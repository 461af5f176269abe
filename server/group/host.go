// Package group is the pure host of one consensus group: it composes one
// vsr.Replica with the group's state machine (a partition's
// partition.Machine) and the group's storage, and it is the one
// implementation of "how a partition commits" that production and the
// simulator bind to their worlds.
//
// A Host is driven only by its inputs, all on the goroutine that owns it
// (the owning shard's event loop in production, the run loop in a
// simulation or test): Tick, Step (a message from a peer replica of the
// group), Submit (a client's operation), the completions of the
// vsr.Storage IO it started, and EffectsDurable (the completion of the
// binding's segment sync). It acts only through the interfaces of Binding.
// It imports nothing that touches the OS, starts no goroutine and reads no
// clock but Binding.Clock; the purity lint (vsr/purity_test.go) covers it.
//
// The partition plane is at-least-once: every partition operation is
// sessionless (vsr.Config.Sessionless), so a replay of a request number
// commits again, and nothing is answered from a reply cache. Every
// submitted request gets exactly one Reply from the host it was submitted
// to, carrying the ticket Submit returned: the committed reply from the
// primary, a vsr.Disposition mapped to Iggy's codes (Code), or the host's
// own 57 when vsr leaves it unanswered (waiters.go).
package group

import (
	"errors"
	"fmt"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// ErrConfig reports a Config the host cannot run.
var ErrConfig = errors.New("group: invalid config")

// PartitionOperations are the operations of the partition plane: the
// client ones (send, store and delete offset) and the ones the server
// submits itself (flush thresholds, purge, segment deletion). All are
// sessionless: at-least-once, never deduplicated by request number.
var PartitionOperations = []uint8{
	partition.OperationSendMessages,
	partition.OperationStoreConsumerOffset,
	partition.OperationDeleteConsumerOffset,
	partition.OperationSetFlushThresholds,
	partition.OperationPurgePartition,
	partition.OperationDeleteSegments,
}

// Config configures a partition group's host.
type Config struct {
	// Replica is the group's replica configuration (Cluster, Group,
	// ReplicaCount, ReplicaIndex, Durability, limits). The host adds the
	// partition operations to Replica.Sessionless.
	Replica vsr.Config
	// Partition configures the partition machine (ids, flush thresholds,
	// buffers).
	Partition partition.Config
	// CheckpointEveryOps spaces the group's checkpoints. A partition
	// group's checkpoint is always a partition descriptor (the design's
	// "partition checkpoint C"): the host takes one, at most one at a
	// time, at the first op at least CheckpointEveryOps past the last
	// checkpoint after which the machine holds nothing unflushed (a flush
	// threshold fired, or every batch is flushed), once the binding
	// reports the segment and offset writes up to it synced (Syncer). Its
	// state is the machine's checkpoint without unflushed batches:
	// counters, offsets, thresholds, the flushed frontier, never the log.
	// So a checkpoint never names a segment frontier its files have not
	// synced, and the prepares above it stay in the replica's journal
	// (for a replicated topic in memory, where the recovery protocol gets
	// them back from peers) until a later checkpoint covers them. When
	// three quarters of the journal window pass without one, or the
	// replica wants one (vsr.Replica.CheckpointWanted: its journal bytes
	// reached half of WALBytesMax, or its window must move to hold a
	// view's log), the host flushes everything (Syncer.FlushAll) to take
	// one. Zero means the replica's CheckpointIntervalOps, at most half
	// the journal window.
	//
	// vsr's own checkpoints (the whole machine at an interval) are never
	// used for a partition: their flush frontier is wherever the last
	// flush left it, synced or not, and a replica that lost power then
	// restored a checkpoint naming messages its segments never kept, which
	// fenced the partition
	// (scenarios/bug_broker_checkpoint_before_segment_sync_1495.txt).
	CheckpointEveryOps uint64
	// TransferChunkBytes bounds the bytes of one chunk of a segment state
	// transfer (transfer.go): what a serving replica reads from its files
	// and sends in one message. Zero means as large as a message allows
	// (Replica.MessageSizeMax).
	TransferChunkBytes int
	// RequestTimeoutTicks bounds how long a submitted request waits for
	// its answer while its replica commits nothing (waiters.go): a
	// request that waited that long from the later of its submission and
	// the replica's last commit is answered 57 (TransientNotCommitted)
	// and forgotten; so is a committed reply held that long for its sync
	// since the later of its commit and the last completed sync. Zero
	// means RequestTimeoutHeartbeatsDefault normal heartbeat timeouts
	// (production: 200 ticks of 10 ms). A binding that never ticks the
	// host (a group of one in production) gets no timeouts: its replica
	// answers every request it prepares, or fails.
	RequestTimeoutTicks uint64
}

// Syncer is the part of Effects that serves descriptor checkpoints
// (Config.CheckpointEveryOps).
type Syncer interface {
	// SyncForCheckpoint starts making every segment and offset write
	// carried out so far durable and returns the ticket the binding
	// reports through Host.EffectsDurable (from a later input, never from
	// inside this call) once it is. Ticket 0 (durable at once) is only for
	// a binding whose recovery never trusts a descriptor beyond its files
	// (a group of one, whose files are the truth).
	SyncForCheckpoint() uint64
	// FlushAll writes every unflushed batch of m to segments and marks it
	// flushed, outside any op: the journal window needs a checkpoint before
	// a flush threshold fires.
	FlushAll(m *partition.Machine) error
}

// Observer is implemented by an Effects that wants to see every committed
// op around its apply (metrics, test hooks). body is only valid during
// the call.
type Observer interface {
	BeforeApply(op, timestamp uint64, operation uint8, body []byte)
	AfterApply(op uint64, operation uint8, body []byte, code wire.ErrorCode)
}

// Peers carries messages to the other replicas of the group. It never
// blocks; a message may be lost, delayed, duplicated or reordered. The
// callee owns m.
type Peers interface {
	SendToReplica(replica uint8, m *vsr.Message)
}

// Replies receives the answer to every request: Deliver runs on the
// owning goroutine, from inside a Host method; it must not call back into
// the Host. Reply.Body is the callee's.
type Replies interface {
	Deliver(r Reply)
}

// Effects carries out on the partition's own storage (segments, indexes,
// offset files) what an applied operation asks for. Production binds it to
// the partition runtime's storage.FS code; tests and the simulator to
// memory. Calls run on the owning goroutine, in op order, each before the
// next Apply.
type Effects interface {
	Syncer
	// CarryOut does what e asks for (for EffectFlush: write m.Unflushed()
	// up to e.UpTo to segments, then m.MarkFlushed(e.UpTo)). A failure
	// returns the status to answer the request with and the error; the
	// machine stays applied (the binding fences the partition if its files
	// no longer match). ticket, if not zero, names a sync the reply must
	// wait for (a persisted topic's group commit): the binding reports it
	// through Host.EffectsDurable.
	CarryOut(m *partition.Machine, e partition.Effect) (ticket uint64, status wire.ErrorCode, err error)
	// Reset makes storage match m, a machine that was just restored (from
	// a checkpoint, at open or by state transfer) or starts empty: segment
	// data at or beyond what m holds flushed is discarded, since the ops
	// that made it are applied again (or came with the checkpoint).
	Reset(m *partition.Machine) error
}

// Binding is what a host acts through.
type Binding struct {
	// Storage is the group's consensus storage (superblock, journal,
	// checkpoint zones), sized with Config.Replica.ZoneSize.
	Storage vsr.Storage
	// Peers reaches the group's other replicas.
	Peers Peers
	// Clock gives the primary's prepare timestamps.
	Clock vsr.Clock
	// Effects is the partition's segment and offset storage.
	Effects Effects
	// Replies receives every answer.
	Replies Replies
}

// Reply answers one submitted request.
type Reply struct {
	// Ticket is the ticket of the submission answered (Submit's, or
	// MetaHost.SubmitRequest's); zero for a notice that answers no
	// submission (an eviction of a session nobody here asked about).
	Ticket uint64
	// Client and Request are the request's.
	Client  vsr.Uint128
	Request uint64
	// Operation is the request's operation.
	Operation uint8
	// Op is the op that committed the request (0 if it did not commit).
	Op uint64
	// Disposition is vsr's reason when the request did not commit here.
	Disposition vsr.Disposition
	// Abandon, when set, says why the host answered a request vsr left
	// unanswered (waiters.go); Disposition and Code are then a 57's.
	Abandon Abandon
	// Code is the status for the client: 0 when the operation committed
	// and succeeded; the machine's or a failed effect's code; or the
	// disposition's (Code(d)).
	Code wire.ErrorCode
	// Body is the machine's reply (for a send, the SendConfirmation whose
	// base offset partition.SendConfirmationBaseOffset reads); nil for a
	// disposition.
	Body []byte
	// Err is the storage failure behind a Code from a failed effect.
	Err error
	// The metadata group's sessions (MetaHost) only:
	// Session is the client's session (a register's: the new one).
	Session uint64
	// Tag is the request tag of a committed sessioned request
	// (MetaRequest.Tag).
	Tag vsr.Uint128
	// Replayed marks a duplicate's cached reply: the request committed
	// before (as op Op) and was not applied again.
	Replayed bool
	// Evicted: the client has no session (Iggy's Eviction NoSession).
	Evicted bool
}

// BaseOffset returns a committed send's base offset.
func (r Reply) BaseOffset() (uint64, bool) {
	if r.Operation != partition.OperationSendMessages || r.Code != wire.ErrorCodeOK {
		return 0, false
	}
	return partition.SendConfirmationBaseOffset(r.Body)
}

// Code maps a vsr disposition to the client's status (PROTOCOL.md 1.9):
// 58 TransientNotAccepted for a request never admitted (retry anywhere),
// 57 TransientNotCommitted for an outcome not known here (retry the same
// request), 59 RequestAlreadyApplied, 4022 for a request too large for a
// prepare, 3 for an operation a client may not submit.
func Code(d vsr.Disposition) wire.ErrorCode {
	switch d {
	case vsr.DispositionNone:
		return wire.ErrorCodeOK
	case vsr.DispositionNotPrimary, vsr.DispositionOverloaded:
		return wire.ErrTransientNotAccepted
	case vsr.DispositionViewChange, vsr.DispositionBehind, vsr.DispositionInFlight, vsr.DispositionDropped:
		return wire.ErrTransientNotCommitted
	case vsr.DispositionAlreadyApplied:
		return wire.ErrRequestAlreadyApplied
	case vsr.DispositionTooLarge:
		return wire.ErrTooBigMessagePayload
	}
	return wire.ErrInvalidCommand
}

// Host is one replica of one partition group. Only the goroutine that owns
// it may call its methods.
type Host struct {
	cfg     Config
	b       Binding
	replica *vsr.Replica
	machine *partition.Machine
	sm      machineAdapter
	net     hostNetwork
	// held are committed replies waiting for their sync ticket.
	held    []heldReply
	durable uint64 // highest ticket reported durable
	// failed is the first effect that could not be carried out.
	failed error
	// observer and transfer are Binding.Effects' optional interfaces.
	observer Observer
	transfer SegmentTransfer
	// missing is the fence of a Reset that found the segments short of
	// the machine's flushed history (ErrMissingHistory); fetch repairs it
	// from a peer (segment state transfer, transfer.go).
	missing error
	fetch   segmentFetch
	// candidate is the descriptor checkpoint waiting for its sync;
	// written is the op of the last one handed to the replica (its
	// superblock may not be durable yet).
	candidate checkpointCandidate
	written   uint64
	// flushed is the partition's flushed state (flushed.go).
	flushed flushedState
	// reads are the reads admitted by the replica's read index, waiting
	// for their round and op (Read); ticks counts Tick, for their timeout
	// and the segment transfer's.
	reads        []pendingRead
	ticks        uint64
	servingReads bool
	// bindingFenced: the binding fenced the partition for a reason of its
	// own (SetFenced); the replica abdicates as for Err.
	bindingFenced bool
	// answering keeps the submitted requests not answered yet
	// (waiters.go); durableAt is the tick count when the sync tickets last
	// advanced (a held reply's timeout runs from it).
	answering
	durableAt uint64
}

// SetFenced tells the host whether the binding fenced the partition
// (a storage failure it found outside an effect): while fenced, the
// replica never leads its group (vsr.Replica.SetAbdicating). It is an
// input: a primary that abdicates leaves its view here, and the requests
// it leaves are answered here (waiters.go).
func (h *Host) SetFenced(fenced bool) {
	if h.bindingFenced == fenced {
		return
	}
	h.bindingFenced = fenced
	if h.cfg.Replica.ReplicaCount > 1 {
		h.replica.SetAbdicating(fenced || h.Err() != nil)
	}
	h.answerWaiters()
}

// pendingRead is a read waiting for its ticket to be ready.
type pendingRead struct {
	ticket vsr.ReadTicket
	since  uint64
	done   func(vsr.Disposition)
}

// ReadQueueMax bounds the reads a host keeps waiting for their read round;
// a read beyond it is answered DispositionOverloaded (58: retry).
const ReadQueueMax = 4096

// checkpointCandidate is a descriptor checkpoint of op, whose state was
// captured right after op was applied, to be written once the sync ticket
// is durable.
type checkpointCandidate struct {
	set    bool
	op     uint64
	ticket uint64
	state  []byte
}

// heldReply is a committed reply waiting for its sync ticket; its
// waiter's ticket is reply.Ticket.
type heldReply struct {
	ticket uint64
	reply  Reply
}

// checkpointFrameBytes bounds what vsr adds to a partition's descriptor
// in its checkpoint: magic, the op's header, the client table's length
// and the empty table, with room to spare.
const checkpointFrameBytes = 4 + vsr.HeaderSize + 8 + 4 + 256

// New checks cfg and returns a host that must be opened with Open.
func New(cfg Config, b Binding) (*Host, error) {
	if b.Storage == nil || b.Peers == nil || b.Clock == nil || b.Effects == nil || b.Replies == nil {
		return nil, fmt.Errorf("%w: nil binding", ErrConfig)
	}
	for _, op := range PartitionOperations {
		cfg.Replica.Sessionless.Add(op)
	}
	if cfg.Partition.OffsetsMax == 0 {
		// Every offset must fit the checkpoint area beside the descriptor,
		// the checkpoint's frame and the (sessionless, empty) client table.
		area := int(cfg.Replica.ZoneSize(vsr.ZoneCheckpoint) / 2)
		cfg.Partition.OffsetsMax = max(1, (area-checkpointFrameBytes-partition.DescriptorFixedBytes)/partition.OffsetBytes)
	}
	h := &Host{cfg: cfg, b: b, machine: partition.New(cfg.Partition)}
	h.observer, _ = b.Effects.(Observer)
	h.transfer, _ = b.Effects.(SegmentTransfer)
	if cfg.CheckpointEveryOps == 0 {
		cfg.CheckpointEveryOps = cfg.Replica.CheckpointIntervalOps
		if half := cfg.Replica.JournalSlots / 2; cfg.CheckpointEveryOps == 0 || cfg.CheckpointEveryOps > half {
			cfg.CheckpointEveryOps = max(half, 1)
		}
	}
	if cfg.RequestTimeoutTicks == 0 {
		cfg.RequestTimeoutTicks = max(RequestTimeoutHeartbeatsDefault*cfg.Replica.NormalHeartbeatTimeoutTicks, 1)
	}
	cfg.Replica.HostCheckpoints = true
	h.cfg = cfg
	h.sm = machineAdapter{h: h, needsReset: true}
	h.net = hostNetwork{h: h}
	var network vsr.Network = &h.net
	if a, ok := b.Peers.(Announcer); ok {
		// The binding coalesces commit heartbeats (announce.go).
		network = &announcingNetwork{hostNetwork: h.net, a: a}
	}
	r, err := vsr.NewReplica(cfg.Replica, newInputStorage(b.Storage, h.afterInput), network, &h.sm, b.Clock)
	if err != nil {
		return nil, fmt.Errorf("group %d: %w", cfg.Replica.Group, err)
	}
	h.replica = r
	h.setUpFlushed()
	return h, nil
}

// Open loads the group's durable state and starts the replica; done runs
// once, from a storage completion. A replica restarted in replicated mode
// runs the recovery protocol before it serves.
func (h *Host) Open(done func(error)) {
	h.replica.Open(func(err error) {
		if err == nil && h.sm.needsReset && !h.replica.StateMissing() {
			// Nothing restored and nothing applied: storage starts empty.
			// Not so when the durable checkpoint could not be read back
			// (vsr's stateMissing): the machine is empty only because
			// its state is missing, and resetting to it would truncate
			// the segments the checkpoint's flushed frontier names. The
			// peer's checkpoint the replica installs (Restore) resets
			// storage, and a restart that reads the checkpoint finds the
			// segments whole (2720).
			err = h.sm.reset()
		}
		if err != nil {
			err = fmt.Errorf("group %d replica %d: open: %w", h.cfg.Replica.Group, h.cfg.Replica.ReplicaIndex, err)
		}
		done(err)
	})
}

// inputStorage is the replica's vsr.Storage: Binding.Storage, with the
// host's work after an input (afterInput) run after every completion. A
// completion is an input like Step or Tick: the replica may commit and
// apply there (a persisted primary's own write and sync is often the last
// ack of an op), and the reads that became ready, the checkpoint that is
// due and the abdication of a replica whose partition failed must follow
// from that completion, not from whatever input comes next (the broker
// simulator's seed 42342 saw a read readied by a completion answered
// during the next input, a corrupted message). vsr.Storage never completes
// inside the submitting call, so no completion runs inside another input.
type inputStorage struct {
	s     vsr.Storage
	after func()
}

// newInputStorage wraps s, keeping its optional vsr.RecordReader: after
// runs after every completion.
func newInputStorage(s vsr.Storage, after func()) vsr.Storage {
	in := inputStorage{s: s, after: after}
	if rr, ok := s.(vsr.RecordReader); ok {
		return inputRecordStorage{in, rr}
	}
	return in
}

// inputRecordStorage is an inputStorage over a vsr.RecordReader.
type inputRecordStorage struct {
	inputStorage
	rr vsr.RecordReader
}

func (s inputRecordStorage) ReadRecord(zone vsr.Zone, offset, max uint64, done func([]byte, error)) {
	s.rr.ReadRecord(zone, offset, max, func(buf []byte, err error) {
		done(buf, err)
		s.after()
	})
}

func (s inputStorage) Read(zone vsr.Zone, offset uint64, buf []byte, done func(error)) {
	s.s.Read(zone, offset, buf, func(err error) {
		done(err)
		s.after()
	})
}

func (s inputStorage) Write(zone vsr.Zone, offset uint64, data []byte, done func(error)) {
	s.s.Write(zone, offset, data, func(err error) {
		done(err)
		s.after()
	})
}

func (s inputStorage) Sync(done func(error)) {
	s.s.Sync(func(err error) {
		done(err)
		s.after()
	})
}

func (s inputStorage) ZoneSize(zone vsr.Zone) uint64 { return s.s.ZoneSize(zone) }

// Tick advances the replica's timeouts by one tick.
func (h *Host) Tick() {
	h.ticks++
	h.replica.Tick()
	h.tickFetch()
	h.afterInput()
}

// TicksUntilDue returns how many ticks from now the host's next Tick may
// do more than count (vsr.Replica.TicksUntilDue; 1 while the host itself
// waits on ticks: a read, a segment fetch or a checkpoint in progress),
// or vsr.NoDeadline. A binding of many groups ticks a host only when it is
// due and calls SkipTicks before any other input.
func (h *Host) TicksUntilDue() uint64 {
	if h.fetch.active || len(h.reads) > 0 || h.candidate.set || h.replica.CheckpointWanted() {
		return 1
	}
	due := h.replica.TicksUntilDue()
	if at, ok := h.waiters.nextDeadline(h.cfg.RequestTimeoutTicks, h.commitAt, h.durableAt); ok {
		// The first waiter times out at the Tick that makes ticks reach
		// its deadline (answerWaiters).
		due = min(due, max(at-min(at, h.ticks), 1))
	}
	return due
}

// SkipTicks advances the host by n ticks in which it is not due (n below
// TicksUntilDue), exactly as n calls of Tick would.
func (h *Host) SkipTicks(n uint64) {
	if n == 0 {
		return
	}
	h.ticks += n
	h.replica.SkipTicks(n)
}

// Announce hands the replica a commit heartbeat of replica from that came
// in a coalesced announcement (announce.go), as Step hands it a Commit.
func (h *Host) Announce(from uint8, a Announcement) {
	h.replica.OnCommitAnnouncement(from, a.View, a.Commit, a.CheckpointOp)
	h.afterInput()
}

// Step hands the replica a message from a peer of the group. The host
// does not keep m beyond the call.
func (h *Host) Step(m *vsr.Message) {
	if transferCommand(m.Command) {
		h.stepTransfer(m)
	} else {
		h.replica.Step(m)
	}
	h.afterInput()
}

// Submit hands the replica a client's partition operation and returns its
// ticket. The answer, exactly one, comes through Binding.Replies with that
// ticket (which NextTicket returns before the call), during this call or
// a later input: the committed reply once the op is applied (and, for a
// persisted topic, synced), a disposition, or the host's 57 (waiters.go).
// body is copied.
func (h *Host) Submit(client vsr.Uint128, request uint64, operation uint8, body []byte) (ticket uint64) {
	m := &vsr.Message{Header: vsr.Header{
		Command:   vsr.CommandRequest,
		Cluster:   h.cfg.Replica.Cluster,
		Group:     h.cfg.Replica.Group,
		Replica:   h.cfg.Replica.ReplicaIndex,
		Client:    client,
		Request:   request,
		Operation: operation,
	}, Body: body}
	if sum, ok := h.trustedBodySum(operation, body); ok {
		m.SealBody(sum)
	} else {
		m.Seal()
	}
	// The waiter goes in before the replica sees the request: vsr may
	// answer inside Request.
	ticket, ok := h.waiters.add(waiter{client: client, request: request, operation: operation, checksum: m.Checksum,
		view: h.replica.View(), since: h.ticks})
	if !ok {
		h.answers.Overflow++
		h.b.Replies.Deliver(Reply{Ticket: ticket, Client: client, Request: request, Operation: operation,
			Disposition: vsr.DispositionOverloaded, Code: Code(vsr.DispositionOverloaded)})
		return ticket
	}
	if h.cfg.Replica.Bugs.Has(vsr.BugOffsetStoreBeforeCommit) && operation == partition.OperationStoreConsumerOffset {
		h.plantedApplyBeforeCommit(operation, body)
	}
	h.waiters.submitting = ticket
	h.replica.Request(m)
	h.waiters.submitting = 0
	h.afterInput()
	return ticket
}

// EffectsDurable reports that the binding's sync ticket (and every lower
// one) completed: the committed replies that waited for it are delivered.
func (h *Host) EffectsDurable(ticket uint64) {
	if ticket > h.durable {
		h.durable, h.durableAt = ticket, h.ticks
	}
	kept := h.held[:0]
	for _, r := range h.held {
		if r.ticket <= h.durable {
			h.deliverHeld(r.reply)
		} else {
			kept = append(kept, r)
		}
	}
	clear(h.held[len(kept):])
	h.held = kept
	h.afterInput()
}

// EffectsFailed reports that the binding's sync failed: every reply
// waiting for a sync is answered with code and err (what the sync covered
// is in an unknown state; the binding fences the partition).
func (h *Host) EffectsFailed(code wire.ErrorCode, err error) {
	for _, r := range h.held {
		r.reply.Code, r.reply.Err = code, err
		h.deliverHeld(r.reply)
	}
	clear(h.held)
	h.held = h.held[:0]
	if h.failed == nil {
		h.failed = err
	}
}

// afterInput writes the descriptor checkpoint whose sync completed. It
// runs after every input, outside the replica's apply loop (CheckpointAt
// takes only applied ops).
func (h *Host) afterInput() {
	if h.cfg.Replica.ReplicaCount > 1 {
		// A fenced partition refuses every send and poll: this replica
		// must not lead its group (vsr.Replica.Abdicate says why that is
		// safe). It still acks and votes; its repair (transfer.go) lifts
		// the fence.
		h.replica.SetAbdicating(h.Err() != nil || h.bindingFenced)
	}
	h.answerWaiters()
	h.serveReads()
	h.storeFlushed()
	c := &h.candidate
	if !c.set && h.failed == nil && h.missing == nil && h.replica.CheckpointWanted() && h.replica.CommitNumber() > h.written && !h.replica.Behind() {
		// The replica needs a checkpoint now (its journal bytes, or its
		// window for a view's log or the next op): of the last applied
		// op, flushed and synced first.
		h.considerCheckpoint(h.replica.CommitNumber(), true)
	}
	if !c.set || (c.ticket > h.durable && !h.cfg.Replica.Bugs.Has(vsr.BugCheckpointBeforeSegmentSync)) || h.failed != nil || h.missing != nil {
		return
	}
	if c.op <= h.replica.CheckpointOp() {
		*c = checkpointCandidate{} // a checkpoint at or past it was installed
		return
	}
	if h.replica.CheckpointAt(c.op, c.state) {
		h.written = c.op
		*c = checkpointCandidate{}
	}
}

// considerCheckpoint runs after op's effects (or, wanted, when the
// replica needs a checkpoint of its last applied op): it captures a
// descriptor checkpoint of op when one is due and the machine holds
// nothing unflushed, and starts the sync it waits for. The descriptor is
// written only once that sync completed (afterInput), so it never names
// a flushed message its segments may still lose.
func (h *Host) considerCheckpoint(op uint64, wanted bool) {
	if h.candidate.set || h.failed != nil || h.missing != nil || h.machine.LastOp() != op {
		return
	}
	since := op - max(h.replica.CheckpointOp(), h.written)
	// A persisted group's WAL at half its bound checkpoints at once: the
	// bound pushes requests back (overloaded) until a checkpoint frees
	// the room, and none would come from the op count alone.
	wanted = wanted || (h.cfg.Replica.Durability == vsr.Persisted && since > 0 && h.replica.WALBytes() >= h.cfg.Replica.WALBytesMax/2)
	if since == 0 || (since < h.cfg.CheckpointEveryOps && !wanted) {
		return
	}
	if len(h.machine.Unflushed()) > 0 {
		if since < h.cfg.Replica.JournalSlots*3/4 && !wanted {
			return // the next flush threshold comes first
		}
		if err := h.b.Effects.FlushAll(h.machine); err != nil {
			h.failed = fmt.Errorf("group %d: flush for a checkpoint: %w", h.cfg.Replica.Group, err)
			return
		}
	}
	h.candidate = checkpointCandidate{set: true, op: op, state: h.machine.Checkpoint()}
	h.replica.KeepForCheckpoint(op) // a group of one releases applied ops
	h.candidate.ticket = h.b.Effects.SyncForCheckpoint()
}

// View is the applied state a read may use: every value is that of the
// ops this replica applied, never beyond its commit number, so a poll
// served from it never shows an uncommitted message.
type View interface {
	NextOffset() uint64
	CurrentOffset() (uint64, bool)
	FirstOffset() uint64
	MessagesCount() uint64
	StoredOffset(key partition.ConsumerKey) (uint64, bool)
	StoredOffsets() []partition.StoredOffset
	StartOffset(strategy uint8, value uint64, count uint32, consumer partition.ConsumerKey) (uint64, bool, error)
	PollRange(start uint64, count uint32) (first, last uint64, ok bool)
	FirstUnflushedOffset() (uint64, bool)
	Unflushed() [][]byte
	LastOp() uint64
}

// View returns the applied state, for reads on the owning goroutine.
func (h *Host) View() View { return h.machine }

// Machine returns the partition machine, for the binding on the owning
// goroutine: its effects code flushes the machine's batches
// (Unflushed, MarkFlushed) and its reads use the applied state. Only
// Apply may change anything else.
func (h *Host) Machine() *partition.Machine { return h.machine }

// Err returns the first failure to carry out a committed operation's
// effects (or to reset storage to a restored machine), or nil. The
// machine is ahead of the partition's files from then on: the binding must
// fence the partition (and, as the durability seed says, shut the server
// down); the host itself keeps answering what vsr commits, with the
// failure's status on the op that failed.
//
// A partition whose segments miss the flushed history of a checkpoint it
// restored is fenced too (Err wraps ErrMissingHistory) until a segment
// state transfer from a peer repairs it (SegmentTransfer); then Err is
// nil again.
func (h *Host) Err() error {
	if h.failed != nil {
		return h.failed
	}
	return h.missing
}

// Replica returns the group's replica, for its status and counters.
func (h *Host) Replica() *vsr.Replica { return h.replica }

// Serving reports whether this replica is in a state to serve reads: it
// is the primary in normal status, has applied everything it knows
// committed, and holds the state of what it applied (not waiting for a
// checkpoint: vsr.Replica.Behind; a primary that restarted with an
// unreadable checkpoint counts its ops as applied while its machine is
// empty until a peer's checkpoint is installed). It does not show that the
// primary still leads its view: a primary of an old view that has not
// heard of the new one says true while its state is stale. A read that
// must see every acknowledged write goes through Read.
func (h *Host) Serving() bool {
	r := h.replica
	return r.Primary() && r.CommitNumber() == r.CommitMax() && !r.Behind() && h.missing == nil
}

// Read serves a read that must see every write acknowledged before it
// (a poll, a stored offset, the partition's counters): done runs once, on
// the owning goroutine, with DispositionNone when the caller may read the
// applied state (View, Machine) during the call, or with the reason it may
// not (Code maps it; the reader retries, elsewhere for a 58). done runs
// inside Read when the answer is known at once (always for a group of
// one, which serves what it applied or answers DispositionBehind, as
// ReadNow), else from a later input, after the replica confirmed through
// its read index (vsr.Replica.ReadIndex) that it still led its view after
// the read arrived and applied every op its log held then. A read not
// confirmed within the normal heartbeat timeout (the time after which the
// backups elect a new primary) is answered DispositionViewChange. done may
// call Submit and Read.
func (h *Host) Read(done func(vsr.Disposition)) {
	if d, now := h.ReadNow(); now {
		done(d)
		return
	}
	t, d := h.replica.ReadIndex()
	if d == vsr.DispositionNone {
		if ready, why := h.replica.ReadReady(t); ready || why != vsr.DispositionNone {
			done(why)
			return
		}
		if len(h.reads) >= ReadQueueMax {
			d = vsr.DispositionOverloaded
		}
	}
	if d != vsr.DispositionNone {
		done(d)
		return
	}
	h.reads = append(h.reads, pendingRead{ticket: t, since: h.ticks, done: done})
}

// ReadNow answers a read of a group of one at once: it reports true with
// DispositionNone when the caller may serve the read from applied state
// now, true with a disposition when it may not, and false for a group of
// several replicas, whose reads wait for a read round (Read). A group of
// one is its own quorum: it serves what it applied, with no round trip.
func (h *Host) ReadNow() (vsr.Disposition, bool) {
	if h.cfg.Replica.ReplicaCount > 1 {
		return vsr.DispositionNone, false
	}
	t, d := h.replica.ReadIndex()
	if d != vsr.DispositionNone {
		return d, true
	}
	if ready, why := h.replica.ReadReady(t); ready || why != vsr.DispositionNone {
		return why, true
	}
	return vsr.DispositionBehind, true
}

// serveReads answers the waiting reads whose tickets are ready or can no
// longer be, and those that waited past the timeout.
func (h *Host) serveReads() {
	if len(h.reads) == 0 || h.servingReads {
		return
	}
	h.servingReads = true
	defer func() { h.servingReads = false }()
	timeout := max(h.cfg.Replica.NormalHeartbeatTimeoutTicks, 1)
	for len(h.reads) > 0 {
		// Take the answerable reads out first: done may queue new ones.
		var answered []pendingRead
		var why []vsr.Disposition
		kept := h.reads[:0]
		for _, pr := range h.reads {
			ready, d := h.replica.ReadReady(pr.ticket)
			if !ready && d == vsr.DispositionNone && h.ticks-pr.since >= timeout {
				d = vsr.DispositionViewChange
			}
			if ready || d != vsr.DispositionNone {
				answered = append(answered, pr)
				why = append(why, d)
			} else {
				kept = append(kept, pr)
			}
		}
		clear(h.reads[len(kept):])
		h.reads = kept
		if len(answered) == 0 {
			return
		}
		for i, pr := range answered {
			pr.done(why[i])
		}
	}
}

// machineAdapter is the partition machine as vsr.StateMachine: Apply runs
// the machine and then carries out its effects, as the server's
// applyCommitted seam does; the reply body is the machine's.
type machineAdapter struct {
	h *Host
	// needsReset is set until storage was made to match the machine (the
	// first restore, or the first apply of a machine that starts empty).
	needsReset bool
	// last is the outcome of the latest Apply, for the reply that follows.
	last applyOutcome
}

type applyOutcome struct {
	op     uint64
	ticket uint64
	code   wire.ErrorCode
	err    error
}

func (a *machineAdapter) Apply(op, timestamp uint64, operation uint8, body []byte) []byte {
	h := a.h
	var resetErr error
	if a.needsReset {
		resetErr = a.reset()
	}
	if h.observer != nil {
		h.observer.BeforeApply(op, timestamp, operation, body)
	}
	reply := h.machine.Apply(op, timestamp, operation, body)
	out := applyOutcome{op: op, code: replyStatus(operation, reply)}
	flushed := false
	if resetErr != nil {
		out.code, out.err = wire.ErrCannotSaveMessagesToSegment, resetErr
	}
	for _, e := range h.machine.TakeEffects() {
		if e.Kind == partition.EffectFlush && h.missing != nil {
			// The segments miss history below the machine's flush
			// frontier: a flush would land above the hole, and a log
			// with a hole is a state no binding may reach (segments are
			// append-only and contiguous; production's log cannot append
			// past one). The batches stay in the machine, unflushed, and
			// the flush frontier with them, so the transfer's range
			// (wantedRange) stays put; the first flush after the install
			// writes them (scenarios/bug_broker_fenced_pair_segment_transfer_ticks6000_2845.txt).
			continue
		}
		ticket, code, err := h.b.Effects.CarryOut(h.machine, e)
		flushed = flushed || flushesSegments(e)
		if err != nil && out.err == nil {
			out.code, out.err = code, fmt.Errorf("group %d: op %d: effect %d: %w", h.cfg.Replica.Group, op, e.Kind, err)
		}
		out.ticket = max(out.ticket, ticket)
		if e.Kind == partition.EffectPurged && h.missing != nil && err == nil {
			_ = a.reset() // a purge leaves no history to miss
		}
	}
	if out.err != nil && h.failed == nil {
		h.failed = out.err
	}
	a.last = out
	if h.observer != nil {
		h.observer.AfterApply(op, operation, body, out.code)
	}
	h.considerCheckpoint(op, false)
	h.considerFlushed(op, flushed)
	return reply
}

func (a *machineAdapter) Checkpoint() []byte { return a.h.machine.Checkpoint() }

// Restore installs a checkpoint. vsr's contract is that a failed Restore
// changes nothing; once the machine took the checkpoint, the replica's
// state and the machine's must agree, so storage that cannot be made to
// match (segments that miss flushed history) does not fail the restore:
// it fences the partition (Host.Err) and the binding stops serving it.
// Returning the error here left the machine restored while vsr kept its
// old checkpoint and commit numbers (the simulator's broker workload
// found the replica's checkpoint ahead of its commit).
func (a *machineAdapter) Restore(data []byte) error {
	if err := a.h.machine.Restore(data); err != nil {
		return err
	}
	a.h.dropFlushedCandidate()
	_ = a.reset() // recorded in h.failed
	return nil
}

func (a *machineAdapter) reset() error {
	h := a.h
	a.needsReset = false
	if err := h.b.Effects.Reset(h.machine); err != nil {
		err = fmt.Errorf("group %d: reset storage: %w", h.cfg.Replica.Group, err)
		if errors.Is(err, ErrMissingHistory) {
			h.onMissingHistory(err) // fenced until a peer's segments repair it
			return nil
		}
		if h.failed == nil {
			h.failed = err
		}
		return err
	}
	if h.missing != nil {
		// The segments match the machine now (a purge, or a restore of
		// a checkpoint they hold): nothing left to repair.
		h.missing = nil
		if h.fetch.active {
			h.transfer.DiscardStaged()
		}
		h.fetch = segmentFetch{installs: h.fetch.installs, restarts: h.fetch.restarts}
	}
	return nil
}

// replyStatus is the status a machine reply gives its request (the
// server's seam has the same rule): a send without a confirmation stored
// nothing; the other operations are result-framed.
func replyStatus(operation uint8, reply []byte) wire.ErrorCode {
	if operation == partition.OperationSendMessages {
		if _, ok := partition.SendConfirmationBaseOffset(reply); !ok {
			return wire.ErrInvalidMessagesCount
		}
		return wire.ErrorCodeOK
	}
	_, code, err := wire.SplitResult(reply)
	if err != nil {
		return wire.ErrInvalidCommand
	}
	return code
}

// hostNetwork is the replica's vsr.Network: peers through Binding.Peers,
// client answers turned into Replies.
type hostNetwork struct{ h *Host }

func (n *hostNetwork) SendToReplica(replica uint8, m *vsr.Message) {
	n.h.b.Peers.SendToReplica(replica, m)
}

func (n *hostNetwork) SendToClient(client vsr.Uint128, m *vsr.Message) {
	h := n.h
	if m.Command != vsr.CommandReply {
		return // evictions belong to sessions, which the partition plane has none of
	}
	r := Reply{Client: client, Request: m.Request, Operation: m.Operation, Disposition: m.Disposition}
	if m.Disposition != vsr.DispositionNone {
		r.Code = Code(m.Disposition)
		h.deliver(m.Context, r)
		return
	}
	r.Op = m.Op
	r.Body = m.Body
	r.Code = replyStatus(m.Operation, m.Body)
	last := h.sm.last
	if last.op == m.Op {
		if last.err != nil {
			r.Code, r.Err = last.code, last.err
		}
		if last.ticket > h.durable && last.err == nil && !h.cfg.Replica.Bugs.Has(vsr.BugPersistedReplyBeforeSync) {
			i := h.waiters.match(client, m.Request, m.Context)
			if i < 0 {
				h.answers.Unowed++
				return // nobody here waits for it
			}
			w := &h.waiters.list[i]
			w.held, w.heldAt = true, h.ticks
			r.Ticket = w.ticket
			h.held = append(h.held, heldReply{ticket: last.ticket, reply: r})
			return
		}
	}
	h.deliver(m.Context, r)
}
