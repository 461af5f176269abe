package vsr

// logEntry is one journal slot in memory: the header of the op it holds,
// its prepare once the body is present, the acknowledgements a primary
// collected for it, and the persistence state of its journal write.
type logEntry struct {
	header Header
	// present reports whether header is valid.
	present bool
	// prepare is nil while the body is missing (it must be repaired).
	// Invariant: prepare == nil || prepare.Checksum == header.Checksum.
	prepare *Message
	// oks has bit i set when replica i acked this prepare in this view.
	oks uint8
	// gen changes whenever the slot's content changes, so that stale
	// write and sync completions are recognised.
	gen     uint64
	writing bool
	rewrite bool
	written bool
	// durable reports that the prepare (with its body) is durable.
	durable bool
	// headerWritten reports that a header record of this entry (adopted
	// from a peer, without its body) completed its journal write.
	headerWritten bool
	// recorded reports that the journal durably names this entry in both
	// zones of its slot, so that a restart reloads it even if one of them
	// is faulty: a prepare and its HeaderDurable record (sealed), or an
	// installed header, which is written to both zones (with a prepare
	// written over one copy later, both still name it).
	// Invariant: sealed implies recorded.
	recorded bool
	// sealWritten reports that a HeaderDurable record of this prepare
	// (written once the prepare was durable) completed its journal write.
	sealWritten bool
	// sealed reports that the HeaderDurable record is durable too: both
	// zones of the slot name the op, so that a restart that finds one of
	// them faulty (a latent sector, a stale read) still knows the op and
	// that it may have been acked, and repairs its body instead of
	// forgetting it. A persisted replica acks only sealed prepares.
	// Invariant: sealed implies durable and recorded.
	sealed bool
	// faulty marks a prepare that was durable but failed its checksum on
	// read: it may have been acked, so it is never nacked.
	faulty bool
}

// mayBeAcked reports whether this replica may have acked the entry's op: a
// persisted replica acks only durable (sealed) prepares, and a faulty
// entry may have been acked before its body was lost.
func (e *logEntry) mayBeAcked() bool { return e.durable || e.faulty }

// log is the in-memory ring of journal slots; slot = op % len(entries).
type log struct {
	entries []logEntry
	genNext uint64
}

func (l *log) init(slots uint64) { l.entries = make([]logEntry, slots) }

func (l *log) entry(op uint64) *logEntry { return &l.entries[op%uint64(len(l.entries))] }

// at returns the entry holding op, or nil.
func (l *log) at(op uint64) *logEntry {
	e := l.entry(op)
	if e.present && e.header.Op == op {
		return e
	}
	return nil
}

func (l *log) header(op uint64) (*Header, bool) {
	if e := l.at(op); e != nil {
		return &e.header, true
	}
	return nil, false
}

func (l *log) prepare(op uint64) *Message {
	if e := l.at(op); e != nil {
		return e.prepare
	}
	return nil
}

// setHeader installs h in its slot. An entry with the same checksum keeps
// its body and persistence state; anything else is replaced.
func (l *log) setHeader(h *Header) *logEntry {
	e := l.entry(h.Op)
	if e.present && e.header.Checksum == h.Checksum {
		return e
	}
	l.genNext++
	*e = logEntry{header: *h, present: true, gen: l.genNext, writing: e.writing, rewrite: e.writing}
	return e
}

// setPrepare installs a prepare with its body, replacing the slot's
// content unless it already holds the same prepare with a body.
func (l *log) setPrepare(m *Message) *logEntry {
	e := l.setHeader(&m.Header)
	if e.prepare == nil {
		e.prepare = m
	}
	return e
}

// remove forgets op if its slot holds it.
func (l *log) remove(op uint64) {
	if e := l.at(op); e != nil {
		l.genNext++
		*e = logEntry{gen: l.genNext, writing: e.writing}
	}
}
