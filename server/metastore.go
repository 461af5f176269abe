package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/server/metadata"
)

// errStorage wraps a failure to make a metadata operation durable. The
// operation's outcome is unknown to the client, and the server stops
// accepting metadata writes (the journal may hold a torn entry).
var errStorage = errors.New("metadata storage failed")

// sessionOp is the body of a Register or Logout journal entry: the client
// id and the user id.
const sessionOpBytes = 16 + 4

// metaStore is the single-node sequencer of the metadata plane: it
// numbers and timestamps each operation, makes it durable in
// metadata/journal.wal, applies it to the metadata state machine and
// carries out the effects on disk. One lock serialises writes; reads take
// it shared.
type metaStore struct {
	s *Server
	// writer is shard 0, the only writer of the metadata: every
	// operation is journaled, applied and carried out by a task there.
	writer *shard.Shard

	mu      sync.RWMutex
	machine *metadata.Machine
	// view is an immutable copy of machine, republished after every
	// committed change: readers on any goroutine (shard) load it without
	// taking mu (DESIGN.md decision 9, the Go form of left-right). Only
	// the writer, under mu, touches machine itself.
	view     atomic.Pointer[metadata.Machine]
	journal  *metaJournal
	sessions *sessionTable
	// lastOp and lastTimestamp are the latest sequenced operation.
	lastOp        uint64
	lastTimestamp uint64
	// failed is set when a journal write failed; later writes are refused.
	failed error
}

