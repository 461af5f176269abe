package partition

import "github.com/stratabroker/strata/net/wire"

// FlushDue reports whether the unflushed batches reached either of the
// topic's thresholds (messages_required_to_save,
// size_of_messages_required_to_save). It depends only on applied state, so
// every replica reaches the same answer after the same op.
func (m *Machine) FlushDue() bool {
	return m.unflushedMessages >= uint64(m.cfg.MessagesRequiredToSave) ||
		m.unflushedBytes >= m.cfg.SizeOfMessagesRequiredToSaveBytes
}

// Unflushed returns the stamped batches not yet reported flushed, in offset
// order. The slices are shared with the machine: read-only, valid until
// MarkFlushed, a purge (Apply) or Restore.
func (m *Machine) Unflushed() [][]byte { return m.unflushed }

// UnflushedCounts returns the messages and bytes waiting in Unflushed.
func (m *Machine) UnflushedCounts() (messages, bytes uint64) {
	return m.unflushedMessages, m.unflushedBytes
}

// MarkFlushed releases every unflushed batch whose last offset is at most
// uptoOffset: the server calls it once it has carried out an EffectFlush
// (the batches are written to segments), with the effect's UpTo. It is
// the acknowledgement of an effect, not a change of its own: where the
// flush frontier stands follows from the operations applied. (The server
// also flushes what is left when it closes the partition for good.)
func (m *Machine) MarkFlushed(uptoOffset uint64) {
	released := 0
	for _, b := range m.unflushed {
		last, ok := lastOffset(b)
		if !ok || last > uptoOffset {
			break
		}
		m.unflushedMessages -= uint64(wire.BatchView(b).MessageCount())
		m.unflushedBytes -= uint64(len(b))
		released++
	}
	if released == 0 {
		return
	}
	m.returnBuffers(released)
	clear(m.unflushed[:released])
	m.unflushed = m.unflushed[released:]
	m.unflushedTokens = m.unflushedTokens[released:]
	if len(m.unflushed) == 0 {
		m.unflushed = nil
		m.unflushedTokens = nil
	}
	if invariantsEnabled {
		m.checkInvariants()
	}
}

// lastOffset returns the offset of a stamped batch's last message.
func lastOffset(b []byte) (uint64, bool) {
	if len(b) < wire.BatchHeaderSize {
		return 0, false
	}
	v := wire.BatchView(b)
	if v.MessageCount() == 0 {
		return 0, false
	}
	return v.BaseOffset() + uint64(v.MessageCount()) - 1, true
}

// borrow returns n bytes for a batch the machine keeps, from cfg.Buffers
// when set, and the token to return them with.
func (m *Machine) borrow(n int) ([]byte, any) {
	if m.cfg.Buffers == nil {
		return make([]byte, n), nil
	}
	return m.cfg.Buffers.Borrow(n)
}

// returnBuffers hands the first n unflushed batches' memory back to
// cfg.Buffers and forgets their tokens.
func (m *Machine) returnBuffers(n int) {
	for i := 0; i < n && i < len(m.unflushedTokens); i++ {
		if token := m.unflushedTokens[i]; token != nil {
			m.cfg.Buffers.Return(token)
		}
		m.unflushedTokens[i] = nil
	}
}

// ReleaseBuffers hands the memory of every unflushed batch back to
// cfg.Buffers and drops the batches from memory: the server calls it when
// it closes the partition (shutdown, deletion), after the flush it wanted.
func (m *Machine) ReleaseBuffers() {
	m.returnBuffers(len(m.unflushed))
	m.unflushed, m.unflushedTokens = nil, nil
	m.unflushedMessages, m.unflushedBytes = 0, 0
}
