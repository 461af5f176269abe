package partition

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// stateMachine mirrors vsr.StateMachine (vsr does not build on its own
// yet); the assertion keeps Machine's method set in step with it.
type stateMachine interface {
	Apply(op uint64, timestamp uint64, operation uint8, body []byte) (reply []byte)
	Checkpoint() []byte
	Restore(data []byte) error
}

var _ stateMachine = (*Machine)(nil)

// buildBatch returns a valid producer batch of n messages whose payloads
// are "<tag>-<i>".
func buildBatch(t testing.TB, tag string, n int) []byte {
	t.Helper()
	var bb wire.BatchBuilder
	for i := 0; i < n; i++ {
		if err := bb.Add(wire.MessageID{Low: uint64(i + 1)}, []byte(fmt.Sprintf("%s-%d", tag, i)), nil, 1000+uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), b...)
}

// harness applies operations with increasing op numbers.
type harness struct {
	t  testing.TB
	m  *Machine
	op uint64
}

func newHarness(t testing.TB, cfg Config) *harness {
	return &harness{t: t, m: New(cfg)}
}

func (h *harness) apply(timestamp uint64, operation uint8, body []byte) []byte {
	h.op++
	return h.m.Apply(h.op, timestamp, operation, body)
}

// send applies a SendMessages of batch and returns the base offset.
func (h *harness) send(timestamp uint64, batch []byte) uint64 {
	h.t.Helper()
	reply := h.apply(timestamp, OperationSendMessages, EncodeSendMessages(Envelope{UserID: 1}, batch))
	base, ok := SendConfirmationBaseOffset(reply)
	if !ok {
		h.t.Fatalf("send rejected: %x", reply)
	}
	return base
}

func (h *harness) store(key ConsumerKey, offset uint64, mode StoreMode) uint32 {
	h.t.Helper()
	reply := h.apply(1, OperationStoreConsumerOffset, StoreConsumerOffset{Consumer: key, Offset: offset, Mode: mode}.Encode(Envelope{}))
	return replyCode(h.t, reply)
}

// purge applies a PurgePartition of generation and returns its code.
func (h *harness) purge(generation uint64) uint32 {
	h.t.Helper()
	return replyCode(h.t, h.apply(1, OperationPurgePartition, PurgePartition{Generation: generation}.Encode(Envelope{})))
}

// deleteSegments applies a DeleteSegments and returns its code.
func (h *harness) deleteSegments(o DeleteSegments) uint32 {
	h.t.Helper()
	return replyCode(h.t, h.apply(1, OperationDeleteSegments, o.Encode(Envelope{})))
}

// setFlushThresholds applies a SetFlushThresholds and returns its code.
func (h *harness) setFlushThresholds(messages uint32, sizeBytes uint64) uint32 {
	h.t.Helper()
	return replyCode(h.t, h.apply(1, OperationSetFlushThresholds, SetFlushThresholds{messages, sizeBytes}.Encode(Envelope{})))
}

// carryOut does with the pending effects what the server does with
// storage left out: a flush is reported done (MarkFlushed), the rest is
// returned.
func carryOut(m *Machine) []Effect {
	var others []Effect
	for _, e := range m.TakeEffects() {
		if e.Kind == EffectFlush {
			m.MarkFlushed(e.UpTo)
			continue
		}
		others = append(others, e)
	}
	return others
}

func (h *harness) deleteOffset(key ConsumerKey) uint32 {
	h.t.Helper()
	reply := h.apply(1, OperationDeleteConsumerOffset, DeleteConsumerOffset{Consumer: key}.Encode(Envelope{}))
	return replyCode(h.t, reply)
}

// replyCode decodes a result-framed reply by hand.
func replyCode(t testing.TB, reply []byte) uint32 {
	t.Helper()
	switch {
	case len(reply) == 4 && binary.LittleEndian.Uint32(reply) == 0:
		return 0
	case len(reply) == 12 && binary.LittleEndian.Uint32(reply) == 1 && binary.LittleEndian.Uint32(reply[4:]) == 0:
		return binary.LittleEndian.Uint32(reply[8:])
	}
	t.Fatalf("reply %x is not result-framed", reply)
	return 0
}
