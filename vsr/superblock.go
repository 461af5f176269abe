package vsr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// superblockCopies is the number of superblock copies, written
// alternately so that a torn write leaves the other copy valid.
const superblockCopies = 2

const (
	superblockMagic   = 0x4b4c4253 // "SBLK"
	superblockVersion = 1
	// superblockEncodedSize is the bytes of a copy that carry data; the rest
	// of the sector is zero.
	superblockEncodedSize = 96 + HeaderSize + 16
)

// ErrSuperblock reports that no superblock copy is valid.
var ErrSuperblock = errors.New("vsr: no valid superblock")

// ErrSuperblockLost reports storage whose superblock copies exist but are
// all damaged (it wraps ErrSuperblock): the replica's durable consensus
// state is gone. A replica with peers whose host set
// Config.RecoverLostSuperblock does not return it from Open: it recovers
// from them as a replica that lost its memory (openMemoryLost). Any other
// (a group of one has nobody to recover from) fails Open with it, and the
// host decides (a partition of one is fenced, serving its files).
var ErrSuperblockLost = fmt.Errorf("%w: every copy is damaged", ErrSuperblock)

// ErrForeignGroup reports storage (a superblock) that belongs to another
// consensus group: the host handed a group the files of another.
var ErrForeignGroup = errors.New("vsr: storage of another group")

// superblockState is the replica's durable consensus state.
type superblockState struct {
	Sequence           uint64
	Cluster            uint64
	Group              uint64
	ReplicaCount       uint8
	ReplicaIndex       uint8
	CheckpointArea     uint8
	View               uint64
	LogView            uint64
	Commit             uint64
	CheckpointOp       uint64
	CheckpointSize     uint64
	CheckpointChecksum Uint128
	CheckpointHeader   Header
	// LogViewLost records that the journal may not hold the log of LogView
	// up to every op the replica acknowledged in it: a transferred
	// checkpoint cut that log (Replica.logViewLost). A replica that opens
	// with it set recovers its log from peers instead of voting with it.
	LogViewLost bool
	// MemoryLost records that the replica lost its superblock and has not
	// yet recovered (Replica.memoryLost): its view is no promise.
	MemoryLost bool
}

// superblockFlagLogViewLost is the bit of the flags byte for LogViewLost.
const superblockFlagLogViewLost = 1

// superblockFlagMemoryLost is the bit of the flags byte for MemoryLost.
const superblockFlagMemoryLost = 2

// superblockFlags is every flag bit a copy may carry.
const superblockFlags = superblockFlagLogViewLost | superblockFlagMemoryLost

// encodeSuperblock writes s into a full sector.
func encodeSuperblock(s *superblockState, sector []byte) {
	clear(sector[:SectorSize])
	le := binary.LittleEndian
	le.PutUint32(sector[0:], superblockMagic)
	le.PutUint16(sector[4:], superblockVersion)
	sector[6] = s.ReplicaCount
	sector[7] = s.ReplicaIndex
	sector[8] = s.CheckpointArea
	if s.LogViewLost {
		sector[9] |= superblockFlagLogViewLost
	}
	if s.MemoryLost {
		sector[9] |= superblockFlagMemoryLost
	}
	le.PutUint64(sector[16:], s.Sequence)
	le.PutUint64(sector[24:], s.Cluster)
	le.PutUint64(sector[32:], s.View)
	le.PutUint64(sector[40:], s.LogView)
	le.PutUint64(sector[48:], s.Commit)
	le.PutUint64(sector[56:], s.CheckpointOp)
	le.PutUint64(sector[64:], s.CheckpointSize)
	putUint128(sector[72:], s.CheckpointChecksum)
	le.PutUint64(sector[88:], s.Group)
	s.CheckpointHeader.Encode(sector[96:])
	sum := checksum(sector[:96+HeaderSize])
	putUint128(sector[96+HeaderSize:], sum)
}

