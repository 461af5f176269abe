package server

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/stratabroker/strata/server/partition"
)

// Test hooks for the partition-operation tests of package server_test.

// PartitionOpLog records every operation each partition applies, with
// the partition's checkpoint from just before each.
type PartitionOpLog struct {
	mu    sync.Mutex
	parts map[*partitionRuntime]*partitionHistory
}

type partitionHistory struct {
	ops []recordedOp
}

type recordedOp struct {
	op, timestamp uint64
	operation     uint8
	body          []byte
	// before is the machine's checkpoint just before the operation.
	before []byte
}

// RecordPartitionOpsForTest starts recording the operations the server's
// partitions apply from now on.
func RecordPartitionOpsForTest(s *Server) *PartitionOpLog {
	l := &PartitionOpLog{parts: map[*partitionRuntime]*partitionHistory{}}
	observe := partitionOpObserverFunc(func(p *partitionRuntime, op, timestamp uint64, operation uint8, body []byte) {
		l.mu.Lock()
		defer l.mu.Unlock()
		h := l.parts[p]
		if h == nil {
			h = &partitionHistory{}
			l.parts[p] = h
		}
		h.ops = append(h.ops, recordedOp{op: op, timestamp: timestamp, operation: operation,
			body: append([]byte(nil), body...), before: p.machine.Checkpoint()})
	})
	s.partitionOpObserver.Store(&observe)
	return l
}

// ReplayForTest replays the operations recorded for a partition into a
// fresh machine restored from the checkpoint taken before the first one,
// carrying out the flushes they ask for as the server does. Between two
// operations the replay must encode as the live machine did just before
// the second (nothing changed it but operations); ReplayForTest returns
// the live machine's checkpoint now, the replay's, and the operations
// replayed in order.
func (l *PartitionOpLog) ReplayForTest(s *Server, stream, topic, partitionID uint32) (live, replayed []byte, operations []uint8, err error) {
	p, ok := s.parts.get(partKey{stream, topic, partitionID})
	if !ok {
		return nil, nil, nil, fmt.Errorf("no partition %d/%d/%d", stream, topic, partitionID)
	}
	if err := p.run(func() { live = p.machine.Checkpoint() }); err != nil {
		return nil, nil, nil, err
	}
	l.mu.Lock()
	h := l.parts[p]
	var history []recordedOp
	if h != nil {
		history = append(history, h.ops...)
	}
	l.mu.Unlock()
	if len(history) == 0 {
		return nil, nil, nil, fmt.Errorf("partition %d/%d/%d applied nothing", stream, topic, partitionID)
	}
	m := partition.New(partition.Config{})
	if err := m.Restore(history[0].before); err != nil {
		return nil, nil, nil, err
	}
	for i, o := range history {
		if !bytes.Equal(m.Checkpoint(), o.before) {
			return nil, nil, nil, fmt.Errorf("partition %d/%d/%d changed between operations %d and %d (%d and %d), not by an operation",
				stream, topic, partitionID, i-1, i, history[max(i-1, 0)].operation, o.operation)
		}
		m.Apply(o.op, o.timestamp, o.operation, o.body)
		for _, e := range m.TakeEffects() {
			if e.Kind == partition.EffectFlush {
				m.MarkFlushed(e.UpTo)
			}
		}
		operations = append(operations, o.operation)
	}
	return live, m.Checkpoint(), operations, nil
}
