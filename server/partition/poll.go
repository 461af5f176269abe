package partition

import (
	"errors"

	"github.com/stratabroker/strata/net/wire"
)

// Polling strategy kinds of §4.5.
const (
	StrategyOffset    uint8 = 1
	StrategyTimestamp uint8 = 2
	StrategyFirst     uint8 = 3
	StrategyLast      uint8 = 4
	StrategyNext      uint8 = 5
)

// ErrUnknownStrategy reports a polling strategy kind outside §4.5.
var ErrUnknownStrategy = errors.New("partition: unknown polling strategy")

// StartOffset returns the offset a poll starts at (§4.5, §6.6) given the
// applied state and the consumer's stored offset. For StrategyTimestamp it
// returns needsTimestampLookup = true and no offset: the server asks
// storage (and UnflushedOffsetAtTimestamp) for the first message whose
// batch base_timestamp is at least value.
func (m *Machine) StartOffset(strategy uint8, value uint64, count uint32, consumer ConsumerKey) (start uint64, needsTimestampLookup bool, err error) {
	switch strategy {
	case StrategyOffset:
		return value, false, nil
	case StrategyTimestamp:
		return 0, true, nil
	case StrategyFirst:
		return 0, false, nil
	case StrategyLast:
		current, _ := m.CurrentOffset()
		if count == 0 || uint64(count)-1 >= current {
			return 0, false, nil
		}
		return current - (uint64(count) - 1), false, nil
	case StrategyNext:
		stored, ok := m.offsets[consumer]
		if !ok {
			return 0, false, nil
		}
		return stored + 1, false, nil
	}
	return 0, false, ErrUnknownStrategy
}

// PollRange clamps a poll of count messages from start to the committed
// messages: it returns the first and last offsets to serve, or ok = false
// for an empty result (count 0, empty partition, start past the current
// offset).
func (m *Machine) PollRange(start uint64, count uint32) (first, last uint64, ok bool) {
	current, nonEmpty := m.CurrentOffset()
	if count == 0 || !nonEmpty || start > current {
		return 0, 0, false
	}
	last = current
	if end := start + uint64(count) - 1; end >= start && end < current {
		last = end
	}
	return start, last, true
}

// UnflushedOffsetAtTimestamp returns the base offset of the first
// unflushed batch whose base_timestamp is at least timestamp; ok is false
// when no unflushed batch qualifies (the answer, if any, is on disk).
func (m *Machine) UnflushedOffsetAtTimestamp(timestamp uint64) (offset uint64, ok bool) {
	for _, b := range m.unflushed {
		v := wire.BatchView(b)
		if v.BaseTimestamp() >= timestamp {
			return v.BaseOffset(), true
		}
	}
	return 0, false
}

// FirstUnflushedOffset returns the offset of the first message still in
// the unflushed buffer; ok is false when the buffer is empty. Polls below
// it read storage, polls at or above it read Unflushed.
func (m *Machine) FirstUnflushedOffset() (offset uint64, ok bool) {
	if len(m.unflushed) == 0 {
		return 0, false
	}
	return wire.BatchView(m.unflushed[0]).BaseOffset(), true
}

// FlushedEnd is the offset below which every message is flushed to
// segments: the first unflushed message's, or NextOffset when none is.
func (m *Machine) FlushedEnd() uint64 {
	if first, ok := m.FirstUnflushedOffset(); ok {
		return first
	}
	return m.nextOffset
}
