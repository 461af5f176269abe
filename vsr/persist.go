package vsr

import (
	"encoding/binary"
	"fmt"

	"github.com/stratabroker/strata/journal"
)

// persist writes the prepare at op to the journal (persisted mode only).
// The write, then a sync, make the slot durable; an ack waits for that.
func (r *Replica) persist(op uint64) {
	if !r.persisted() {
		return
	}
	e := r.log.at(op)
	if e == nil || e.prepare == nil || e.written {
		return
	}
	if e.writing {
		e.rewrite = true
		return
	}
	r.assertInWindow(op)
	// A planted BugAcceptCorruptBody takes this assertion out too, so
	// that the simulator's corruption check is what must find it.
	if invariants && !r.cfg.Bugs.Has(BugAcceptCorruptBody) && (!e.prepare.Valid() || e.prepare.Checksum != e.header.Checksum || e.prepare.Op != op) {
		panic(fmt.Sprintf("vsr: journal write of an invalid prepare at op %d", op))
	}
	e.writing = true
	gen := e.gen
	r.journal.WritePrepare(op, r.nextJournalSeq(), e.prepare.Encode(nil), func(err error) {
		slot := r.log.entry(op)
		slot.writing = false
		if err != nil {
			r.fail(fmt.Errorf("journal write op %d: %w", op, err))
			return
		}
		if slot.gen == gen && slot.present {
			slot.written = true
			r.requestSync()
		}
		if slot.rewrite {
			slot.rewrite = false
			if slot.present {
				r.persist(slot.header.Op)
			}
		}
	})
}

// syncState batches journal syncs: one in flight, one more pending.
type syncState struct {
	syncing bool
	pending bool
	// lazy: a seal was written (Config.SealLazily) that no sync covers
	// yet; the next sync does (SyncSeals forces one).
	lazy bool
}

// SyncSeals starts a sync if a seal written lazily (Config.SealLazily)
// waits for one; a host calls it when idle, so that seals do not wait
// for the next op. It is a no-op otherwise.
func (r *Replica) SyncSeals() {
	if r.syncs.lazy && r.lastError == nil {
		r.requestSync()
	}
}

// SealsPending reports whether a seal written lazily waits for a sync.
func (r *Replica) SealsPending() bool { return r.syncs.lazy }

// requestSync syncs the storage and then marks every slot written before
// the sync was submitted as durable.
func (r *Replica) requestSync() {
	if r.syncs.syncing {
		r.syncs.pending = true
		return
	}
	r.syncs.syncing = true
	r.syncs.pending = false
	r.syncs.lazy = false
	type markKind uint8
	const (
		markPrepare markKind = iota // the prepare was written
		markHeader                  // a header record adopted from a peer
		markSeal                    // the HeaderDurable record of a durable prepare
	)
	type mark struct {
		slot, gen uint64
		kind      markKind
	}
	var marks []mark
	r.log.each(func(i uint64, e *logEntry) {
		switch {
		case e.present && e.written && !e.durable:
			marks = append(marks, mark{i, e.gen, markPrepare})
		case e.present && e.headerWritten && !e.recorded:
			marks = append(marks, mark{i, e.gen, markHeader})
		}
		if e.present && e.sealWritten && !e.sealed {
			marks = append(marks, mark{i, e.gen, markSeal})
		}
	})
	r.storage.Sync(func(err error) {
		r.syncs.syncing = false
		if err != nil {
			r.fail(fmt.Errorf("journal sync: %w", err))
			return
		}
		for _, m := range marks {
			e := r.log.slot(m.slot)
			if e == nil || e.gen != m.gen || !e.present {
				continue
			}
			switch m.kind {
			case markPrepare:
				// Recorded only once sealed (or already, by an installed
				// header of this prepare in both zones).
				e.durable = true
				r.writeRedundantHeader(e)
			case markHeader:
				e.recorded = true
			case markSeal:
				if !e.durable {
					panic(fmt.Sprintf("vsr: op %d sealed before its prepare is durable", e.header.Op))
				}
				e.sealed = true
				e.recorded = true
			}
		}
		if r.sb.waitJournal {
			r.sb.waitJournal = false
			r.requestSuperblock()
		}
		r.afterLogChange()
		if r.syncs.pending {
			r.requestSync()
		}
	})
}

// recordedHead returns the highest op up to which every op above the
// checkpoint is recorded durably in both zones of the journal (persisted
// mode, logEntry.recorded): the log a
// restart reloads reaches at least this op. The in-memory log is a chain,
// so the journal's records of these ops chain from the checkpoint.
func (r *Replica) recordedHead() uint64 { return r.recordedUpTo(false) }

