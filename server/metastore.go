package server

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/vsr"
)

// errStorage wraps a failure to make a metadata operation durable. The
// operation's outcome is unknown to the client, and the server stops
// accepting metadata writes (the journal may hold a torn entry).
var errStorage = errors.New("metadata storage failed")

// metaStore is the metadata plane: the metadata group's host (a group
// of one on a single node, server/group's MetaHost) on shard 0, the only
// shard that commits metadata. Every operation is submitted to the group,
// which journals it in metadata/journal.wal (synced), commits it, applies
// it to the metadata state machine and carries out its effects on disk
// before the reply; the group checkpoints into snapshot.bin.
//
// Group commit: the journal syncs asynchronously (metaFileStorage), so a
// submission returns once its prepare is written, and the submitter waits
// for its reply (a metaWaiter) holding no lock while shard 0 goes on
// preparing the operations of others; one sync covers every prepare
// written before it. The machine is shard 0's alone (ops apply there, as
// their syncs end); every other goroutine reads the read view published
// after each batch of commits, before the batch's replies are handed out.
// mu orders the writers' checks and submissions (LOCKS.md).
type metaStore struct {
	s *Server
	// writer is shard 0, the only writer of the metadata: every
	// operation is submitted, applied and carried out by a task there.
	writer *shard.Shard

	mu sync.RWMutex
	// machine is the group's state machine: only shard 0 touches it
	// (and the boot, before anything is served).
	machine *metadata.Machine
	// view is an immutable copy of machine, republished after every
	// batch of committed changes: readers on any goroutine (shard) load
	// it (DESIGN.md decision 9, the Go form of left-right).
	view    atomic.Pointer[metadata.Machine]
	host    *group.MetaHost
	storage *metaFileStorage
	loop    hostLoop
	// bindings are the connections bound to the group's sessions.
	bindings *bindingTable
	// request numbers the server's own submissions to the group. The
	// fields below are shard 0's: waiters are the submissions waiting for
	// their answers, ready the answers picked since the last settle (handed
	// out once the view is published), evicted the sessions the group ended
	// meanwhile (a register past a bound), whose connections settle
	// unbinds.
	request uint64
	waiters []*metaWaiter
	ready   []metaAnswer
	evicted []vsr.Uint128
	// checkpointOp is the checkpoint last counted.
	checkpointOp uint64
	// sealTimer flushes the seals of an idle group (flushSeals).
	sealTimer shard.TimerID
	// changed is set when an op applied to the machine since the read
	// view was last published.
	changed bool
	// opened is set once the group is open: ops applied before are the
	// journal's, replayed at boot.
	opened    bool
	replayed  int
	replayErr error
	// failed is set when the group's storage failed; later writes are
	// refused.
	failed error
}

// metaWaiter is one submission waiting for its answer: the host's answer
// with the submission's ticket (group.Reply.Ticket: the host answers
// every submission exactly once); ch receives it (buffered: shard 0 never
// blocks).
type metaWaiter struct {
	ticket uint64
	ch     chan metaResult
}

// metaResult is what a submission came to: the group's answer, or err (a
// storage failure, or the store closing).
type metaResult struct {
	reply group.Reply
	err   error
}

// metaAnswer is a reply picked for a waiter, not handed out yet.
type metaAnswer struct {
	w *metaWaiter
	r metaResult
}

// metaGroupClient is the client id of the server's own submissions to the
// metadata group (group.OperationInternal: sessionless, so one id serves
// every caller and the request number pairs a reply with its submission).
// Clients' ids are random and never this one.
var metaGroupClient = vsr.Uint128{Lo: 1}

// metaMessageBodyMax is the largest metadata request body a prepare of
// the metadata group carries (larger ones are answered 4022): above the
// largest a CreateTopic's options allow (100,000 bytes of options, PROTOCOL.md).
const metaMessageBodyMax = 256 << 10

// metaSealFlushInterval is how soon an idle metadata group makes the
// seals of its latest ops durable (vsr.Config.SealLazily: a busy group's
// seals ride the next op's sync).
const metaSealFlushInterval = 100 * time.Millisecond

