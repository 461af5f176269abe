package partition

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire"
)

// checkInvariants verifies the machine's invariants and panics on a
// violation, which can only be a bug in this package. Apply and
// MarkFlushed call it when built with -tags invariants.
func (m *Machine) checkInvariants() {
	if err := m.invariantError(); err != nil {
		panic(fmt.Sprintf("partition: invariant broken after op %d: %v", m.lastOp, err))
	}
}

// invariantError returns the first broken invariant, or nil: the
// unflushed batches are contiguous, start at or after firstOffset, end at
// nextOffset - 1, carry this partition's id and non-decreasing base
// timestamps, and match the unflushed totals; stored offsets lie below
// nextOffset.
func (m *Machine) invariantError() error {
	if m.messagesCount > m.nextOffset {
		return fmt.Errorf("%d messages below next offset %d", m.messagesCount, m.nextOffset)
	}
	if m.firstOffset > m.nextOffset {
		return fmt.Errorf("first offset %d beyond next offset %d", m.firstOffset, m.nextOffset)
	}
	if len(m.unflushed) > 0 && wire.BatchView(m.unflushed[0]).BaseOffset() < m.firstOffset {
		return fmt.Errorf("unflushed batches start at %d, below the first offset %d", wire.BatchView(m.unflushed[0]).BaseOffset(), m.firstOffset)
	}
	if len(m.unflushedTokens) != len(m.unflushed) {
		return fmt.Errorf("%d buffer tokens for %d unflushed batches", len(m.unflushedTokens), len(m.unflushed))
	}
	var messages, size, timestamp uint64
	expected := uint64(0)
	for i, b := range m.unflushed {
		v := wire.BatchView(b)
		last, ok := lastOffset(b)
		if !ok || v.PartitionID() != uint64(m.cfg.PartitionID) || v.BatchLength() != uint64(len(b)) {
			return fmt.Errorf("unflushed batch %d header", i)
		}
		if i > 0 && v.BaseOffset() != expected {
			return fmt.Errorf("unflushed batch %d starts at %d, want %d", i, v.BaseOffset(), expected)
		}
		if v.BaseTimestamp() < timestamp || v.BaseTimestamp() > m.lastTimestamp {
			return fmt.Errorf("unflushed batch %d timestamp %d", i, v.BaseTimestamp())
		}
		timestamp = v.BaseTimestamp()
		expected = last + 1
		messages += uint64(v.MessageCount())
		size += uint64(len(b))
	}
	if len(m.unflushed) > 0 && expected != m.nextOffset {
		return fmt.Errorf("unflushed batches end at %d, next offset %d", expected, m.nextOffset)
	}
	if messages != m.unflushedMessages || size != m.unflushedBytes {
		return fmt.Errorf("unflushed totals %d/%d, counted %d/%d", m.unflushedMessages, m.unflushedBytes, messages, size)
	}
	beyond := 0
	for _, offset := range m.offsets {
		if offset >= m.nextOffset {
			beyond++
		}
	}
	if beyond > 0 {
		return fmt.Errorf("%d stored offsets beyond next offset %d", beyond, m.nextOffset)
	}
	return nil
}
