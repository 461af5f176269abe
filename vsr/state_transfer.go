package vsr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrCheckpoint reports a checkpoint that cannot be decoded or restored.
var ErrCheckpoint = errors.New("vsr: bad checkpoint")

const checkpointMagic = 0x54504b43 // "CKPT"

// stateTransfer tracks a checkpoint being fetched from a peer.
type stateTransfer struct {
	// behind is set when the ops this replica needs are no longer in the
	// peers' journals, so it must install a checkpoint.
	behind bool
	op     uint64
	sum    Uint128
	total  uint64
	buf    []byte
	// ready holds a complete, verified checkpoint waiting to be installed.
	ready []byte
	// installing is set while a transferred checkpoint is being made
	// durable (finishTransfer restores it).
	installing bool
}

// encodeCheckpoint lays out a checkpoint: magic, the header of its op, the
// client table, then the state machine's bytes.
func (r *Replica) encodeCheckpoint(h *Header) []byte {
	return r.encodeCheckpointState(h, r.sm.Checkpoint())
}

// encodeCheckpointState lays out a checkpoint of op h with the state
// machine's bytes state.
func (r *Replica) encodeCheckpointState(h *Header, state []byte) []byte {
	data := binary.LittleEndian.AppendUint32(nil, checkpointMagic)
	var hb [HeaderSize]byte
	h.Encode(hb[:])
	data = append(data, hb[:]...)
	table := r.clients.encode(nil)
	data = binary.LittleEndian.AppendUint64(data, uint64(len(table)))
	data = append(data, table...)
	return append(data, state...)
}

// checkpointHeaderOf returns the header a checkpoint's bytes name,
// without restoring anything.
func checkpointHeaderOf(data []byte) (Header, error) {
	var h Header
	if len(data) < 4+HeaderSize+8 || binary.LittleEndian.Uint32(data) != checkpointMagic {
		return h, fmt.Errorf("%w: frame", ErrCheckpoint)
	}
	if err := h.Decode(data[4:]); err != nil {
		return h, fmt.Errorf("%w: header: %w", ErrCheckpoint, err)
	}
	if h.Command != CommandPrepare {
		return h, fmt.Errorf("%w: header of a %s", ErrCheckpoint, h.Command)
	}
	return h, nil
}

