package vsr

import (
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
}

// requestSync syncs the storage and then marks every slot written before
// the sync was submitted as durable.
func (r *Replica) requestSync() {
	if r.syncs.syncing {
		r.syncs.pending = true
		return
	}
	r.syncs.syncing = true
	r.syncs.pending = false
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
	for i := range r.log.entries {
		e := &r.log.entries[i]
		switch {
		case e.present && e.written && !e.durable:
			marks = append(marks, mark{uint64(i), e.gen, markPrepare})
		case e.present && e.headerWritten && !e.recorded:
			marks = append(marks, mark{uint64(i), e.gen, markHeader})
		}
		if e.present && e.sealWritten && !e.sealed {
			marks = append(marks, mark{uint64(i), e.gen, markSeal})
		}
	}
	r.storage.Sync(func(err error) {
		r.syncs.syncing = false
		if err != nil {
			r.fail(fmt.Errorf("journal sync: %w", err))
			return
		}
		for _, m := range marks {
			e := &r.log.entries[m.slot]
			if e.gen != m.gen || !e.present {
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
func (r *Replica) recordedHead() uint64 {
	op := r.checkpointOp
	for op < r.op {
		e := r.log.at(op + 1)
		if e == nil || !e.recorded {
			break
		}
		op++
	}
	return op
}

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
// resurrects a prepare the log had replaced.
func (r *Replica) journalHeaderChange(op uint64, h *Header) {
	if !r.persisted() {
		return
	}
	kind := journal.HeaderRemoved
	var payload []byte
	gen := r.log.entry(op).gen
	if h != nil {
		kind = journal.HeaderInstalled
		payload = make([]byte, HeaderSize)
		h.Encode(payload)
	}
	r.installWrites++
	r.journal.WriteHeader(op, r.nextJournalSeq(), kind, payload, func(err error) {
		r.installWrites--
		if err != nil {
			r.fail(fmt.Errorf("journal header change op %d: %w", op, err))
			return
		}
		if e := r.log.entry(op); h != nil && e.present && e.gen == gen {
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

// removeOp drops op from the log and records the removal in the journal.
func (r *Replica) removeOp(op uint64) {
	if r.log.at(op) == nil {
		return
	}
	r.log.remove(op)
	r.journalHeaderChange(op, nil)
}

// installHeader sets h in the log; if that replaced the slot's content
// and no body came with it, the journal records the installed header.
func (r *Replica) installHeader(h *Header) {
	old := r.log.at(h.Op)
	if old != nil && old.header.Checksum == h.Checksum {
		return
	}
	r.assertInWindow(h.Op)
	r.log.setHeader(h)
	r.journalHeaderChange(h.Op, h)
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