// metaClientRepliesMax is how many committed replies a session caches for
// duplicates (PROTOCOL.md §1.9: the reference server keeps a ring of 5).
const metaClientRepliesMax = 5

// metaRequestQueueMax is how many metadata requests queue behind the
// group's full pipeline before one is answered 58 (overloaded).
const metaRequestQueueMax = 1024

// metaCheckpointMax bounds one metadata checkpoint (the whole state).
const metaCheckpointMax = 64 << 20

// metaReplicaConfig is the replica configuration of the metadata group of
// one: every prepare persisted, a checkpoint before the journal's slots
// run out.
func metaReplicaConfig(cfg config.Metadata) vsr.Config {
	c := vsr.DefaultConfig(0, 1, 0)
	c.Group = group.MetaGroupID
	c.Durability = vsr.Persisted
	c.JournalSlots = uint64(cfg.JournalSlots)
	c.PipelinePrepareMax = uint32(min(8, c.JournalSlots/4))
	// Concurrent metadata requests queue behind a full pipeline (the
	// writers once queued on the metadata lock): they share the syncs.
	c.RequestQueueMax = metaRequestQueueMax
	c.ClientsMax = cfg.ClientsTableMax
	c.ClientsPerOwnerMax = min(cfg.ClientsPerUserMax, cfg.ClientsTableMax)
	c.ClientRepliesMax = metaClientRepliesMax
	c.ClientTableBytesMax = uint64(cfg.ClientsTableBytesMax)
	size := max(uint64(metaMessageBodyMax+vsr.HeaderSize), vsr.HeadersMessageSize(c.JournalSlots))
	size = (size + vsr.SectorSize - 1) / vsr.SectorSize * vsr.SectorSize
	c.MessageSizeMax = uint32(min(size, vsr.MessageSizeMaxLimit))
	c.WALBytesMax = max(c.WALBytesMax, 2*uint64(c.MessageSizeMax))
	c.CheckpointSizeMax = metaCheckpointMax
	// One sync per op, not two: the seal rides the next op's sync, or
	// the idle flush (metaSealFlushInterval).
	c.SealLazily = true
	return c
}

// openMetaStore recovers the metadata: the group restores its checkpoint
// and applies the journal's ops after it, in order.
func openMetaStore(s *Server) (*metaStore, error) {
	m := &metaStore{
		s:        s,
		writer:   s.shards[0],
		bindings: newBindingTable(),
	}
	var err error
	// The group lives on shard 0, the metadata writer: it is opened,
	// written and closed by tasks there, through shard 0's IO engine.
	if callErr := m.writer.Call(func() { err = m.openGroup() }); callErr != nil {
		return nil, callErr
	}
	if err != nil {
		return nil, err
	}
	if err := m.publishLocked(); err != nil {
		return nil, errors.Join(err, m.onWriter(m.storage.close))
	}
	timer, err := m.writer.Every(metaSealFlushInterval, m.flushSeals)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("metadata seal flush timer: %w", err), m.onWriter(m.storage.close))
	}
	m.sealTimer = timer
	return m, nil
}