// openMetaStore recovers the metadata: snapshot, then the journal's
// entries after it, each applied in order.
func openMetaStore(s *Server) (*metaStore, error) {
	m := &metaStore{
		s:        s,
		writer:   s.shards[0],
		machine:  metadata.New(),
		sessions: newSessionTable(int(s.cfg.Metadata.ClientsTableMax), int(s.cfg.Metadata.ClientsPerUserMax)),
	}
	var journal *metaJournal
	var err error
	// The journal lives on shard 0, the metadata writer: it is opened,
	// replayed, written and closed by tasks there, through shard 0's IO
	// engine.
	if callErr := m.writer.Call(func() { journal, err = openMetaJournal(s, m) }); callErr != nil {
		return nil, callErr
	}
	if err != nil {
		return nil, err
	}
	m.journal = journal
	if err := m.publishLocked(); err != nil {
		return nil, errors.Join(err, m.onWriter(journal.close))
	}
	return m, nil
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

// restore installs a checkpoint found at open.
func (m *metaStore) restore(op uint64, state []byte) error {
	if err := m.machine.Restore(state); err != nil {
		return fmt.Errorf("restore metadata snapshot: %w", err)
	}
	m.lastOp = op
	return nil
}

// replay re-applies one journal entry found at open. Effects on disk are
// not carried out here: the partition set reconciles the disk with the
// final state after the replay.
func (m *metaStore) replay(op, timestamp uint64, operation uint8, body []byte) error {
	if op != m.lastOp+1 {
		return fmt.Errorf("%w: metadata journal jumps from op %d to %d", errStorage, m.lastOp, op)
	}
	m.lastOp, m.lastTimestamp = op, timestamp
	switch wire.Operation(operation) {
	case wire.OpRegister, wire.OpLogout:
		// Sessions belong to connections, which did not survive the restart.
		return nil
	}
	m.machine.Apply(op, timestamp, operation, body)
	for _, effect := range m.machine.TakeEffects() {
		m.s.parts.recordReplayed(effect, timestamp)
		if err := m.s.parts.applyEffect(m.writer, effect, op); err != nil {
			return err
		}
	}
	return nil
}

// submitLocked sequences one operation: journal (synced), apply, effects,
// all as one task on shard 0, the metadata writer. The caller holds m.mu
// for writing (so concurrent writers queue on the lock, in order) and
// waits for the task; it is a goroutine, never a shard task.
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

// submitOnWriter is submitLocked's task on shard 0. Effects on partitions
// owned by other shards wait for those shards: shard 0 carrying out a
// metadata effect is the one task that may wait for another shard (no
// other shard ever waits, so there is no cycle; LOCKS.md).
func (m *metaStore) submitOnWriter(operation uint8, body []byte) (op uint64, reply []byte, err error) {
	m.writer.AssertOwner()
	if m.failed != nil {
		return 0, nil, m.failed
	}
	// The journal may be full whatever filled it (session entries, a
	// checkpoint that failed, a journal replayed full at boot): make room
	// before the append, which would refuse the entry otherwise.
	if err := m.checkpointIfFullOnWriter(nil); err != nil {
		m.s.log.Error("metadata journal full and its checkpoint failed; the operation is refused and the checkpoint retried with the next one", zap.Error(err))
		return 0, nil, fmt.Errorf("%w: %w", errJournalFull, err)
	}
	op = m.lastOp + 1
	timestamp := m.s.nowMicros()
	if timestamp <= m.lastTimestamp {
		timestamp = m.lastTimestamp + 1
	}
	if err := m.journal.append(op, timestamp, operation, body); err != nil {
		m.failed = fmt.Errorf("%w: %v", errStorage, err)
		m.s.log.Error("metadata journal write failed; metadata writes are refused until restart", zap.Error(err))
		return 0, nil, m.failed
	}
	m.lastOp, m.lastTimestamp = op, timestamp
	m.s.metrics.metadataOps.Inc()
	// state is the machine's encoding after op when op changed it; a
	// session entry leaves the machine (and so the read view) as it was.
	var state []byte
	switch wire.Operation(operation) {
	case wire.OpRegister, wire.OpLogout:
		// Sessions belong to connections; the state machine does not
		// hold them.
	default:
		reply = m.machine.Apply(op, timestamp, operation, body)
		for _, effect := range m.machine.TakeEffects() {
			if err := m.s.parts.applyEffect(m.writer, effect, op); err != nil {
				m.s.log.Error("metadata effect failed", zap.Uint64("op", op), zap.Error(err))
			}
		}
		// One encoding of the state serves the read view and, when the
		// journal is full, the checkpoint.
		state = m.machine.Checkpoint()
		if err := m.publishStateLocked(state); err != nil {
			m.s.log.Error("metadata read view not republished", zap.Uint64("op", op), zap.Error(err))
		}
	}
	// Every operation, whatever its kind, takes the checkpoint the
	// journal needs: the op is durable already, so a failed checkpoint is
	// only logged and retried before the next append.
	if err := m.checkpointIfFullOnWriter(state); err != nil {
		m.s.log.Error("metadata checkpoint failed; retried before the next metadata write", zap.Uint64("op", op), zap.Error(err))
	}
	return op, reply, nil
}

// errJournalFull refuses an operation because the metadata journal is full
// and the checkpoint that would empty it failed; nothing was journaled,
// and the next operation tries the checkpoint again.
var errJournalFull = errors.New("metadata journal full")

// checkpointIfFullOnWriter takes a checkpoint when the journal's slots are
// used up: the machine's state as of the last journaled op goes to
// snapshot.bin and the journal is emptied. state is the machine's current
// encoding when the caller has it (nil: encoded here). It runs on the
// writer with mu held for writing (or alone, at boot).
func (m *metaStore) checkpointIfFullOnWriter(state []byte) error {
	m.writer.AssertOwner()
	if !m.journal.needsCheckpoint() {
		return nil
	}
	if state == nil {
		state = m.machine.Checkpoint()
	}
	if err := m.journal.checkpoint(m.lastOp, state); err != nil {
		return err
	}
	m.s.metrics.metadataCheckpoints.Inc()
	m.s.log.Debug("metadata checkpoint", zap.Uint64("op", m.lastOp), zap.Int("state_bytes", len(state)))
	return nil
}

// checkpointIfFull is checkpointIfFullOnWriter as a task on the writer,
// for the boot path: a journal replayed full (written by a server that
// did not checkpoint after session entries) is emptied before the server
// serves, once the replayed operations have been carried out on disk. A
// failed checkpoint does not stop the boot (messages are still served):
// it is logged, and the next metadata write tries again.
func (m *metaStore) checkpointIfFull() error {
	return m.onWriter(func() error {
		if !m.journal.needsCheckpoint() {
			return nil
		}
		if err := m.checkpointIfFullOnWriter(nil); err != nil {
			m.s.log.Error("metadata journal full at boot and its checkpoint failed; retried before the next metadata write", zap.Error(err))
			return nil
		}
		m.s.log.Warn("metadata journal was full at boot; checkpoint taken", zap.Uint64("op", m.lastOp))
		return nil
	})
}

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
	return m.onWriter(m.journal.close)
}

// releaseSession ends the session of a closed connection.
func (m *metaStore) releaseSession(client wire.Uint128, connID uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions.releaseLocked(client, connID)
}
