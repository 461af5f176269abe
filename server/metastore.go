package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

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

// sessionOp is the body of a Register or Logout journal entry: the client
// id and the user id.
const sessionOpBytes = 16 + 4

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
	view     atomic.Pointer[metadata.Machine]
	host     *group.MetaHost
	storage  *metaFileStorage
	loop     hostLoop
	sessions *sessionTable
	// request numbers the server's submissions to the group; reply is the
	// answer to the one being submitted.
	request uint64
	reply   *group.Reply
	// opened is set once the group is open: ops applied before are the
	// journal's, replayed at boot.
	opened    bool
	replayed  int
	replayErr error
	// failed is set when the group's storage failed; later writes are
	// refused.
	failed error
}

// metaGroupClient is the client id of the server's submissions to the
// metadata group: its operations are sessionless in the group (the
// session table answers duplicates before a request reaches it), so one
// id serves every caller and the request number pairs a reply with its
// submission.
var metaGroupClient = vsr.Uint128{Lo: 1}

// metaMessageBodyMax is the largest metadata request body a prepare of
// the metadata group carries (larger ones are answered 4022): above the
// largest a CreateTopic's options allow (100,000 bytes of options, PROTOCOL.md).
const metaMessageBodyMax = 256 << 10

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
	c.ClientsMax = 1
	size := max(uint64(metaMessageBodyMax+vsr.HeaderSize), vsr.HeadersMessageSize(c.JournalSlots))
	size = (size + vsr.SectorSize - 1) / vsr.SectorSize * vsr.SectorSize
	c.MessageSizeMax = uint32(min(size, vsr.MessageSizeMaxLimit))
	c.WALBytesMax = max(c.WALBytesMax, 2*uint64(c.MessageSizeMax))
	c.CheckpointSizeMax = metaCheckpointMax
	return c
}

// openMetaStore recovers the metadata: the group restores its checkpoint
// and applies the journal's ops after it, in order.
func openMetaStore(s *Server) (*metaStore, error) {
	m := &metaStore{
		s:        s,
		writer:   s.shards[0],
		sessions: newSessionTable(int(s.cfg.Metadata.ClientsTableMax), int(s.cfg.Metadata.ClientsPerUserMax)),
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
func (m *metaStore) Applied(_ *metadata.Machine, op, timestamp uint64, _ uint8, _ []byte, effects []metadata.Effect) {
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
	for _, effect := range effects {
		if err := m.s.parts.applyEffect(m.writer, effect, op); err != nil {
			m.s.log.Error("metadata effect failed", zap.Uint64("op", op), zap.Error(err))
		}
	}
}

// Deliver implements group.Replies: the answer to the submission.
func (m *metaStore) Deliver(r group.Reply) {
	if r.Request == m.request {
		m.reply = &r
	}
}

// submitLocked sequences one operation through the metadata group:
// journal (synced), commit, apply, effects, all as one task on shard 0,
// the metadata writer. The caller holds m.mu for writing (so concurrent
// writers queue on the lock, in order) and waits for the task; it is a
// goroutine, never a shard task.
func (m *metaStore) submitLocked(operation uint8, body []byte) (op uint64, reply []byte, err error) {
	if callErr := m.writer.Call(func() { op, reply, err = m.submitOnWriter(operation, body) }); callErr != nil {
		return 0, nil, fmt.Errorf("%w: %v", errStorage, callErr)
	}
	return op, reply, err
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

// submitOnWriter is submitLocked's task on shard 0. Effects on partitions
// owned by other shards wait for those shards: shard 0 carrying out a
// metadata effect is the one task that may wait for another shard (no
// other shard ever waits, so there is no cycle; LOCKS.md).
func (m *metaStore) submitOnWriter(operation uint8, body []byte) (op uint64, reply []byte, err error) {
	m.writer.AssertOwner()
	if m.failed != nil {
		return 0, nil, m.failed
	}
	groupOp := operation
	switch wire.Operation(operation) {
	case wire.OpRegister:
		groupOp = group.OperationRegister
	case wire.OpLogout:
		groupOp = group.OperationLogout
	}
	checkpointBefore := m.host.Replica().CheckpointOp()
	m.request++
	m.reply = nil
	m.loop.enter()
	m.host.Submit(metaGroupClient, m.request, groupOp, body)
	m.loop.leave()
	r := m.reply
	m.reply = nil
	if err := m.host.Err(); err != nil {
		// The group stops committing after a storage failure (the journal
		// may hold a torn prepare): refuse metadata writes until restart.
		m.failed = fmt.Errorf("%w: %v", errStorage, err)
		m.s.log.Error("metadata storage failed; metadata writes are refused until restart", zap.Error(err))
		if r == nil || r.Disposition != vsr.DispositionNone {
			return 0, nil, m.failed
		}
	}
	switch {
	case r == nil:
		return 0, nil, fmt.Errorf("%w: the metadata group did not answer request %d", errStorage, m.request)
	case r.Disposition == vsr.DispositionTooLarge:
		return 0, nil, fmt.Errorf("%w: %d bytes", errMetaTooLarge, len(body))
	case r.Disposition == vsr.DispositionOverloaded:
		return 0, nil, fmt.Errorf("%w: %s", errJournalFull, r.Disposition)
	case r.Disposition != vsr.DispositionNone:
		return 0, nil, fmt.Errorf("%w: the metadata group answered %s", errStorage, r.Disposition)
	}
	if cp := m.host.Replica().CheckpointOp(); cp != checkpointBefore {
		m.s.metrics.metadataCheckpoints.Inc()
		m.s.log.Debug("metadata checkpoint", zap.Uint64("op", cp))
	}
	switch groupOp {
	case group.OperationRegister, group.OperationLogout:
		// Sessions belong to connections; the state machine does not
		// hold them, and the read view stays as it was.
	default:
		if err := m.publishLocked(); err != nil {
			m.s.log.Error("metadata read view not republished", zap.Uint64("op", r.Op), zap.Error(err))
		}
	}
	return r.Op, r.Body, nil
}

// errJournalFull refuses an operation because the metadata journal is full
// and the checkpoint that would make room is not taken; nothing was
// journaled.
var errJournalFull = errors.New("metadata journal full")

// encodeSessionOp builds the body of a Register or Logout entry.
func encodeSessionOp(client wire.Uint128, userID uint32) []byte {
	b := make([]byte, sessionOpBytes)
	binary.LittleEndian.PutUint64(b[0:], client.Lo)
	binary.LittleEndian.PutUint64(b[8:], client.Hi)
	binary.LittleEndian.PutUint32(b[16:], userID)
	return b
}

// close closes the journal.
func (m *metaStore) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.onWriter(m.storage.close)
}

// releaseSession ends the session of a closed connection.
func (m *metaStore) releaseSession(client wire.Uint128, connID uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions.releaseLocked(client, connID)
}