// decodeSuperblock parses and verifies one copy. It never panics.
func decodeSuperblock(sector []byte) (superblockState, error) {
	var s superblockState
	if len(sector) < superblockEncodedSize {
		return s, fmt.Errorf("%w: short copy", ErrSuperblock)
	}
	if checksum(sector[:96+HeaderSize]) != getUint128(sector[96+HeaderSize:]) {
		return s, fmt.Errorf("%w: checksum", ErrSuperblock)
	}
	le := binary.LittleEndian
	if le.Uint32(sector[0:]) != superblockMagic || le.Uint16(sector[4:]) != superblockVersion {
		return s, fmt.Errorf("%w: magic or version", ErrSuperblock)
	}
	s.ReplicaCount = sector[6]
	s.ReplicaIndex = sector[7]
	s.CheckpointArea = sector[8]
	s.LogViewLost = sector[9]&superblockFlagLogViewLost != 0
	s.MemoryLost = sector[9]&superblockFlagMemoryLost != 0
	s.Sequence = le.Uint64(sector[16:])
	s.Cluster = le.Uint64(sector[24:])
	s.View = le.Uint64(sector[32:])
	s.LogView = le.Uint64(sector[40:])
	s.Commit = le.Uint64(sector[48:])
	s.CheckpointOp = le.Uint64(sector[56:])
	s.CheckpointSize = le.Uint64(sector[64:])
	s.CheckpointChecksum = getUint128(sector[72:])
	s.Group = le.Uint64(sector[88:])
	if err := s.CheckpointHeader.Decode(sector[96:]); err != nil {
		return s, fmt.Errorf("%w: checkpoint header: %w", ErrSuperblock, err)
	}
	if s.LogView > s.View || s.CheckpointArea > 1 || s.CheckpointHeader.Op != s.CheckpointOp || sector[9]&^superblockFlags != 0 {
		return s, fmt.Errorf("%w: inconsistent fields", ErrSuperblock)
	}
	return s, nil
}

// pendingCheckpoint is a checkpoint whose data is being written; it takes
// effect when a superblock naming it is durable.
type pendingCheckpoint struct {
	op       uint64
	header   Header
	data     []byte
	checksum Uint128 // checksum(data)
	area     uint8
	synced   bool
	// transferred marks a checkpoint fetched from a peer: the replica
	// restores it only once the superblock naming it is durable, so that
	// until then its durable checkpoint and journal still describe the log
	// it runs (a restart from the old checkpoint finds that log intact).
	transferred bool
}

// superblockWriter serialises superblock writes: one in flight, and a
// dirty flag that schedules one more with the newest state.
type superblockWriter struct {
	durable    superblockState
	writing    bool
	dirty      bool
	checkpoint *pendingCheckpoint
	// waitJournal is set while a superblock write waits for the journal:
	// for header changes to complete, or (persisted, when the log view
	// changes) for the log it records to be durable.
	waitJournal bool
	// logViewOp is the replica's op when its log view last changed: the
	// superblock that makes that log view durable waits until the journal
	// records every op up to it (recordedHead), so that a restarted replica
	// never holds a log view with a log shorter than the one it joined.
	logViewOp uint64
}

// viewDurable reports whether the durable superblock records view and
// logView.
func (w *superblockWriter) viewDurable(view, logView uint64) bool {
	return w.durable.View == view && w.durable.LogView == logView
}