// recordedUpTo walks the log up from the checkpoint while each op is
// recorded (recordedHead); with ackable it also stops below an op whose
// prepare write is in flight (ackableHead).
func (r *Replica) recordedUpTo(ackable bool) uint64 {
	op := r.checkpointOp
	for op < r.op {
		e := r.log.at(op + 1)
		// A durable prepare reloads without its seal (SealLazily).
		if e == nil || !(e.recorded || (r.cfg.SealLazily && e.durable)) {
			break
		}
		if ackable && e.prepare != nil && !e.durable && (e.writing || e.written) {
			break
		}
		op++
	}
	return op
}

// ackableHead returns the highest op up to which this replica may count
// ops as held (ack them, or count its own ack as primary): recordedHead,
// but stopping below an op whose prepare write over the prepare zone's
// copy of its installed header is in flight (submitted, not yet durable).
// That write may tear in a crash, and a faulty disk may read the header
// zone's copy back stale: neither zone then names the op. A restart tells
// such a hole from a new op's write in flight only by an ack above it
// older than the torn write (tornPrepareDamage); an op acked while the
// write was in flight would be newer, and the replica would resume below
// it.
func (r *Replica) ackableHead() uint64 { return r.recordedUpTo(true) }

// writeRedundantHeader records the header of a durable prepare in the
// header zone (a HeaderDurable record). Once a later sync makes it durable
// the entry is sealed and may be acked: until then a restart that finds
// the prepare's sector unreadable would not know the op at all, and would
// vote with a log that ends below an op it acknowledged.
func (r *Replica) writeRedundantHeader(e *logEntry) {
	if !e.durable || e.sealWritten {
		panic(fmt.Sprintf("vsr: redundant header of op %d written twice or before its prepare is durable", e.header.Op))
	}
	header := make([]byte, HeaderSize)
	e.header.Encode(header)
	op, gen := e.header.Op, e.gen
	r.journal.WriteHeader(op, r.nextJournalSeq(), journal.HeaderDurable, header, func(err error) {
		if err != nil {
			r.fail(fmt.Errorf("journal header write op %d: %w", op, err))
			return
		}
		if e := r.log.entry(op); e.present && e.gen == gen && e.header.Op == op {
			e.sealWritten = true
			if r.cfg.SealLazily && !r.syncs.syncing {
				// The next sync covers it (the op is held already).
				r.syncs.lazy = true
				return
			}
			r.requestSync()
		}
	})
}

// nextJournalSeq returns the write sequence of the next journal record.
func (r *Replica) nextJournalSeq() uint64 {
	r.journalSeq++
	return r.journalSeq - 1
}

// journalHeaderChange records in the journal (persisted mode) that the
// log's content at op changed without a durable prepare: a header adopted
// from a peer (h set) or a removal (h nil). The superblock that makes the
// new log view durable waits for these writes, so that a restart never
// resurrects a prepare the log had replaced. Each record names the log
// view it belongs to and the head that log view's log started at
// (changeTag): a restart that finds a change of a log view its superblock
// does not hold knows the journal took that log view's log, and adopts it
// if the journal holds all of it (adoptJournalLogView). replaced says the
// change overwrites an op the log held (which the replica may have acked
// in its durable log view): a restart that cannot adopt the new log view
// then no longer holds the log of its durable one.
func (r *Replica) journalHeaderChange(op uint64, h *Header, replaced bool) {
	if !r.persisted() {
		return
	}
	kind := journal.HeaderRemoved
	payload := make([]byte, changeTagSize)
	if h != nil {
		kind = journal.HeaderInstalled
		payload = make([]byte, HeaderSize+changeTagSize)
		h.Encode(payload)
	}
	t := changeTag{logView: r.logView, head: r.logViewHead.Op, headChecksum: r.logViewHead.Checksum, replaced: replaced}
	t.encode(payload[len(payload)-changeTagSize:])
	r.journalRecord(op, h != nil, func(done func(error)) {
		r.journal.WriteHeader(op, r.nextJournalSeq(), kind, payload, done)
	})
}

// journalRecordFaulty writes the HeaderDurable record of an entry whose
// body is missing but which this replica may have acked (faulty: a prepare
// that read back faulty at open, or an op a recovery took back) to both
// zones of its slot, so that a restart still never nacks it, and so that
// the entry is recorded: a log view whose log holds it may then become
// durable without waiting for its body, which a replica in a view change
// does not repair.
func (r *Replica) journalRecordFaulty(e *logEntry) {
	if !r.persisted() || !e.faulty || e.prepare != nil {
		panic(fmt.Sprintf("vsr: op %d recorded as faulty while its body is present", e.header.Op))
	}
	op := e.header.Op
	payload := make([]byte, HeaderSize)
	e.header.Encode(payload)
	r.journalRecord(op, true, func(done func(error)) {
		r.journal.WriteHeaderCopies(op, r.nextJournalSeq(), journal.HeaderDurable, payload, done)
	})
}

