package server

import (
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// TestFlushThresholdsAreAnOperation: new flush thresholds reach a running
// partition as an operation, submitted only when they differ, and the
// machine flushes by them (a send reaching the lowered threshold is on
// disk without a close).
func TestFlushThresholdsAreAnOperation(t *testing.T) {
	s, c := allocsServer(t)
	p, ok := s.parts.get(partKey{0, 0, 0})
	if !ok {
		t.Fatal("no partition")
	}
	opNow := func() (op uint64) {
		if err := p.run(func() { op = p.machine.LastOp() }); err != nil {
			t.Fatal(err)
		}
		return op
	}
	logged := func() (messages uint64) {
		if err := p.run(func() { messages = p.log.Stats().Messages }); err != nil {
			t.Fatal(err)
		}
		return messages
	}
	send := func(n int) {
		frame := sendFrame(t, c, n)
		out, _ := s.handleFrame(c, frame[:wire.HeaderSize], frame[wire.HeaderSize:])
		if out.head == nil || wire.PeekCommand(out.head) != wire.CommandReply {
			t.Fatalf("no reply to a send of %d", n)
		}
		c.keepScratch()
	}
	before := opNow()
	if err := p.setFlushThresholds(nil, 0, 0); err != nil || opNow() != before {
		t.Fatalf("the default thresholds again were submitted (op %d → %d): %v", before, opNow(), err)
	}
	send(3)
	if logged() != 0 {
		t.Fatal("3 messages flushed at the default thresholds")
	}
	if err := p.setFlushThresholds(nil, 5, 0); err != nil || opNow() != before+2 {
		t.Fatalf("lowered thresholds: op %d → %d: %v", before, opNow(), err)
	}
	if logged() != 0 {
		t.Fatal("flushed below the lowered threshold")
	}
	send(2)
	if got := logged(); got != 5 {
		t.Fatalf("%d messages on disk after reaching the lowered threshold", got)
	}
	if err := p.setFlushThresholds(nil, 5, 0); err != nil || opNow() != before+3 {
		t.Fatalf("the same thresholds again were submitted: op %d → %d: %v", before, opNow(), err)
	}
}