// openGroup opens the metadata group's files and host on shard 0.
func (m *metaStore) openGroup() error {
	dir := filepath.Join(m.s.cfg.System.Path, "metadata")
	rc := metaReplicaConfig(m.s.cfg.Metadata)
	st, err := openMetaFileStorage(m.s.shardFS[0], dir, &m.loop, &rc)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	host, err := group.NewMeta(group.MetaConfig{Replica: rc},
		group.MetaBinding{Storage: st, Peers: noPeers{}, Clock: serverClock{m.s}, Effects: m, Replies: m})
	if err != nil {
		return errors.Join(fmt.Errorf("metadata: %w", err), st.close())
	}
	m.storage, m.host, m.machine = st, host, host.Machine()
	for _, name := range st.invalidSuperblocks() {
		m.s.log.Warn("metadata superblock copy invalid; the other copy is used (the next superblock write replaces it)", zap.String("copy", name))
	}
	var openErr error
	done := false
	m.loop.enter()
	host.Open(func(err error) { openErr, done = err, true })
	m.loop.leave()
	switch {
	case !done:
		openErr = fmt.Errorf("metadata group in %s: open did not complete", dir)
	case openErr == nil && m.replayErr != nil:
		openErr = m.replayErr
	case openErr == nil && host.Err() != nil:
		openErr = host.Err()
	}
	if errors.Is(openErr, vsr.ErrJournalFaulty) {
		// Nothing is cut or rewritten: the journal stays as found.
		openErr = fmt.Errorf("%s: %w", filepath.Join(dir, metaWALFile), openErr)
	}
	if errors.Is(openErr, metadata.ErrCheckpointVersion) {
		// An older build's checkpoint (its partitions' groups named by
		// their ids): refused, naming the file, with no migration.
		openErr = fmt.Errorf("%s: %w", filepath.Join(dir, metaSnapshotFile), openErr)
	}
	if openErr != nil {
		return errors.Join(fmt.Errorf("metadata group in %s: %w", dir, openErr), st.close())
	}
	m.opened = true
	m.checkpointOp = host.Replica().CheckpointOp()
	// From now on the journal syncs asynchronously and every drained
	// host input settles (hands out its answers).
	ring, _ := m.s.shardFS[0].(asyncDrainer)
	if ring != nil && ring.WaitAsync() != nil {
		ring = nil // not a ring of its own: the goroutine syncs
	}
	st.startAsync(ring, m.writer.Submit)
	st.synced = m.s.metrics.metadataSyncs
	m.loop.settled = m.settle
	r := host.Replica()
	m.s.log.Info("metadata recovered", zap.Uint64("checkpoint_op", r.CheckpointOp()),
		zap.Int("replayed", m.replayed), zap.Uint64("last_op", r.OpNumber()))
	return nil
}

// publishLocked republishes the read view from the machine. The caller
// is shard 0 (settle), or the only goroutine, at open.
func (m *metaStore) publishLocked() error {
	return m.publishStateLocked(m.machine.Checkpoint())
}

// publishStateLocked publishes a view restored from state, the machine's
// current checkpoint encoding.
func (m *metaStore) publishStateLocked(state []byte) error {
	view := metadata.New()
	if err := view.Restore(state); err != nil {
		return fmt.Errorf("publish metadata view: %w", err)
	}
	m.view.Store(view)
	return nil
}

// snapshot returns the latest published read view. It must not be
// modified; it stays valid (and unchanged) for as long as it is held.
func (m *metaStore) snapshot() *metadata.Machine { return m.view.Load() }

// Applied implements group.MetaEffects: the effects of a committed op on
// disk. At boot (the journal's ops above the checkpoint, applied again by
// the group's open) they are only recorded: the partition set reconciles
// the disk with the final state after the replay.
func (m *metaStore) Applied(_ *metadata.Machine, op, timestamp uint64, operation uint8, _ []byte, effects []metadata.Effect) {
	if !m.opened {
		m.replayed++
		for _, effect := range effects {
			m.s.parts.recordReplayed(effect, timestamp)
			if err := m.s.parts.applyEffect(m.writer, effect, op); err != nil && m.replayErr == nil {
				m.replayErr = err
			}
		}
		return
	}
	m.s.metrics.metadataOps.Inc()
	if operation != group.OperationLogout {
		m.changed = true
	}
	for _, effect := range effects {
		if err := m.s.parts.applyEffect(m.writer, effect, op); err != nil {
			m.s.log.Error("metadata effect failed", zap.Uint64("op", op), zap.Error(err))
		}
	}
}

