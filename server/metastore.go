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
// before the reply; the group checkpoints into snapshot.bin. One lock
// serialises writes; reads take it shared.
type metaStore struct {
	s *Server
	// writer is shard 0, the only writer of the metadata: every
	// operation is submitted, applied and carried out by a task there.
	writer *shard.Shard

	mu      sync.RWMutex
	machine *metadata.Machine
	// view is an immutable copy of machine, republished after every
	// committed change: readers on any goroutine (shard) load it without
	// taking mu (DESIGN.md decision 9, the Go form of left-right). Only
	// the writer, under mu, touches machine itself.
	view    atomic.Pointer[metadata.Machine]
	host    *group.MetaHost
	storage *metaFileStorage
	loop    hostLoop
	// bindings are the connections bound to the group's sessions.
	bindings *bindingTable
	// request numbers the server's own submissions to the group; want
	// picks the answer to the submission under way out of the group's
	// replies, and reply is it. evicted collects the sessions the group
	// ended meanwhile (a register past a bound), whose connections are
	// unbound.
	request uint64
	want    func(group.Reply) bool
	reply   *group.Reply
	evicted []vsr.Uint128
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
	c.RequestQueueMax = 0
	c.ClientsMax = cfg.ClientsTableMax
	c.ClientsPerOwnerMax = min(cfg.ClientsPerUserMax, cfg.ClientsTableMax)
	c.ClientRepliesMax = metaClientRepliesMax
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
	if openErr != nil {
		return errors.Join(fmt.Errorf("metadata group in %s: %w", dir, openErr), st.close())
	}
	m.opened = true
	r := host.Replica()
	m.s.log.Info("metadata recovered", zap.Uint64("checkpoint_op", r.CheckpointOp()),
		zap.Int("replayed", m.replayed), zap.Uint64("last_op", r.OpNumber()))
	return nil
}

// publishLocked republishes the read view from the machine. The caller
// holds mu for writing (or is the only goroutine, at open).
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

// Deliver implements group.Replies: the answer to the submission under
// way, and the evictions of other clients' sessions.
func (m *metaStore) Deliver(r group.Reply) {
	switch {
	case m.want != nil && m.want(r):
		m.reply = &r
	case r.Evicted:
		m.evicted = append(m.evicted, r.Client)
	}
}

// submitLocked commits one operation of the server's own through the
// metadata group (group.OperationInternal: sessionless): journal (synced),
// commit, apply, effects, all as one task on shard 0, the metadata
// writer. The caller holds m.mu for writing (so concurrent writers queue
// on the lock, in order) and waits for the task; it is a goroutine, never
// a shard task.
func (m *metaStore) submitLocked(operation uint8, body []byte) (op uint64, reply []byte, err error) {
	var r group.Reply
	callErr := m.writer.Call(func() {
		m.request++
		request := m.request
		r, err = m.submitOnWriter(func(x group.Reply) bool { return x.Client == metaGroupClient && x.Request == request }, func() {
			m.host.SubmitInternal(metaGroupClient, request, operation, body)
		})
	})
	if callErr != nil {
		return 0, nil, fmt.Errorf("%w: %v", errStorage, callErr)
	}
	if err == nil && r.Disposition != vsr.DispositionNone {
		err = m.dispositionErr(r, len(body))
	}
	if err != nil {
		return 0, nil, err
	}
	return r.Op, r.Body, nil
}