// journalRecord runs write, a journal header write of op that a superblock
// waits for; names reports that it names the slot's entry (which is
// recorded once a sync covers the write).
func (r *Replica) journalRecord(op uint64, names bool, write func(done func(error))) {
	gen := r.log.entry(op).gen
	r.installWrites++
	write(func(err error) {
		r.installWrites--
		if err != nil {
			r.fail(fmt.Errorf("journal header change op %d: %w", op, err))
			return
		}
		if e := r.log.entry(op); names && e.present && e.gen == gen {
			// The entry is recorded once a sync covers this write.
			e.headerWritten = true
			r.requestSync()
		}
		if r.installWrites == 0 && r.sb.waitJournal {
			r.sb.waitJournal = false
			r.requestSuperblock()
		}
	})
}

// changeTag ends the payload of an installed header's or a removal's
// journal record: the log view the change belongs to, the head (op and
// checksum) the log of that log view started at when the replica took it
// (a StartView's, or the log a recovery adopted), and whether the change
// replaced an op the log held.
type changeTag struct {
	logView      uint64
	head         uint64
	headChecksum Uint128
	replaced     bool
}

// changeTagSize is the encoded size of a changeTag; changeTagSizeV1 that of
// a tag written without its flags (taken as replacing, the safe reading).
const (
	changeTagSize   = 40
	changeTagSizeV1 = 32
)

// changeTagReplaced is the flag of a change that replaced an op of the log.
const changeTagReplaced = 1

func (t *changeTag) encode(buf []byte) {
	le := binary.LittleEndian
	le.PutUint64(buf[0:], t.logView)
	le.PutUint64(buf[8:], t.head)
	putUint128(buf[16:], t.headChecksum)
	var flags uint64
	if t.replaced {
		flags |= changeTagReplaced
	}
	le.PutUint64(buf[32:], flags)
}

// recordTag returns the tag of a valid HeaderInstalled or HeaderRemoved
// record, false for another record or one written without a tag.
func recordTag(rec *journal.HeaderRecord) (changeTag, bool) {
	if rec == nil || rec.Err != nil || (rec.Kind != journal.HeaderInstalled && rec.Kind != journal.HeaderRemoved) {
		return changeTag{}, false
	}
	n := len(rec.Header)
	if rec.Kind == journal.HeaderInstalled {
		n -= HeaderSize
	}
	if n != changeTagSize && n != changeTagSizeV1 {
		return changeTag{}, false
	}
	buf := rec.Header[len(rec.Header)-n:]
	le := binary.LittleEndian
	t := changeTag{logView: le.Uint64(buf[0:]), head: le.Uint64(buf[8:]), headChecksum: getUint128(buf[16:]), replaced: true}
	if n == changeTagSize {
		t.replaced = le.Uint64(buf[32:])&changeTagReplaced != 0
	}
	return t, true
}

// removeOp drops op from the log and records the removal in the journal.
func (r *Replica) removeOp(op uint64) {
	e := r.log.at(op)
	if e == nil {
		return
	}
	replaced := e.mayBeAcked()
	r.log.remove(op)
	r.journalHeaderChange(op, nil, replaced)
}

// installHeader sets h in the log; if that replaced the slot's content
// and no body came with it, the journal records the installed header.
func (r *Replica) installHeader(h *Header) {
	old := r.log.at(h.Op)
	if old != nil && old.header.Checksum == h.Checksum {
		return
	}
	r.assertInWindow(h.Op)
	replaced := old != nil && old.mayBeAcked() // before setHeader resets the slot
	r.log.setHeader(h)
	r.journalHeaderChange(h.Op, h, replaced)
}

// opPrepareMax is the highest op the log may hold. The journal slot of any
// higher op still holds an op above the durable checkpoint, which a
// restart replays from the checkpoint: overwriting it would cut the log a
// restarted replica reloads short of what it acknowledged or voted for.
func (r *Replica) opPrepareMax() uint64 { return r.checkpointOp + r.cfg.JournalSlots }

// assertInWindow panics if op may not enter the log (opPrepareMax).
func (r *Replica) assertInWindow(op uint64) {
	if op > r.opPrepareMax() {
		panic(fmt.Sprintf("vsr: op %d beyond the journal window of checkpoint %d", op, r.checkpointOp))
	}
}