// Deliver implements group.Replies: the answer to a waiting submission,
// by its ticket (picked now, handed out by settle), and the evictions of
// other clients' sessions (notices, ticket 0). A submission the host
// answered because its replica's storage failed gets the failure.
func (m *metaStore) Deliver(r group.Reply) {
	if r.Ticket == 0 {
		if r.Evicted {
			m.evicted = append(m.evicted, r.Client)
		}
		return
	}
	for i, w := range m.waiters {
		if w.ticket != r.Ticket {
			continue
		}
		m.waiters = append(m.waiters[:i], m.waiters[i+1:]...)
		res := metaResult{reply: r}
		if r.Abandon == group.AbandonFailed {
			res = metaResult{err: fmt.Errorf("%w: %v", errStorage, m.host.Err())}
		}
		m.ready = append(m.ready, metaAnswer{w: w, r: res})
		return
	}
}

// settle runs on shard 0 whenever a host input has drained: it records a
// storage failure (answering every waiter with it), counts a checkpoint,
// republishes the read view when the machine changed, and only then hands
// out the answers picked meanwhile: a client that got its reply reads a
// view holding its op.
func (m *metaStore) settle() {
	if !m.opened {
		return
	}
	if err := m.host.Err(); err != nil && m.failed == nil {
		// The group stops committing after a storage failure (the journal
		// may hold a torn prepare): refuse metadata writes until restart.
		m.failed = fmt.Errorf("%w: %v", errStorage, err)
		m.s.log.Error("metadata storage failed; metadata writes are refused until restart", zap.Error(err))
	}
	if cp := m.host.Replica().CheckpointOp(); cp != m.checkpointOp {
		m.checkpointOp = cp
		m.s.metrics.metadataCheckpoints.Inc()
		m.s.log.Debug("metadata checkpoint", zap.Uint64("op", cp))
	}
	if m.changed {
		// The machine changed (a session op leaves it as it was, and the
		// read view with it).
		m.changed = false
		if err := m.publishLocked(); err != nil {
			m.s.log.Error("metadata read view not republished", zap.Error(err))
		}
	}
	for _, client := range m.evicted {
		m.bindings.unbind(wire.Uint128{Lo: client.Lo, Hi: client.Hi})
	}
	clear(m.evicted)
	m.evicted = m.evicted[:0]
	if m.failed != nil {
		m.failWaiters(m.failed)
	}
	for _, a := range m.ready {
		a.w.ch <- a.r
	}
	clear(m.ready)
	m.ready = m.ready[:0]
}

// failWaiters answers every waiting submission with err (a storage
// failure, the store closing): nothing will commit them here.
func (m *metaStore) failWaiters(err error) {
	for _, w := range m.waiters {
		m.ready = append(m.ready, metaAnswer{w: w, r: metaResult{err: err}})
	}
	clear(m.waiters)
	m.waiters = m.waiters[:0]
}

// submitLocked commits one operation of the server's own through the
// metadata group (group.OperationInternal: sessionless) and waits for its
// reply: journal (synced), commit, apply, effects, on shard 0, the
// metadata writer. The caller holds m.mu for writing across the wait (the
// server's own bookkeeping: its checks and its commit see no other
// writer's submission in between) and is a goroutine, never a shard task.
func (m *metaStore) submitLocked(operation uint8, body []byte) (op uint64, reply []byte, err error) {
	var w *metaWaiter
	callErr := m.writer.Call(func() {
		m.request++
		request := m.request
		w, err = m.submitOnWriter(func() uint64 {
			return m.host.SubmitInternal(metaGroupClient, request, operation, body)
		})
	})
	if callErr != nil {
		return 0, nil, fmt.Errorf("%w: %v", errStorage, callErr)
	}
	var r group.Reply
	if err == nil {
		r, err = m.await(w)
	}
	if err == nil && r.Disposition != vsr.DispositionNone {
		err = m.dispositionErr(r, len(body))
	}
	if err != nil {
		return 0, nil, err
	}
	return r.Op, r.Body, nil
}

// startRequestLocked submits one client request to the metadata group's
// session (exactly-once: a duplicate is answered from the cached reply,
// Replayed) and returns the waiter of its answer: committed, a
// disposition, or Evicted. err is a storage failure or a refusal before
// the group. The caller holds m.mu for writing, and may release it before
// it awaits the answer.
func (m *metaStore) startRequestLocked(req group.MetaRequest) (*metaWaiter, error) {
	var w *metaWaiter
	var err error
	callErr := m.writer.Call(func() {
		w, err = m.submitOnWriter(func() uint64 { return m.host.SubmitRequest(req) })
	})
	if callErr != nil {
		return nil, fmt.Errorf("%w: %v", errStorage, callErr)
	}
	return w, err
}