// submitRequestLocked runs one client request through the metadata
// group's session (exactly-once: a duplicate is answered from the cached
// reply, Replayed) and returns the group's answer: committed, a
// disposition, or Evicted. err is a storage failure or a refusal before
// the group. The caller holds m.mu for writing.
func (m *metaStore) submitRequestLocked(req group.MetaRequest) (group.Reply, error) {
	var r group.Reply
	var err error
	callErr := m.writer.Call(func() {
		r, err = m.submitOnWriter(func(x group.Reply) bool {
			return x.Client == req.Client && (x.Evicted || x.Request == req.Request)
		}, func() { m.host.SubmitRequest(req) })
	})
	if callErr != nil {
		return group.Reply{}, fmt.Errorf("%w: %v", errStorage, callErr)
	}
	return r, err
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

// submitOnWriter is a submission's task on shard 0: submit hands the
// request to the host, and want picks its answer. Effects on partitions
// owned by other shards wait for those shards: shard 0 carrying out a
// metadata effect is the one task that may wait for another shard (no
// other shard ever waits, so there is no cycle; LOCKS.md). The sessions
// the group ended meanwhile are unbound.
func (m *metaStore) submitOnWriter(want func(group.Reply) bool, submit func()) (group.Reply, error) {
	m.writer.AssertOwner()
	if m.failed != nil {
		return group.Reply{}, m.failed
	}
	checkpointBefore := m.host.Replica().CheckpointOp()
	m.want, m.reply = want, nil
	m.loop.enter()
	submit()
	m.loop.leave()
	r := m.reply
	m.want, m.reply = nil, nil
	for _, client := range m.evicted {
		m.bindings.unbind(wire.Uint128{Lo: client.Lo, Hi: client.Hi})
	}
	m.evicted = m.evicted[:0]
	if err := m.host.Err(); err != nil {
		// The group stops committing after a storage failure (the journal
		// may hold a torn prepare): refuse metadata writes until restart.
		m.failed = fmt.Errorf("%w: %v", errStorage, err)
		m.s.log.Error("metadata storage failed; metadata writes are refused until restart", zap.Error(err))
		if r == nil || r.Disposition != vsr.DispositionNone {
			return group.Reply{}, m.failed
		}
	}
	if r == nil {
		return group.Reply{}, fmt.Errorf("%w: the metadata group did not answer", errStorage)
	}
	if cp := m.host.Replica().CheckpointOp(); cp != checkpointBefore {
		m.s.metrics.metadataCheckpoints.Inc()
		m.s.log.Debug("metadata checkpoint", zap.Uint64("op", cp))
	}
	if m.changed {
		// The machine changed (a session op leaves it as it was, and the
		// read view with it).
		m.changed = false
		if err := m.publishLocked(); err != nil {
			m.s.log.Error("metadata read view not republished", zap.Uint64("op", r.Op), zap.Error(err))
		}
	}
	return *r, nil
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
	if err := m.host.Err(); err != nil && m.failed == nil {
		m.failed = fmt.Errorf("%w: %v", errStorage, err)
		m.s.log.Error("metadata storage failed; metadata writes are refused until restart", zap.Error(err))
	}
}

// close makes the last seals durable and closes the journal.
func (m *metaStore) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.onWriter(func() error {
		m.writer.Cancel(m.sealTimer)
		m.flushSeals()
		return m.storage.close()
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
// session was gone already). The caller holds m.mu for writing.
func (m *metaStore) logoutLocked(client wire.Uint128) (op uint64, err error) {
	id := groupClient(client)
	callErr := m.writer.Call(func() {
		session, ok := m.host.Session(id)
		if !ok {
			return
		}
		req := group.MetaRequest{Client: id, Session: session.Session, Request: session.Request + 1, Operation: group.OperationLogout}
		var r group.Reply
		r, err = m.submitOnWriter(func(x group.Reply) bool {
			return x.Client == id && (x.Evicted || x.Request == req.Request)
		}, func() { m.host.SubmitRequest(req) })
		switch {
		case err != nil || r.Evicted:
		case r.Disposition != vsr.DispositionNone:
			err = fmt.Errorf("%w: logout answered %s", errStorage, r.Disposition)
		default:
			op = r.Op
		}
	})
	if callErr != nil {
		return 0, fmt.Errorf("%w: %v", errStorage, callErr)
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

// registerLocked opens client's session for userID in the group's client
// table (one task on the writer: the checks and the commit see the same
// table). A client id whose session exists (a client reconnecting, after
// a restart too) resumes it, so that its duplicates are answered from the
// cached replies: nothing is committed. A register into a table full of
// other users' sessions is refused before commit; past the user's bound
// it ends the user's least recent session (the group evicts it). The
// caller holds m.mu for writing and binds the connection.
func (m *metaStore) registerLocked(client wire.Uint128, userID uint32) (session uint64, outcome registerOutcome, err error) {
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
		var r group.Reply
		r, err = m.submitOnWriter(func(x group.Reply) bool { return x.Client == id && !x.Evicted }, func() {
			m.host.SubmitRequest(group.MetaRequest{Client: id, Operation: group.OperationRegister, Owner: uint64(userID)})
		})
		switch {
		case err != nil || r.Disposition != vsr.DispositionNone || r.Session == 0:
			outcome = registerFailed
		default:
			session, outcome = r.Session, registerCommitted
		}
	})
	if callErr != nil {
		return 0, registerFailed, fmt.Errorf("%w: %v", errStorage, callErr)
	}
	return session, outcome, err
}