// snapshot returns the state a new superblock copy should record.
func (r *Replica) superblockSnapshot() superblockState {
	s := superblockState{
		Sequence:           r.sb.durable.Sequence + 1,
		Cluster:            r.cfg.Cluster,
		Group:              r.cfg.Group,
		ReplicaCount:       r.cfg.ReplicaCount,
		ReplicaIndex:       r.cfg.ReplicaIndex,
		View:               r.view,
		LogView:            r.logView,
		Commit:             r.commitMin,
		CheckpointOp:       r.checkpointOp,
		CheckpointArea:     r.checkpointArea,
		CheckpointSize:     r.checkpointSize,
		CheckpointChecksum: r.checkpointChecksum,
		CheckpointHeader:   r.checkpointHeader,
		LogViewLost:        r.logViewLost,
		MemoryLost:         r.memoryLost,
	}
	if r.checkpointSize == 0 {
		s.CheckpointChecksum = Uint128{}
	}
	if c := r.sb.checkpoint; c != nil && c.synced {
		s.CheckpointOp = c.op
		s.CheckpointArea = c.area
		s.CheckpointSize = uint64(len(c.data))
		s.CheckpointChecksum = c.checksum
		s.CheckpointHeader = c.header
		// A transferred checkpoint that cuts the log of the log view takes
		// effect with this superblock: the journal then no longer holds
		// that log from the new checkpoint, so the same write records it.
		if c.transferred && r.transferCuts(&c.header) {
			s.LogViewLost = true
		}
	}
	return s
}

// requestSuperblock schedules a superblock write of the current state.
func (r *Replica) requestSuperblock() {
	if r.sb.writing {
		r.sb.dirty = true
		return
	}
	if r.installWrites > 0 || !r.logViewRecorded() {
		r.sb.waitJournal = true
		return
	}
	r.sb.writing = true
	r.sb.dirty = false
	// Sync first: journal changes of the log this superblock describes
	// must be durable before it is. The state is taken now, while no
	// journal header change is in flight, so that the sync covers every
	// one the log it records depends on; what changes while the sync runs
	// goes into the next superblock (dirty).
	s := r.superblockSnapshot()
	r.storage.Sync(func(err error) {
		if err != nil {
			r.sb.writing = false
			r.fail(fmt.Errorf("superblock pre-sync: %w", err))
			return
		}
		r.writeSuperblock(s)
	})
}

// logViewRecorded reports whether the journal records the log of the
// replica's log view, as far as a superblock that makes the log view
// durable needs (persisted mode): every op up to logViewOp.
func (r *Replica) logViewRecorded() bool {
	if !r.persisted() || (r.logView == r.sb.durable.LogView && (r.logViewLost || !r.sb.durable.LogViewLost)) {
		return true
	}
	return r.recordedHead() >= min(r.sb.logViewOp, r.op)
}

// writeSuperblock writes and syncs one superblock copy of s, a state taken
// when every journal write it depends on had completed.
func (r *Replica) writeSuperblock(s superblockState) {
	r.assertSuperblockAdvances(&s)
	buf := make([]byte, SectorSize)
	encodeSuperblock(&s, buf)
	offset := (s.Sequence % superblockCopies) * SectorSize
	r.storage.Write(ZoneSuperblock, offset, buf, func(err error) {
		if err != nil {
			r.sb.writing = false
			r.fail(fmt.Errorf("superblock write: %w", err))
			return
		}
		r.storage.Sync(func(err error) {
			r.sb.writing = false
			if err != nil {
				r.fail(fmt.Errorf("superblock sync: %w", err))
				return
			}
			r.sb.durable = s
			r.onSuperblockDurable()
			if r.sb.dirty {
				r.requestSuperblock()
			}
		})
	})
}

// onSuperblockDurable runs what waited for the durable state to catch up.
func (r *Replica) onSuperblockDurable() {
	if c := r.sb.checkpoint; c != nil && c.synced && r.sb.durable.CheckpointOp == c.op && r.sb.durable.CheckpointArea == c.area {
		r.checkpointOp = c.op
		r.checkpointHeader = c.header
		r.checkpointData = c.data
		r.checkpointSize = uint64(len(c.data))
		r.checkpointChecksum = c.checksum
		r.checkpointArea = c.area
		r.sb.checkpoint = nil
		if c.transferred {
			r.finishTransfer(c.data)
			r.afterLocalCheckpoint() // restart.go
		}
		if r.cfg.ReleaseApplied {
			// No peer asks a group of one for an op its checkpoint covers:
			// the log lets them go, and its memory with them.
			r.log.release(r.checkpointOp)
		}
	}
	switch r.status {
	case StatusViewChange:
		r.maybeSendDoViewChange()
	case StatusNormal:
		r.afterLogChange()
	}
}