// await waits for a submission's answer, holding nothing shard 0 needs
// to give it.
func (m *metaStore) await(w *metaWaiter) (group.Reply, error) {
	res := <-w.ch
	return res.reply, res.err
}

// dispositionErr is the error of a disposition answering a server's own
// submission.
func (m *metaStore) dispositionErr(r group.Reply, size int) error {
	switch r.Disposition {
	case vsr.DispositionTooLarge:
		return fmt.Errorf("%w: %d bytes", errMetaTooLarge, size)
	case vsr.DispositionOverloaded:
		return fmt.Errorf("%w: %s", errJournalFull, r.Disposition)
	}
	return fmt.Errorf("%w: the metadata group answered %s", errStorage, r.Disposition)
}

// onWriter runs fn as a task on the metadata writer (shard 0).
func (m *metaStore) onWriter(fn func() error) error {
	var err error
	if callErr := m.writer.Call(func() { err = fn() }); callErr != nil {
		return callErr
	}
	return err
}

// errMetaTooLarge refuses a metadata request too large for a prepare of
// the metadata group.
var errMetaTooLarge = errors.New("metadata request too large")

// submitOnWriter is a submission's task on shard 0: it registers the
// waiter of the answer to the host's next ticket and submit hands the
// request to the host, returning its ticket. The answer comes once the op
// commits (its sync ends) or at once (a disposition, a duplicate's cached
// reply, an eviction), through settle; the host gives the answers inside
// the call to this submission, not to an older one of the same client and
// request (a client's retry on another connection while its first try is
// in flight). Effects on partitions owned by other shards wait for those
// shards: shard 0 carrying out a metadata effect is the one task that may
// wait for another shard (no other shard ever waits, so there is no
// cycle; LOCKS.md).
func (m *metaStore) submitOnWriter(submit func() uint64) (*metaWaiter, error) {
	m.writer.AssertOwner()
	if m.failed != nil {
		return nil, m.failed
	}
	w := &metaWaiter{ticket: m.host.NextTicket(), ch: make(chan metaResult, 1)}
	m.waiters = append(m.waiters, w)
	m.loop.enter()
	if got := submit(); got != w.ticket {
		panic(fmt.Sprintf("server: the metadata host gave ticket %d, NextTicket said %d", got, w.ticket))
	}
	m.loop.leave()
	return w, nil
}

// errJournalFull refuses an operation because the metadata journal is full
// and the checkpoint that would make room is not taken; nothing was
// journaled.
var errJournalFull = errors.New("metadata journal full")

// flushSeals makes the seals of the latest ops durable while the group is
// idle (a task of the writer).
func (m *metaStore) flushSeals() {
	if m.failed != nil || m.host == nil || !m.host.Replica().SealsPending() {
		return
	}
	m.loop.enter()
	m.host.SyncSeals()
	m.loop.leave()
}

// close lets the syncs in flight end (their ops commit and are
// answered), makes the last seals durable and closes the journal; a
// submission still waiting is answered with an error.
func (m *metaStore) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.onWriter(func() error {
		m.writer.Cancel(m.sealTimer)
		err := m.storage.drain()
		m.flushSeals()
		err = errors.Join(err, m.storage.drain())
		m.failWaiters(fmt.Errorf("%w: the metadata store closed", errStorage))
		m.settle()
		return errors.Join(err, m.storage.close())
	})
}

// releaseSession ends the session of a closed connection (PROTOCOL.md
// §2.1: the client-table entry is removed), with a logout committed in the
// session's name. A server shutting down keeps its sessions: a restart
// restores them, and a client that reconnects with its client id finds
// its session and its cached replies.
func (m *metaStore) releaseSession(client wire.Uint128, connID uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.bindings.release(client, connID) || m.s.shuttingDown() {
		return
	}
	if _, err := m.logoutLocked(client); err != nil {
		m.s.log.Debug("logout of a closed connection's session failed", zap.Error(err))
	}
}