// restoreCheckpoint replaces the client table and state machine with data
// and returns the checkpoint's header. A checkpoint below opMin would undo
// applied ops and is refused. On error nothing changes.
func (r *Replica) restoreCheckpoint(data []byte, opMin uint64) (Header, error) {
	h, err := checkpointHeaderOf(data)
	if err != nil {
		return h, err
	}
	if h.Op < opMin {
		return h, fmt.Errorf("%w: checkpoint op %d below %d", ErrCheckpoint, h.Op, opMin)
	}
	rest := data[4+HeaderSize:]
	n := binary.LittleEndian.Uint64(rest)
	rest = rest[8:]
	if n > uint64(len(rest)) {
		return h, fmt.Errorf("%w: client table of %d bytes", ErrCheckpoint, n)
	}
	var table clientTable
	table.init(int(r.cfg.ClientsMax))
	table.perOwnerMax = int(r.cfg.ClientsPerOwnerMax)
	table.repliesMax = max(int(r.cfg.ClientRepliesMax), 1)
	table.bytesMax = r.cfg.clientTableBytesMax()
	if _, err := table.decode(rest[:n]); err != nil {
		return h, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := r.sm.Restore(rest[n:]); err != nil {
		return h, fmt.Errorf("%w: state machine: %w", ErrCheckpoint, err)
	}
	r.clients = table
	return h, nil
}

// transferOpMin is the lowest checkpoint op worth installing: one past
// what the replica applied, or the op of its own checkpoint when it could
// not read that back (stateMissing).
func (r *Replica) transferOpMin() uint64 {
	if r.stateMissing {
		return r.commitMin
	}
	return r.commitMin + 1
}

// maybeCheckpoint takes a checkpoint when the journal since the last one
// holds a checkpoint interval of ops or half of WALBytesMax.
func (r *Replica) maybeCheckpoint() {
	if r.sb.checkpoint != nil || r.commitMin == r.checkpointOp {
		return
	}
	if r.cfg.HostCheckpoints {
		// The host chooses its checkpoints by ops; the journal's bytes
		// are the replica's to watch (a host that waited for ops the full
		// journal holds back would wait forever).
		if r.walBytes() >= r.cfg.WALBytesMax/2 {
			r.checkpointWanted = true
		}
		return
	}
	due := r.commitMin-r.checkpointOp >= r.cfg.checkpointIntervalOps()
	if !due && r.walBytes() < r.cfg.WALBytesMax/2 {
		return
	}
	r.checkpointNow()
}

// checkpointNow checkpoints the state at commitMin, if that is newer than
// the checkpoint and no checkpoint write is in flight. Besides the
// interval (maybeCheckpoint), a replica calls it to move its journal
// window (opPrepareMax) forward to hold a view's log.
func (r *Replica) checkpointNow() {
	if r.sb.checkpoint != nil || r.commitMin == r.checkpointOp || r.stateMissing {
		return
	}
	if r.cfg.HostCheckpoints {
		// The state machine's state at commitMin may name effects its
		// storage has not made durable (a partition's segments): only the
		// host knows when a state is safe to record.
		r.checkpointWanted = true
		return
	}
	h, ok := r.header(r.commitMin)
	if !ok {
		panic("vsr: applied op without a header")
	}
	r.writeCheckpoint(*h, r.encodeCheckpoint(h), false)
}

// CheckpointAt checkpoints the state the host captured right after op was
// applied (Config.HostCheckpoints): state is what StateMachine.Restore
// takes back. It returns false, changing nothing, when op is not an
// applied op above the checkpoint whose header the log holds, or when a
// checkpoint is in flight (the host tries again later). The checkpoint
// takes effect once its superblock is durable (CheckpointOp).
func (r *Replica) CheckpointAt(op uint64, state []byte) bool {
	if r.sb.checkpoint != nil || r.stateMissing || op <= r.checkpointOp || op > r.commitMin || r.status != StatusNormal {
		return false
	}
	h, ok := r.header(op)
	if !ok {
		return false
	}
	data := r.encodeCheckpointState(h, state)
	if uint64(len(data)) > r.cfg.checkpointAreaSize() {
		return false
	}
	r.writeCheckpoint(*h, data, false)
	r.checkpointWanted = false
	return true
}

// CheckpointWanted reports, with Config.HostCheckpoints, that the replica
// needs a checkpoint the host has not taken: its journal holds half of
// WALBytesMax, or its journal window must move forward to hold a view's
// log or the next op (pipelineFull, onPrepare). The host takes one at the
// latest applied op it can make durable.
func (r *Replica) CheckpointWanted() bool {
	return r.checkpointWanted && r.sb.checkpoint == nil && r.commitMin > r.checkpointOp
}

// CheckpointPending reports whether a checkpoint is being written.
func (r *Replica) CheckpointPending() bool { return r.sb.checkpoint != nil }

// writeCheckpoint writes data to the area not used by the durable
// checkpoint, syncs it, then records it in the superblock; it takes effect
// when that superblock is durable.
func (r *Replica) writeCheckpoint(h Header, data []byte, transferred bool) {
	if uint64(len(data)) > r.cfg.checkpointAreaSize() {
		r.fail(fmt.Errorf("%w: %d bytes exceed the area of %d", ErrCheckpoint, len(data), r.cfg.checkpointAreaSize()))
		return
	}
	if r.sb.checkpoint != nil || h.Op < r.checkpointOp || (h.Op == r.checkpointOp && !r.stateMissing) {
		panic(fmt.Sprintf("vsr: checkpoint of op %d written over checkpoint %d (pending %v)", h.Op, r.checkpointOp, r.sb.checkpoint != nil))
	}
	c := &pendingCheckpoint{op: h.Op, header: h, data: data, checksum: checksum(data), area: 1 - r.checkpointArea, transferred: transferred}
	r.sb.checkpoint = c
	padded := make([]byte, (uint64(len(data))+SectorSize-1)/SectorSize*SectorSize)
	copy(padded, data)
	r.storage.Write(ZoneCheckpoint, uint64(c.area)*r.cfg.checkpointAreaSize(), padded, func(err error) {
		if err != nil {
			r.fail(fmt.Errorf("checkpoint write: %w", err))
			return
		}
		r.storage.Sync(func(err error) {
			if err != nil {
				r.fail(fmt.Errorf("checkpoint sync: %w", err))
				return
			}
			c.synced = true
			r.requestSuperblock()
		})
	})
}

// requestCheckpoint asks a peer for the next chunk of its checkpoint.
func (r *Replica) requestCheckpoint() {
	if r.transfer.ready != nil {
		r.installTransferred()
		return
	}
	peer := r.primaryIndex(r.view)
	if peer == r.cfg.ReplicaIndex || r.status != StatusNormal || (r.timers.ticks/max(r.cfg.RepairTimeoutTicks, 1))%2 == 1 {
		peer = r.repairPeer(r.timers.ticks / max(r.cfg.RepairTimeoutTicks, 1))
	}
	r.send(peer, &Message{Header: Header{Command: CommandRequestCheckpoint, View: r.view, Op: uint64(len(r.transfer.buf))}})
}

// onRequestCheckpoint serves the durable checkpoint, normal or in a view
// change: it is of committed ops whatever the replica's status, and a
// recovering replica whose journal window cannot hold its peers' log
// needs it before it can take part in the view change that the replicas
// in it wait on for its vote (seed 3263: the only other replica up was in
// a view change, and the two waited for each other to the end of the run).
func (r *Replica) onRequestCheckpoint(m *Message) {
	if r.status != StatusNormal && r.status != StatusViewChange {
		return
	}
	r.sendCheckpointChunk(m.Replica, m.Op)
}

// sendCheckpointChunk sends the chunk at offset of the durable checkpoint
// as this replica's disk holds it: the checkpoint is read back from its
// area and verified against the checksum the superblock records, so that
// a latent error, a misdirected write or a stale read on this replica's
// disk is caught here (the chunk is not sent and the peer asks another
// replica) instead of being served from a copy in memory that the disk no
// longer matches.
func (r *Replica) sendCheckpointChunk(to uint8, offset uint64) {
	size := uint64(len(r.checkpointData))
	if size == 0 || offset >= size {
		return
	}
	op, sum := r.checkpointOp, r.checkpointChecksum
	buf := make([]byte, (size+SectorSize-1)/SectorSize*SectorSize)
	r.storage.Read(ZoneCheckpoint, uint64(r.checkpointArea)*r.cfg.checkpointAreaSize(), buf, func(err error) {
		data := buf[:size]
		if err != nil || checksum(data) != sum {
			return
		}
		chunk := min(uint64(r.cfg.MessageSizeMax-HeaderSize), size-offset)
		r.send(to, &Message{Header: Header{
			Command: CommandCheckpoint, View: r.view, CheckpointOp: op,
			Op: offset, Commit: size, Parent: sum,
		}, Body: data[offset : offset+chunk]})
	})
}

func (r *Replica) onCheckpoint(m *Message) {
	if m.Commit > r.cfg.checkpointAreaSize() {
		return
	}
	if r.transfer.installing {
		return
	}
	if m.CheckpointOp < r.transferOpMin() {
		// The peer's checkpoint is no newer than our state, so what we miss
		// is still in its journal: go back to repairing op by op (a replica
		// that must install some checkpoint keeps asking).
		if r.transfer.behind && r.transfer.ready == nil && !r.stateMissing && !r.syncing() {
			r.transfer.behind = false
			r.transfer.buf = r.transfer.buf[:0]
		}
		return
	}
	if !r.transfer.behind {
		// Unsolicited: useful only while the next op to apply is missing.
		if r.log.prepare(r.commitMin+1) != nil || r.status != StatusNormal {
			return
		}
		r.transfer.behind = true
	}
	t := &r.transfer
	if t.op != m.CheckpointOp || t.sum != m.Parent || t.total != m.Commit {
		t.op, t.sum, t.total, t.buf = m.CheckpointOp, m.Parent, m.Commit, t.buf[:0]
	}
	if m.Op != uint64(len(t.buf)) || m.Op+uint64(len(m.Body)) > t.total {
		return
	}
	t.buf = append(t.buf, m.Body...)
	if uint64(len(t.buf)) < t.total {
		r.send(m.Replica, &Message{Header: Header{Command: CommandRequestCheckpoint, View: r.view, Op: uint64(len(t.buf))}})
		return
	}
	if checksum(t.buf) != t.sum {
		t.buf = t.buf[:0]
		return
	}
	t.ready = append([]byte(nil), t.buf...)
	t.buf = t.buf[:0]
	r.installTransferred()
}

// installTransferred makes a fetched checkpoint the replica's durable
// checkpoint, unless a local checkpoint write is in flight (then the
// repair timer retries). The state is restored only once the superblock
// naming the checkpoint is durable (finishTransfer): until then the
// replica runs on, behind, with its durable checkpoint and journal
// unchanged, so a crash meanwhile restarts it with the log it had.
func (r *Replica) installTransferred() {
	data := r.transfer.ready
	if data == nil || r.sb.checkpoint != nil || r.transfer.installing {
		return
	}
	r.transfer.ready = nil
	h, err := checkpointHeaderOf(data)
	if err != nil || h.Op < r.transferOpMin() {
		return
	}
	r.transfer.installing = true
	r.writeCheckpoint(h, data, true)
}

// finishTransfer restores a transferred checkpoint whose superblock just
// became durable (checkpointOp already names it) and fits the log to it.
func (r *Replica) finishTransfer(data []byte) {
	r.transfer.installing = false
	h, err := r.restoreCheckpoint(data, r.transferOpMin())
	if err != nil {
		// The checkpoint passed its checksum but does not restore: the
		// peer's state is unusable, and it is now this replica's durable
		// checkpoint. Fence the replica rather than run on a wrong state.
		r.fail(fmt.Errorf("transferred checkpoint of op %d: %w", h.Op, err))
		return
	}
	if h.Checksum != r.checkpointHeader.Checksum {
		panic("vsr: restored checkpoint is not the durable one")
	}
	r.transfer.behind = false
	r.stateMissing = false
	oldCommit := r.commitMin
	r.commitMin = h.Op
	r.commitMax = max(r.commitMax, h.Op)
	// The ops the checkpoint skipped now count as applied: keep in the
	// ring only those its header chain vouches for, so that no stale
	// prepare is ever reported (Committed) or served as committed. They
	// are below the durable checkpoint, which a restart starts from, so
	// the journal needs no record of their removal.
	expected := h.Checksum
	for op := h.Op; op > oldCommit && h.Op-op < r.cfg.JournalSlots; op-- {
		e := r.log.at(op)
		if e != nil && e.header.Checksum == expected {
			expected = e.header.Parent
			continue
		}
		expected = Uint128{}
		r.log.remove(op)
	}
	r.log.each(func(_ uint64, e *logEntry) {
		if e.present && e.header.Op+r.cfg.JournalSlots <= h.Op {
			r.log.remove(e.header.Op)
		}
	})
	// Above the checkpoint the log keeps the ops that chain to it.
	cut := r.transferCuts(&h)
	r.truncate(r.transferHead(&h))
	r.op = max(r.op, h.Op)
	if r.commitMin != r.checkpointOp || r.op > r.opPrepareMax() {
		panic(fmt.Sprintf("vsr: transferred checkpoint %d left commit %d, checkpoint %d, op %d", h.Op, r.commitMin, r.checkpointOp, r.op))
	}
	r.assertLogChain()
	if cut {
		// The log of the log view lost ops this replica may have acked
		// there: it may not vote with it (logViewLost) and takes a view's
		// log from its peers instead. The superblock that made the
		// checkpoint durable recorded the flag (superblockSnapshot).
		r.logViewLost = true
		if r.persisted() && !r.sb.durable.LogViewLost {
			r.requestSuperblock()
		}
		r.startRecovery(true) // running on, it kept its view promise
		return
	}
	r.repair()
	r.afterLogChange()
}

// transferHead returns the op the log ends at once the transferred
// checkpoint h is installed: the highest op above h that chains to it
// through the log, or h's op.
func (r *Replica) transferHead(h *Header) uint64 {
	head, parent := h.Op, h.Checksum
	for head < r.op {
		e := r.log.at(head + 1)
		if e == nil || e.header.Parent != parent {
			break
		}
		head, parent = head+1, e.header.Checksum
	}
	return head
}

// transferCuts reports whether installing the transferred checkpoint h
// drops ops of the log above h's op: ops that do not chain to h, which
// this replica may have acked in its log view (they were never committed,
// or they would chain to a committed checkpoint). A replica whose log view
// was cut that way no longer holds what it acked there (logViewLost).
func (r *Replica) transferCuts(h *Header) bool {
	return r.op > h.Op && r.transferHead(h) < r.op
}
