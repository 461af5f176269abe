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

// idle reports whether the entry holds nothing: no op and no journal
// write in flight, so that its memory may go.
func (e *logEntry) idle() bool { return !e.present && !e.writing && !e.rewrite }

// logChunkSlots is how many consecutive slots are allocated together.
const logChunkSlots = 16

// logChunk holds logChunkSlots consecutive slots.
type logChunk [logChunkSlots]logEntry

// log is the in-memory ring of journal slots; slot = op % slots.
//
// Its memory follows use, not the journal's size: the slots are
// allocated in chunks of logChunkSlots when an op first takes one, so
// that a group that holds few ops (an idle partition, a group of one
// whose checkpoint covered its log: release) holds a few chunks, not
// slots x 200 bytes. A chunk never moves while allocated, so a pointer
// to an entry stays valid as a fixed ring's would; only release frees
// chunks, those with no op and no write in flight. Slot numbering and
// the order of iteration (each) are the fixed ring's.
type log struct {
	chunks  []*logChunk
	slots   uint64
	genNext uint64
	// empty stands for a slot whose chunk is not allocated: entry returns
	// it cleared, so that a reader sees an empty slot.
	empty logEntry
	// bytes is the sum of the sizes of the present ops above floor
	// (walBytes), kept as the log changes so that it is read in O(1).
	floor uint64
	bytes uint64
}

func (l *log) init(slots uint64) {
	l.slots = slots
	l.chunks = make([]*logChunk, (slots+logChunkSlots-1)/logChunkSlots)
}

// slot returns the entry of slot i, nil while its chunk is not allocated.
func (l *log) slot(i uint64) *logEntry {
	if c := l.chunks[i/logChunkSlots]; c != nil {
		return &c[i%logChunkSlots]
	}
	return nil
}

// entry returns op's slot; while its chunk is not allocated, an empty
// entry that is not part of the log (writes to it are lost).
func (l *log) entry(op uint64) *logEntry {
	if e := l.slot(op % l.slots); e != nil {
		return e
	}
	l.empty = logEntry{}
	return &l.empty
}

// claim returns op's slot, allocating its chunk if needed.
func (l *log) claim(op uint64) *logEntry {
	i := op % l.slots
	c := l.chunks[i/logChunkSlots]
	if c == nil {
		c = new(logChunk)
		l.chunks[i/logChunkSlots] = c
	}
	return &c[i%logChunkSlots]
}

// each calls f with every allocated slot in slot order (as a fixed ring
// is iterated); f may change the log's content but not release it.
func (l *log) each(f func(slot uint64, e *logEntry)) {
	for ci, c := range l.chunks {
		if c == nil {
			continue
		}
		for j := range c {
			if i := uint64(ci)*logChunkSlots + uint64(j); i < l.slots {
				f(i, &c[j])
			}
		}
	}
}

// at returns the entry holding op, or nil.
func (l *log) at(op uint64) *logEntry {
	e := l.slot(op % l.slots)
	if e != nil && e.present && e.header.Op == op {
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
	e := l.claim(h.Op)
	if e.present && e.header.Checksum == h.Checksum {
		return e
	}
	l.forget(e)
	l.genNext++
	*e = logEntry{header: *h, present: true, gen: l.genNext, writing: e.writing, rewrite: e.writing}
	if h.Op > l.floor {
		l.bytes += uint64(h.Size)
	}
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
		l.forget(e)
		l.genNext++
		*e = logEntry{gen: l.genNext, writing: e.writing}
	}
}

// forget takes e's op out of bytes before e changes.
func (l *log) forget(e *logEntry) {
	if e.present && e.header.Op > l.floor {
		l.bytes -= uint64(e.header.Size)
	}
}

// bytesAbove returns the sum of the sizes of the present ops above
// floor. Raising the floor costs the ops it passes (each op once, as the
// floor only rises in the normal course); lowering it recounts the log.
func (l *log) bytesAbove(floor uint64) uint64 {
	switch {
	case floor < l.floor || floor-l.floor > l.slots:
		l.recount(floor)
	case floor > l.floor:
		for op := l.floor + 1; op <= floor; op++ {
			if e := l.at(op); e != nil {
				l.bytes -= uint64(e.header.Size)
			}
		}
		l.floor = floor
	}
	return l.bytes
}

// recount sets floor and recomputes bytes from the entries.
func (l *log) recount(floor uint64) {
	l.floor, l.bytes = floor, 0
	l.each(func(_ uint64, e *logEntry) {
		if e.present && e.header.Op > floor {
			l.bytes += uint64(e.header.Size)
		}
	})
}

// release forgets every op up to op and frees the chunks left with
// nothing in them: the log of a group whose checkpoint covers those ops
// and that no peer asks for them (Config.ReleaseApplied).
func (l *log) release(op uint64) {
	for ci, c := range l.chunks {
		if c == nil {
			continue
		}
		idle := true
		for j := range c {
			e := &c[j]
			if e.present && e.header.Op <= op {
				l.remove(e.header.Op)
			}
			idle = idle && e.idle()
		}
		if idle {
			l.chunks[ci] = nil
		}
	}
}

// releaseOp forgets op and frees its chunk if nothing is left in it.
func (l *log) releaseOp(op uint64) {
	l.remove(op)
	ci := (op % l.slots) / logChunkSlots
	c := l.chunks[ci]
	if c == nil {
		return
	}
	for j := range c {
		if !c[j].idle() {
			return
		}
	}
	l.chunks[ci] = nil
}

// releaseBelow runs once op is applied in a group that releases applied
// ops (Config.ReleaseApplied: a group of one, whose ops nobody asks for):
// nothing needs the op below any more (the next prepare chains to op, a
// checkpoint is taken at op or later), except the op its host keeps for
// a checkpoint, which the checkpoint's release lets go. The log of such a
// group holds its applied op and its pipeline, not a journal's worth.
func (r *Replica) releaseBelow(op uint64) {
	if below := op - 1; below > 0 && below != r.keep {
		r.log.releaseOp(below)
	}
}

// KeepForCheckpoint tells a group that releases applied ops
// (Config.ReleaseApplied) that its host will checkpoint op (CheckpointAt,
// which needs op's header): the log keeps op until a checkpoint covers
// it. Called while op is applied (from StateMachine.Apply of op), before
// its entry could go.
func (r *Replica) KeepForCheckpoint(op uint64) { r.keep = op }