// readSuperblock reads both copies and returns the valid one with the
// highest sequence; fresh reports storage that was never formatted.
func (r *Replica) readSuperblock(done func(s superblockState, fresh bool, err error)) {
	buf := make([]byte, superblockCopies*SectorSize)
	r.storage.Read(ZoneSuperblock, 0, buf, func(err error) {
		if err != nil {
			// Read the copies one by one so that one bad sector costs one copy.
			r.readSuperblockCopies(buf, 0, [superblockCopies]error{}, done)
			return
		}
		r.pickSuperblock(buf, [superblockCopies]error{}, done)
	})
}

func (r *Replica) readSuperblockCopies(buf []byte, i int, errs [superblockCopies]error, done func(superblockState, bool, error)) {
	if i == superblockCopies {
		r.pickSuperblock(buf, errs, done)
		return
	}
	sector := buf[i*SectorSize : (i+1)*SectorSize]
	r.storage.Read(ZoneSuperblock, uint64(i)*SectorSize, sector, func(err error) {
		errs[i] = err
		r.readSuperblockCopies(buf, i+1, errs, done)
	})
}

func (r *Replica) pickSuperblock(buf []byte, errs [superblockCopies]error, done func(superblockState, bool, error)) {
	var best superblockState
	found, blank := false, true
	for i := range superblockCopies {
		sector := buf[i*SectorSize : (i+1)*SectorSize]
		if errs[i] != nil {
			blank = false
			continue
		}
		for _, b := range sector {
			if b != 0 {
				blank = false
				break
			}
		}
		s, err := decodeSuperblock(sector)
		if err != nil {
			continue
		}
		if s.Cluster != r.cfg.Cluster || s.ReplicaIndex != r.cfg.ReplicaIndex || s.ReplicaCount != r.cfg.ReplicaCount {
			done(s, false, fmt.Errorf("%w: belongs to cluster %d replica %d of %d", ErrSuperblock, s.Cluster, s.ReplicaIndex, s.ReplicaCount))
			return
		}
		if s.Group != r.cfg.Group || s.CheckpointHeader.Group != r.cfg.Group {
			done(s, false, fmt.Errorf("%w: %w: the storage holds group %d, this replica is of group %d", ErrSuperblock, ErrForeignGroup, s.Group, r.cfg.Group))
			return
		}
		if !found || s.Sequence > best.Sequence {
			best, found = s, true
		}
	}
	switch {
	case found:
		done(best, false, nil)
	case blank:
		done(superblockState{}, true, nil)
	default:
		done(superblockState{}, false, ErrSuperblockLost)
	}
}

// assertSuperblockAdvances panics if s, about to be written, would take
// the durable state backwards: the sequence moves by one, neither the view
// nor the checkpoint ever decrease, and the log view is at most the view
// (it may go down: a recovering replica adopts a peer's log and its view).
func (r *Replica) assertSuperblockAdvances(s *superblockState) {
	d := &r.sb.durable
	if s.Sequence != d.Sequence+1 || s.View < d.View || s.LogView > s.View || s.CheckpointOp < d.CheckpointOp {
		panic(fmt.Sprintf("vsr: superblock goes backwards: sequence %d view %d log view %d checkpoint %d after sequence %d view %d log view %d checkpoint %d",
			s.Sequence, s.View, s.LogView, s.CheckpointOp, d.Sequence, d.View, d.LogView, d.CheckpointOp))
	}
	if s.CheckpointHeader.Op != s.CheckpointOp || (s.CheckpointOp > 0 && s.CheckpointSize == 0) {
		panic(fmt.Sprintf("vsr: superblock checkpoint %d with header of op %d and %d bytes", s.CheckpointOp, s.CheckpointHeader.Op, s.CheckpointSize))
	}
}
