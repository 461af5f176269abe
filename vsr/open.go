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
				r.loadJournal(func() {
					// What a process crash left in the page cache was read back
					// but may be unsynced: sync before counting it as durable.
					r.storage.Sync(func(err error) {
						if err != nil {
							r.fail(fmt.Errorf("open sync: %w", err))
						}
						r.resume()
						done(r.lastError)
					})
				})
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
		r.checkpointSize = s.CheckpointSize
		r.checkpointChecksum = s.CheckpointChecksum
		if err != nil || checksum(data) != s.CheckpointChecksum {
			// The checkpoint is unreadable. Its op and header are in the
			// superblock, so the journal's log still chains from it and the
			// replica keeps the log it acknowledged and voted for (resetting
			// to op 0 would let it vote in its durable log view with an
			// empty log). Only the state is missing: nothing is applied
			// until a peer's checkpoint at or after this op is installed.
			r.stateMissing = true
			r.transfer.behind = true
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

// loadJournal reads the journal back. In each slot the newest valid
// record (by write sequence) wins: a prepare gives header and body; a
// durable header whose prepare fails to read gives the header with a
// faulty body (repaired from a peer, never nacked); an installed header
// gives the header alone; a removal leaves the slot empty. The log is the
// chain of such headers that starts at the checkpoint.
func (r *Replica) loadJournal(done func()) {
	r.journal.ReadHeaders(func(records []journal.HeaderRecord) {
		slots := make([]loadedSlot, len(records))
		r.loadSlots(slots, 0, func() {
			r.buildLog(records, slots)
			done()
		})
	})
}

// loadedSlot is a prepare slot as read back at open.
type loadedSlot struct {
	prepare *Message
	seq     uint64
}

func (r *Replica) loadSlots(slots []loadedSlot, slot uint64, done func()) {
	if slot == uint64(len(slots)) {
		done()
		return
	}
	r.journal.ReadSlot(slot, func(rec journal.SlotRecord, err error) {
		var m Message
		if err == nil {
			r.journalSeq = max(r.journalSeq, rec.Seq+1)
			if m.Decode(rec.Prepare) == nil && m.Op == rec.Op && m.Command == CommandPrepare && r.journal.Slot(rec.Op) == slot {
				slots[slot] = loadedSlot{prepare: m.Clone(), seq: rec.Seq}
			}
		}
		r.loadSlots(slots, slot+1, done)
	})
}

// slotCandidate returns what a slot holds after reconciling its records.
func (r *Replica) slotCandidate(rec *journal.HeaderRecord, ls *loadedSlot) (h *Header, body *Message, faulty bool) {
	if rec.Err == nil {
		r.journalSeq = max(r.journalSeq, rec.Seq+1)
	}
	if rec.Err == nil && (ls.prepare == nil || rec.Seq > ls.seq) {
		if rec.Kind == journal.HeaderRemoved {
			return nil, nil, false
		}
		var hdr Header
		if hdr.Decode(rec.Header) != nil || hdr.Op != rec.Op || hdr.Command != CommandPrepare {
			return nil, nil, false
		}
		if ls.prepare != nil && ls.prepare.Checksum == hdr.Checksum {
			return &ls.prepare.Header, ls.prepare, false
		}
		return &hdr, nil, rec.Kind == journal.HeaderDurable
	}
	if ls.prepare != nil {
		return &ls.prepare.Header, ls.prepare, false
	}
	return nil, nil, false
}

func (r *Replica) buildLog(records []journal.HeaderRecord, slots []loadedSlot) {
	r.journalSeq = max(r.journalSeq, 1)
	type candidate struct {
		h      *Header
		body   *Message
		faulty bool
	}
	candidates := make([]candidate, len(slots))
	for i := range slots {
		h, body, faulty := r.slotCandidate(&records[i], &slots[i])
		candidates[i] = candidate{h, body, faulty}
	}
	parent, _ := r.header(r.checkpointOp)
	parentSum := parent.Checksum
	op := r.checkpointOp
	for range r.cfg.JournalSlots {
		c := candidates[r.journal.Slot(op+1)]
		if c.h == nil || c.h.Op != op+1 || c.h.Parent != parentSum {
			break
		}
		if c.body != nil {
			e := r.log.setPrepare(c.body)
			e.written, e.durable, e.recorded = true, true, true
		} else {
			e := r.log.setHeader(c.h)
			e.faulty = c.faulty
			e.recorded = true
		}
		op++
		parentSum = c.h.Checksum
	}
	r.op = op
	// The chain ends at a hole. A header record is written only once its
	// prepare was durable (or before the superblock of a view change), so
	// a corrupt or misdirected header record in the hole's slot, with
	// records of later ops beyond it, means a durable (possibly acked) op
	// was lost: the replica cannot vouch for its log and recovers it from
	// peers. A hole left by an in-flight write at the crash is harmless.
	hole := r.journal.Slot(op + 1)
	rec := &records[hole]
	corrupt := (rec.Err != nil && !rec.Blank) || (rec.Err == nil && r.journal.Slot(rec.Op) != hole)
	if !corrupt {
		return
	}
	for i := range candidates {
		if c := candidates[i]; c.h != nil && c.h.Op > op+1 && c.h.Op <= r.checkpointOp+r.cfg.JournalSlots {
			r.journalDamaged = true
		}
	}
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
		}
		// A replicated singleton kept no journal: the ops above its
		// checkpoint were in memory only (the loss the durability seed
		// allows a replicated group), so its commit number, which the
		// superblock may record beyond the checkpoint, falls back to the
		// checkpoint it resumes from.
		r.commitMax = r.op
		r.status = StatusNormal
		r.logView = r.view
		r.enterNormal()
		r.afterLogChange()
	case !r.persisted() || r.journalDamaged:
		r.startRecovery()
	case r.logView == r.view && !r.isPrimaryOf(r.view):
		r.status = StatusNormal
		r.enterNormal()
		r.afterLogChange()
	default:
		r.startViewChange(r.view + 1)
	}
}
