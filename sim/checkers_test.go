package sim

import (
	"strings"
	"testing"
)

func appendOp(h *History, client int, value, position uint64) {
	i := h.Invoke(client, 1, HistoryAppend, value, 0)
	h.Return(i, 0, 0, position, false, 0)
}

func TestLinearizabilityAcceptsLegalHistory(t *testing.T) {
	var h History
	a := h.Invoke(0, 1, HistoryAppend, 10, 0)
	b := h.Invoke(1, 1, HistoryAppend, 20, 0) // concurrent with a
	h.Return(b, 0, 0, 0, false, 0)            // b took position 0
	h.Return(a, 0, 0, 1, false, 0)            // a took position 1
	r := h.Invoke(2, 1, HistoryRead, 1, 0)
	h.Return(r, 0, 0, 0, true, 10)
	r = h.Invoke(2, 2, HistoryRead, 5, 0)
	h.Return(r, 0, 0, 0, false, 0)
	h.Invoke(0, 2, HistoryAppend, 30, 0) // never answered: may or may not have happened
	if err := (&LinearizabilityChecker{}).Check(&h); err != nil {
		t.Fatal(err)
	}
}

func TestLinearizabilityRejectsIllegalHistories(t *testing.T) {
	// Two appends both claim position 0.
	var h1 History
	appendOp(&h1, 0, 10, 0)
	appendOp(&h1, 1, 20, 0)
	// A read that returns a value never appended there.
	var h2 History
	appendOp(&h2, 0, 10, 0)
	r := h2.Invoke(1, 1, HistoryRead, 0, 0)
	h2.Return(r, 0, 0, 0, true, 99)
	// A stale read: the append finished before the read began, yet the
	// read says the position is absent.
	var h3 History
	appendOp(&h3, 0, 10, 0)
	r = h3.Invoke(1, 1, HistoryRead, 0, 0)
	h3.Return(r, 0, 0, 0, false, 0)
	for i, h := range []*History{&h1, &h2, &h3} {
		lc := &LinearizabilityChecker{}
		if err := lc.Check(h); err == nil {
			t.Errorf("history %d accepted", i+1)
		}
		if path, err := lc.WriteVisualization(t.TempDir(), "h.html"); err != nil || path == "" {
			t.Errorf("visualization: %v", err)
		}
	}
}

func TestCommitCheckerCatchesDivergence(t *testing.T) {
	c := NewCommitChecker(3)
	a := digestOf(OperationAppend, 1, encodeRequestBody(nil, 1000, 1, 7))
	b := digestOf(OperationAppend, 1, encodeRequestBody(nil, 1001, 1, 7))
	c.OnApply(0, 0, 1, a)
	c.OnApply(1, 0, 1, a)
	if c.Check() != nil {
		t.Fatal(c.Check())
	}
	c.OnApply(2, 0, 1, b)
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), "op 1") {
		t.Fatalf("divergence not caught: %v", err)
	}

	c = NewCommitChecker(1)
	c.OnApply(0, 0, 5, a)
	c.OnApply(0, 0, 5, a)
	if c.Check() == nil {
		t.Fatal("re-applying an op without a reset was not caught")
	}
	c = NewCommitChecker(1)
	c.OnApply(0, 0, 5, a)
	c.OnReset(0)
	c.OnApply(0, 0, 5, a)
	if c.Check() != nil {
		t.Fatalf("re-applying after a restart: %v", c.Check())
	}
}

func TestExactlyOnceChecker(t *testing.T) {
	c := NewExactlyOnceChecker()
	c.OnApply(0, 3, 1000, 1)
	c.OnApply(1, 3, 1000, 1) // the same op on another replica
	if c.Check() != nil {
		t.Fatal(c.Check())
	}
	c.OnApply(1, 4, 1000, 1)
	if c.Check() == nil {
		t.Fatal("a request applied at two ops was not caught")
	}
}

func TestDurabilityChecker(t *testing.T) {
	var h History
	appendOp(&h, 0, 10, 0)
	appendOp(&h, 0, 20, 1)
	var d DurabilityChecker
	if err := d.Check(&h, map[int][]uint64{0: {10, 20}, 1: {10, 20, 30}}, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(&h, map[int][]uint64{0: {10}, 1: {10, 20}}, []int{0, 1}); err == nil {
		t.Fatal("a lost acknowledged append was not caught")
	}
	if err := d.Check(&h, map[int][]uint64{0: {10, 21}}, []int{0}); err == nil {
		t.Fatal("a changed acknowledged append was not caught")
	}
	d.Waive("scripted loss of a quorum's memory")
	if err := d.Check(&h, map[int][]uint64{0: {}}, []int{0}); err != nil || d.Waived() == "" {
		t.Fatal("waiver ignored")
	}
}

func TestReplicatedLogCheckpointRoundTrip(t *testing.T) {
	l := NewReplicatedLog(0, nil)
	for i := uint64(0); i < 5; i++ {
		l.Apply(i+1, 0, OperationAppend, encodeRequestBody(nil, 1000, i+1, 100+i))
	}
	reply := l.Apply(6, 0, OperationRead, encodeRequestBody(nil, 1000, 6, 3))
	if len(reply) != readReplySize || reply[0] != 1 || reply[1] != 103 {
		t.Fatalf("read reply %v", reply)
	}
	m := NewReplicatedLog(1, nil)
	if err := m.Restore(l.Checkpoint()); err != nil || len(m.Values()) != 5 || m.Values()[4] != 104 {
		t.Fatalf("restore: %v %v", err, m.Values())
	}
	if err := m.Restore([]byte{1, 2, 3}); err == nil {
		t.Fatal("corrupt checkpoint accepted")
	}
	if err := m.Restore(make([]byte, 8+8)); err == nil {
		t.Fatal("checkpoint with a wrong count accepted")
	}
}
