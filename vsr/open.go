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
		if errors.Is(err, ErrSuperblockLost) && !r.solo() && r.cfg.RecoverLostSuperblock {
			r.openMemoryLost(done) // memory_lost.go
			return
		}
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
		r.logViewLost = s.LogViewLost
		r.memoryLost = s.MemoryLost
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
						if err := r.soloFaulty(); err != nil {
							r.fail(err)
							done(r.lastError)
							return
						}
						r.adoptJournalLogView()
						if !r.logViewLost {
							r.rerecordLoaded()
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

// loadedSlot is a prepare slot as read back at open: a prepare, or the
// copy of an installed header or removal (mirror, journal.SlotRecord).
type loadedSlot struct {
	prepare *Message
	seq     uint64
	mirror  *journal.HeaderRecord
	// corrupt reports a prepare zone record that is torn, corrupt,
	// unreadable or of another slot (misdirected): not a blank slot.
	corrupt bool
	// torn is, for a corrupt record whose frame is intact, what the frame
	// says (journal.SlotRecord.Torn; unverified).
	torn journal.SlotRecord
}

func (r *Replica) loadSlots(slots []loadedSlot, slot uint64, done func()) {
	if slot == uint64(len(slots)) {
		done()
		return
	}
	r.journal.ReadSlot(slot, func(rec journal.SlotRecord, err error) {
		var m Message
		slots[slot].corrupt = err != nil && !rec.Blank
		if err != nil && rec.Torn {
			slots[slot].torn = rec
		}
		if err == nil {
			r.journalSeq = max(r.journalSeq, rec.Seq+1)
			switch {
			case r.journal.Slot(rec.Op) != slot:
				slots[slot].corrupt = true
			case rec.Kind != 0:
				slots[slot] = loadedSlot{mirror: &journal.HeaderRecord{Slot: slot, Op: rec.Op, Seq: rec.Seq, Kind: rec.Kind, Header: rec.Header}}
			case m.Decode(rec.Prepare) == nil && m.Op == rec.Op && m.Command == CommandPrepare:
				slots[slot] = loadedSlot{prepare: m.Clone(), seq: rec.Seq}
			default:
				slots[slot].corrupt = true
			}
		}
		r.loadSlots(slots, slot+1, done)
	})
}

// slotCandidate returns what a slot holds after reconciling its records:
// the newest of the header zone's record, the prepare zone's prepare and
// the prepare zone's copy of an installed header or removal. One faulty
// zone then costs the slot at most its newest copy, never a change: an
// installed header or a removal is in both zones.
func (r *Replica) slotCandidate(rec *journal.HeaderRecord, ls *loadedSlot) (h *Header, body *Message, faulty bool) {
	if rec.Err == nil {
		r.journalSeq = max(r.journalSeq, rec.Seq+1)
	}
	// A header record of an op of another slot is a misdirected write: it
	// says nothing of this slot, whose other zone is then intact.
	valid := rec.Err == nil && r.journal.Slot(rec.Op) == rec.Slot
	if m := ls.mirror; m != nil && (!valid || m.Seq > rec.Seq) {
		rec, valid = m, true
	}
	if valid && (ls.prepare == nil || rec.Seq > ls.seq) {
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
	// Leave one write sequence unused at each open: two journal writes of
	// consecutive sequences are then of one life, submitted one after the
	// other, with no write of this replica between them
	// (tornPrepareDamage). Without the gap a record lost on a faulty disk
	// (the seal of an acked op) could give its sequence to a write of the
	// next life.
	r.journalSeq++
	parent, _ := r.header(r.checkpointOp)
	parentSum := parent.Checksum
	op := r.checkpointOp
	for range r.cfg.JournalSlots {
		c := candidates[r.journal.Slot(op+1)]
		if c.h == nil || c.h.Op != op+1 || c.h.Parent != parentSum {
			break
		}
		slot := r.journal.Slot(op + 1)
		named, kind := recordNames(&records[slot], c.h)
		if c.body != nil {
			// Recorded if the header zone names the prepare too; sealed if
			// by its HeaderDurable record. Else the seal is written again
			// after open (rerecordLoaded) before the op may be acked.
			e := r.log.setPrepare(c.body)
			e.written, e.durable = true, true
			e.recorded = named
			e.sealed = named && kind == journal.HeaderDurable
			e.sealWritten = e.sealed
		} else {
			e := r.log.setHeader(c.h)
			e.faulty = c.faulty
			mirrored, _ := recordNames(slots[slot].mirror, c.h)
			e.recorded = named && mirrored
		}
		op++
		parentSum = c.h.Checksum
	}
	r.op = op
	// What the journal holds above the chain is not in the log: prepares
	// and headers of ops whose chain broke at a hole (a write in flight at
	// the crash), of an older view. A later log that reaches the hole again
	// would chain them back in, under a log view they never belonged to
	// (dropStrays removes them).
	r.journalStrays = r.journalStrays[:0]
	for i := range candidates {
		if c := candidates[i]; c.h != nil && c.h.Op > op && c.h.Op <= r.opPrepareMax() {
			r.journalStrays = append(r.journalStrays, c.h.Op)
		}
	}
	// The newest change recorded for a log view the superblock does not
	// hold, if any (adoptJournalLogView), and whether any change of such a
	// log view replaced an op the log held.
	r.journalLogViewReplaced = false
	r.journalOwnHead = Header{}
	for i := range records {
		for _, rec := range []*journal.HeaderRecord{&records[i], slots[i].mirror} {
			if rec == nil || rec.Err != nil || rec.Op <= r.checkpointOp || rec.Op > r.opPrepareMax() {
				continue
			}
			t, ok := recordTag(rec)
			if ok && t.logView == r.logView && t.head > r.checkpointOp && t.head > r.journalOwnHead.Op {
				r.journalOwnHead = Header{Op: t.head, Checksum: t.headChecksum}
			}
			if !ok || t.logView <= r.logView {
				continue
			}
			if t.logView > r.journalLogView.logView {
				r.journalLogView = t
			}
			if t.replaced && rec.Op > r.commitMin {
				r.journalLogViewReplaced = true
			}
		}
		// A prepare of a view after the log view written over a sealed op of
		// the log view (whose header record still names it): the new log
		// view's installed header of the slot was lost, its prepare was not.
		if p := slots[i].prepare; p != nil && p.View > r.logView && p.Op > r.commitMin && r.sealedOther(&records[i], p) {
			r.journalLogViewReplaced = true
		}
	}
	// The chain ends at a hole. A header record is written only once its
	// prepare was durable (or before the superblock of a view change), so
	// a corrupt or misdirected header record in the hole's slot, with
	// records of later ops beyond it, means a durable (possibly acked) op
	// was lost: the replica cannot vouch for its log and recovers it from
	// peers. A hole left by an in-flight write at the crash is harmless;
	// so is a prepare zone record torn by it, unless it may be the
	// prepare of a recorded op written over the copy of its installed
	// header (tornPrepareDamage).
	hole := r.journal.Slot(op + 1)
	rec := &records[hole]
	corrupt := (rec.Err != nil && !rec.Blank) || (rec.Err == nil && r.journal.Slot(rec.Op) != hole) || r.tornPrepareDamage(op+1, records, slots)
	if !corrupt {
		return
	}
	for i := range candidates {
		if c := candidates[i]; c.h != nil && c.h.Op > op+1 && c.h.Op <= r.checkpointOp+r.cfg.JournalSlots {
			r.journalDamaged = true
		}
	}
}

// tornPrepareDamage reports whether the corrupt prepare zone record in
// the slot of op, the hole where the journal's chain breaks at open, may
// hide an op this replica recorded, and so may have acked ops above.
//
// The prepare of an op the replica held as an installed header (recorded
// in both zones, which lets it ack the ops above) goes over the header's
// copy in the prepare zone. Torn by a crash, or partly kept by a power
// loss, it leaves the header zone's copy alone naming the op, and a
// faulty disk may read that sector back stale (blank, or the slot's
// record before it): neither zone then names the op, and the replica,
// resuming at the hole, would vote with a log that ends below ops it
// acked (seed 335 at --ticks 6000). A new op's prepare in flight at the
// crash looks the same in its slot; what tells them apart is the order of
// the writes. An ack needs every op below it recorded (recordedHead) and
// the acked op sealed: so if the replica acked an op above the hole before
// the torn write was submitted, the acked op's HeaderDurable record is
// older than the torn write, and so is its prepare, by at least one write
// sequence more (the seal is submitted once the prepare is durable). The
// evidence of such an ack is then a HeaderDurable record of an op above
// the hole older than the torn write, or, if that seal was lost or read
// back stale (a faulty disk), a prepare above the hole with a sequence
// between it and the torn write (buildLog leaves a sequence unused at
// each open, so consecutive sequences are one life's consecutive writes;
// with SealLazily a durable prepare alone may be acked, and any older
// prepare counts). An installed header above the hole (from a repair's
// Headers reply), or its copy, is no such evidence: it is no ack (seed
// 7026: a backup that never acked wrote the repair's prepare of a later
// op just before the torn one, with installed headers above the hole). A
// torn prepare of op written before every record above it (the
// pipeline's writes in flight at a crash), or a torn write over an older
// op's prepare (the slot never held op's installed header, which would
// have replaced it), hides no such ack. Any other corrupt record
// (unreadable, no intact frame, a frame naming another op) is taken as
// damage. An op above the hole first written, sealed and acked while the
// torn write was pending would look the same as a new op's write; that
// ack is never sent (ackableHead stops below a prepare written over its
// installed header's copy until the write is durable).
func (r *Replica) tornPrepareDamage(op uint64, records []journal.HeaderRecord, slots []loadedSlot) bool {
	slot := r.journal.Slot(op)
	ls := &slots[slot]
	if !ls.corrupt {
		return false
	}
	t := ls.torn
	if !t.Torn || t.Kind != 0 || r.journal.Slot(t.Op) != slot || t.Op > op {
		return true
	}
	if t.Op < op {
		return false
	}
	ops := r.checkpointOp + r.cfg.JournalSlots
	above := func(recOp uint64) bool { return recOp > op && recOp <= ops }
	for i := range records {
		// The acked op's seal, written before the torn write.
		if h := &records[i]; h.Err == nil && r.journal.Slot(h.Op) == h.Slot && h.Kind == journal.HeaderDurable && above(h.Op) && h.Seq < t.Seq {
			return true
		}
		// The acked op's prepare, whose seal (written after it, before
		// the torn write: a sequence between the two) may have been lost
		// or read back stale on a faulty disk. A prepare written just
		// before the torn write (the next sequence) had no seal before
		// it, unless a durable prepare alone is held (SealLazily).
		if p := slots[i].prepare; p != nil && above(p.Op) && slots[i].seq < t.Seq && (slots[i].seq+1 < t.Seq || r.cfg.SealLazily) {
			return true
		}
	}
	return false
}

// adoptJournalLogView handles a restart between the journal records of a
// new log view's log (installed headers, removals) and the superblock that
// records that log view: the durable log view is the old one, but the
// journal no longer holds its log; voting with it would claim, for the old
// log view, a log that may end below ops this replica acknowledged there.
// If the journal's chain reaches the head the new log view's log started
// at, the journal holds all of that log (a hash chain): the replica takes
// it up again, in that log view, dropping what is left above the head of
// older views (their removals may not have landed), and the superblock it
// then writes makes the log view durable before it acks or votes in it.
// Otherwise (the crash struck while the records were written) it keeps its
// durable log view; but if one of those records replaced an op of its log
// (one it may have acked there: a view's log that disagrees with it), or a
// prepare of a later view overwrote such an op whose HeaderDurable record
// still names it (the installed header before it was lost), the
// journal no longer holds the log of its durable log view either, and the
// replica may not vote with it (logViewLost): it recovers a view's log from
// its peers. It then changes nothing in its journal, whose records of the
// newer log view say so again if it restarts before the superblock that
// records the loss is durable.
//
// Either way the log then holds no op prepared in a view after its log
// view: a log of log view L is made of prepares of views up to L, and a
// prepare of a later view in the journal (appended by a primary, or by a
// backup, of a view whose superblock did not become durable) is not part
// of it. The cut is recorded (removals), so that a later log that ends
// below it never takes the stale prepare back at a restart.
func (r *Replica) adoptJournalLogView() {
	t := r.journalLogView
	r.journalLogView = changeTag{}
	if r.solo() {
		return
	}
	head := r.commitMin
	if t.logView > r.logView && t.head >= r.commitMin && r.holdsHead(Header{Op: t.head, Checksum: t.headChecksum}) {
		r.logView = t.logView
		r.view = max(r.view, t.logView)
		r.logViewHead = Header{Op: t.head, Checksum: t.headChecksum}
		head = t.head
		// Above the head only the log view's own prepares belong to it.
		for head < r.op {
			if e := r.log.at(head + 1); e == nil || e.header.View != t.logView {
				break
			}
			head++
		}
		r.truncate(head)
	} else if r.journalLogViewReplaced {
		r.journalLogViewReplaced = false
		r.logViewLost = true
		return
	} else if h := r.journalOwnHead; h.Op > r.checkpointOp && !r.holdsHead(h) {
		// The journal names the head the durable log view's log started at,
		// and its chain no longer reaches it: records of that log were lost
		// (a faulty disk read a slot's header record back stale while a
		// torn prepare took its other copy). Voting with this log view
		// would claim, for it, a log that ends below ops it held, which
		// may be committed (seed 59542: replica 5 voted with log view 11
		// ending at op 266 when view 11 had started at op 288, without op
		// 283 committed in view 8). It recovers a log from its peers.
		r.journalLogViewReplaced = false
		r.logViewLost = true
		return
	}
	r.journalLogViewReplaced = false
	for head < r.op {
		if e := r.log.at(head + 1); e == nil || e.header.View > r.logView {
			break
		}
		head++
	}
	r.truncate(head)
	if !r.journalDamaged {
		r.dropStrays()
	}
}

// holdsHead reports whether the log holds h (op and checksum): the head a
// log view's log started at.
func (r *Replica) holdsHead(h Header) bool {
	got, ok := r.header(h.Op)
	return ok && got.Checksum == h.Checksum
}

// dropStrays records the removal of what the journal held above the log
// at open (journalStrays) that is still above it: left there, a log that
// later reaches the hole below them would chain them back in at a restart,
// as ops of a log view they never belonged to. A replica whose journal is
// damaged keeps them (they show the damage) until a view's log is
// installed (installChain).
func (r *Replica) dropStrays() {
	for _, op := range r.journalStrays {
		if op > r.op && op > r.checkpointOp && op <= r.opPrepareMax() && r.log.at(op) == nil {
			r.journalHeaderChange(op, nil, false)
		}
	}
	r.journalStrays = r.journalStrays[:0]
}

// sealedOther reports whether rec is the HeaderDurable record of a prepare
// of op p.Op, of a view up to the log view, other than p: an op the
// replica may have acked in its log view, which p overwrote.
func (r *Replica) sealedOther(rec *journal.HeaderRecord, p *Message) bool {
	if rec.Err != nil || rec.Kind != journal.HeaderDurable || rec.Op != p.Op || r.journal.Slot(rec.Op) != rec.Slot {
		return false
	}
	var hdr Header
	return hdr.Decode(rec.Header) == nil && hdr.Checksum != p.Checksum && hdr.View <= r.logView
}

// recordNames reports whether rec is a valid header record naming h, and
// its kind.
func recordNames(rec *journal.HeaderRecord, h *Header) (bool, journal.HeaderKind) {
	if rec == nil || rec.Err != nil || rec.Op != h.Op || rec.Kind == journal.HeaderRemoved {
		return false, 0
	}
	var hdr Header
	return hdr.Decode(rec.Header) == nil && hdr.Checksum == h.Checksum, rec.Kind
}

// rerecordLoaded writes again what the journal reloaded in one zone only
// (the other write was lost in the crash, or its zone read back faulty):
// the HeaderDurable record of a durable prepare, so that the op is sealed
// before this replica acks it, both copies of an installed header, and
// both copies of the HeaderDurable record of a prepare that read back
// faulty (which must keep saying the op may have been acked).
func (r *Replica) rerecordLoaded() {
	r.log.each(func(_ uint64, e *logEntry) {
		switch {
		case !e.present || e.header.Op <= r.checkpointOp:
		case e.durable && !e.sealWritten:
			r.writeRedundantHeader(e)
		case e.prepare == nil && !e.faulty && !e.recorded:
			h := e.header
			r.journalHeaderChange(h.Op, &h, false)
		case e.prepare == nil && e.faulty && !e.recorded:
			r.journalRecordFaulty(e)
		}
	})
}

// ErrJournalFaulty reports a replica of a group of one whose journal holds
// a durable prepare that fails its checksum: it may have been acknowledged
// and no peer can repair it.
var ErrJournalFaulty = errors.New("vsr: a durable prepare of a group of one fails its checksum")

// soloFaulty returns ErrJournalFaulty when the replica is a persisted
// group of one whose reloaded log holds a faulty prepare (named durably by
// the journal, failing its checksum) before its first missing one: that
// op was synced and may have been acknowledged, and without a peer
// nothing can repair it. resume would cut the log before it, forgetting
// every acknowledged op from there on and serving a shorter history as a
// healthy one; the replica stops instead, before it writes anything, so
// the journal stays as found.
func (r *Replica) soloFaulty() error {
	if !r.solo() {
		return nil
	}
	for op := r.commitMin + 1; op <= r.op; op++ {
		e := r.log.at(op)
		if e != nil && e.faulty {
			return fmt.Errorf("%w: op %d of ops up to %d", ErrJournalFaulty, op, r.op)
		}
		if e == nil || e.prepare == nil {
			return nil
		}
	}
	return nil
}

// resume chooses the status a restarted replica starts in.
func (r *Replica) resume() {
	r.timestampMax = 0
	switch {
	case r.solo():
		// A singleton commits whatever it made durable. It has no peer to
		// repair from, so the log ends before the first op whose prepare
		// did not survive: that op was never synced, hence never acked.
		// (A faulty prepare stopped the open before: soloFaulty.)
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
	case !r.persisted() || r.journalDamaged || r.logViewLost || r.memoryLost:
		// A persisted replica read its view promise from its superblock; one
		// in memory mode lost it with the rest, and so did one that lost
		// its superblock (memory_lost.go).
		if r.logViewLost && r.persisted() && !r.sb.durable.LogViewLost {
			r.requestSuperblock() // the loss adoptJournalLogView found
		}
		r.startRecovery(r.persisted() && !r.memoryLost)
	case r.logView == r.view && !r.isPrimaryOf(r.view):
		r.status = StatusNormal
		r.enterNormal()
		r.afterLogChange()
	default:
		r.startViewChange(r.view + 1)
	}
}
