package vsr

import (
	"errors"
	"fmt"

	"github.com/stratabroker/strata/journal"
)

// Open loads the superblock, the checkpoint and (persisted mode) the
// journal from storage, then starts the replica: fresh storage is
// formatted and the replica joins view 0; a restarted replica either
// resumes from its durable log (persisted) or runs the recovery protocol
// (replicated, more than one replica). done runs once, from a storage
// completion or at once on a config error.
func (r *Replica) Open(done func(err error)) {
	if r.status != StatusOpening {
		done(fmt.Errorf("%w: already open", ErrConfig))
		return
	}
	r.readSuperblock(func(s superblockState, fresh bool, err error) {
		if err != nil {
			done(err)
			return
		}
		if fresh {
			r.format(done)
			return
		}
		r.sb.durable = s
		r.view = s.View
		r.logView = s.LogView
		r.checkpointOp = s.CheckpointOp
		r.checkpointHeader = s.CheckpointHeader
		r.checkpointArea = s.CheckpointArea
		r.commitMin = s.CheckpointOp
		r.commitMax = max(s.Commit, s.CheckpointOp)
		r.op = s.CheckpointOp
		r.readCheckpoint(s, func(err error) {
			if err != nil {
				done(err)
				return
			}
			if r.persisted() {
				r.loadJournal(func() { r.resume(); done(r.lastError) })
				return
			}
			r.resume()
			done(nil)
		})
	})
}

// format writes the first superblock to fresh storage; the replica joins
// view 0 only once it is durable, so a crash before then leaves fresh
// storage, never a replica that forgot what it acknowledged.
func (r *Replica) format(done func(error)) {
	r.sb.durable.Sequence = 0
	r.status = StatusOpening
	r.requestSuperblockThen(func() {
		r.status = StatusNormal
		r.enterNormal()
		done(r.lastError)
	})
}

// requestSuperblockThen writes the superblock and calls then once durable.
func (r *Replica) requestSuperblockThen(then func()) {
	s := r.superblockSnapshot()
	buf := make([]byte, SectorSize)
	encodeSuperblock(&s, buf)
	r.storage.Write(ZoneSuperblock, (s.Sequence%superblockCopies)*SectorSize, buf, func(err error) {
		if err != nil {
			r.fail(err)
			then()
			return
		}
		r.storage.Sync(func(err error) {
			if err != nil {
				r.fail(err)
			} else {
				r.sb.durable = s
			}
			then()
		})
	})
}

func (r *Replica) readCheckpoint(s superblockState, done func(error)) {
	if s.CheckpointSize == 0 {
		done(nil)
		return
	}
	if s.CheckpointSize > r.cfg.checkpointAreaSize() {
		done(fmt.Errorf("%w: size %d", ErrCheckpoint, s.CheckpointSize))
		return
	}
	buf := make([]byte, (s.CheckpointSize+SectorSize-1)/SectorSize*SectorSize)
	r.storage.Read(ZoneCheckpoint, uint64(s.CheckpointArea)*r.cfg.checkpointAreaSize(), buf, func(err error) {
		data := buf[:s.CheckpointSize]
		if err != nil || checksum(data) != s.CheckpointChecksum {
			// The checkpoint is unreadable: start from an empty state and
			// fetch a checkpoint from a peer.
			r.commitMin, r.checkpointOp, r.op = 0, 0, 0
			r.checkpointHeader = r.rootHeader
			r.transfer.behind = s.CheckpointOp > 0
			done(nil)
			return
		}
		h, err := r.restoreCheckpoint(data, 0)
		if err != nil || h.Checksum != s.CheckpointHeader.Checksum {
			done(fmt.Errorf("%w: restore: %w", ErrCheckpoint, errors.Join(err)))
			return
		}
		r.checkpointData = data
		r.checkpointChecksum = s.CheckpointChecksum
		done(nil)
	})
}

// loadJournal reads the journal back. A slot's prepare, if it reads back
// intact, gives its header and body; otherwise the redundant header (which
// is written only after the prepare was durable) gives the header and the
// body is marked faulty, to be repaired from a peer and never nacked. The
// log is the chain of such headers that starts at the checkpoint.
func (r *Replica) loadJournal(done func()) {
	r.journal.ReadHeaders(func(records []journal.HeaderRecord) {
		prepares := make([]*Message, len(records))
		r.loadSlots(prepares, 0, func() {
			r.buildLog(records, prepares)
			done()
		})
	})
}

func (r *Replica) loadSlots(prepares []*Message, slot uint64, done func()) {
	if slot == uint64(len(prepares)) {
		done()
		return
	}
	r.journal.ReadSlot(slot, func(op uint64, data []byte, err error) {
		var m Message
		if err == nil && m.Decode(data) == nil && m.Op == op && m.Command == CommandPrepare && r.journal.Slot(op) == slot {
			prepares[slot] = m.Clone()
		}
		r.loadSlots(prepares, slot+1, done)
	})
}

func (r *Replica) buildLog(records []journal.HeaderRecord, prepares []*Message) {
	parent, _ := r.header(r.checkpointOp)
	parentSum := parent.Checksum
	op := r.checkpointOp
	for range r.cfg.JournalSlots {
		slot := r.journal.Slot(op + 1)
		if p := prepares[slot]; p != nil && p.Op == op+1 && p.Parent == parentSum {
			e := r.log.setPrepare(p)
			e.written, e.durable = true, true
			op++
			parentSum = p.Checksum
			continue
		}
		rec := records[slot]
		var h Header
		if rec.Err != nil || rec.Op != op+1 || h.Decode(rec.Header) != nil || h.Op != op+1 || h.Command != CommandPrepare || h.Parent != parentSum {
			break
		}
		e := r.log.setHeader(&h)
		e.faulty = true
		op++
		parentSum = h.Checksum
	}
	r.op = op
}

// resume chooses the status a restarted replica starts in.
func (r *Replica) resume() {
	r.timestampMax = 0
	switch {
	case r.solo():
		// A singleton commits whatever it made durable. It has no peer to
		// repair from, so the log ends before the first op whose prepare
		// did not survive: that op was never synced, hence never acked.
		if r.persisted() {
			for op := r.commitMin + 1; op <= r.op; op++ {
				if r.log.prepare(op) == nil {
					r.truncate(op - 1)
					break
				}
			}
			r.commitMax = r.op
		}
		r.status = StatusNormal
		r.logView = r.view
		r.enterNormal()
		r.afterLogChange()
	case !r.persisted():
		r.startRecovery()
	case r.logView == r.view && !r.isPrimaryOf(r.view):
		r.status = StatusNormal
		r.enterNormal()
		r.afterLogChange()
	default:
		r.startViewChange(r.view + 1)
	}
}