// logoutLocked commits the end of client's session, with the session's
// next request number (the server's own logouts: a closed connection, a
// stale consumer-group member). It reports the logout's op (0 when the
// session was gone already). The caller holds m.mu for writing, across
// the commit.
func (m *metaStore) logoutLocked(client wire.Uint128) (op uint64, err error) {
	w, err := m.startLogoutLocked(client)
	if err != nil || w == nil {
		return 0, err
	}
	return m.awaitLogout(w)
}

// startLogoutLocked submits the logout of client's session and returns
// the waiter of its answer (nil when the session was gone already). The
// caller holds m.mu for writing and may release it before awaitLogout.
func (m *metaStore) startLogoutLocked(client wire.Uint128) (w *metaWaiter, err error) {
	id := groupClient(client)
	callErr := m.writer.Call(func() {
		session, ok := m.host.Session(id)
		if !ok {
			return
		}
		req := group.MetaRequest{Client: id, Session: session.Session, Request: session.Request + 1, Operation: group.OperationLogout}
		w, err = m.submitOnWriter(func() uint64 { return m.host.SubmitRequest(req) })
	})
	if callErr != nil {
		return nil, fmt.Errorf("%w: %v", errStorage, callErr)
	}
	return w, err
}

// awaitLogout waits for a logout's answer and reports its op (0: the
// session was gone).
func (m *metaStore) awaitLogout(w *metaWaiter) (op uint64, err error) {
	r, err := m.await(w)
	switch {
	case err != nil || r.Evicted:
	case r.Disposition != vsr.DispositionNone:
		err = fmt.Errorf("%w: logout answered %s", errStorage, r.Disposition)
	default:
		op = r.Op
	}
	return op, err
}

// registerOutcome is what a login's register came to.
type registerOutcome uint8

const (
	registerCommitted registerOutcome = iota // a new session
	registerResumed                          // the client id's session stands: bound again, nothing committed
	registerOtherUser                        // the client id's session is another user's
	registerTableFull                        // full of other users' sessions: refused
	registerFailed                           // not committed (a disposition, or storage)
)

// startRegisterLocked opens client's session for userID in the group's
// client table (one task on the writer: the checks and the submission see
// the same table). A client id whose session exists (a client
// reconnecting, after a restart too) resumes it, so that its duplicates
// are answered from the cached replies: nothing is committed. A register
// into a table full of other users' sessions is refused before commit;
// past the user's bound it ends the user's least recent session (the
// group evicts it). A register submitted returns its waiter (for
// awaitRegister) and no outcome yet. The caller holds m.mu for writing
// and may release it before it awaits.
func (m *metaStore) startRegisterLocked(client wire.Uint128, userID uint32) (w *metaWaiter, session uint64, outcome registerOutcome, err error) {
	id := groupClient(client)
	callErr := m.writer.Call(func() {
		if s, ok := m.host.Session(id); ok {
			session, outcome = s.Session, registerResumed
			if s.Owner != uint64(userID) {
				outcome = registerOtherUser
			}
			return
		}
		if !m.host.Admits(uint64(userID)) {
			outcome = registerTableFull
			return
		}
		w, err = m.submitOnWriter(func() uint64 {
			return m.host.SubmitRequest(group.MetaRequest{Client: id, Operation: group.OperationRegister, Owner: uint64(userID)})
		})
		if err != nil {
			outcome = registerFailed
		}
	})
	if callErr != nil {
		return nil, 0, registerFailed, fmt.Errorf("%w: %v", errStorage, callErr)
	}
	return w, session, outcome, err
}

// awaitRegister waits for a register's answer.
func (m *metaStore) awaitRegister(w *metaWaiter) (session uint64, outcome registerOutcome, err error) {
	r, err := m.await(w)
	if err != nil || r.Disposition != vsr.DispositionNone || r.Session == 0 {
		return 0, registerFailed, err
	}
	return r.Session, registerCommitted, nil
}
