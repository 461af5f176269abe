package vsr

import "testing"

// TestHoldsLog checks that HoldsLog is false exactly while an op above the
// commit number has only its header (as after recovery, which installs
// headers without bodies), and true again once the prepare is back.
func TestHoldsLog(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 32
	cfg.MessageSizeMax = 16 << 10
	cfg.WALBytesMax = 4 << 20
	c := newTestCluster(t, cfg)
	r := c.nodes[1].replica
	if !r.HoldsLog() {
		t.Fatalf("fresh replica (op %d commit %d) does not hold its log", r.op, r.commitMin)
	}
	parent, ok := r.header(r.op)
	if !ok {
		t.Fatalf("no header at op %d", r.op)
	}
	m := &Message{Header: Header{Command: CommandPrepare, Cluster: cfg.Cluster, View: r.view, Op: r.op + 1, Parent: parent.Checksum, Commit: r.commitMin}, Body: []byte("body")}
	m.Seal()
	r.log.setHeader(&m.Header)
	r.op = m.Op
	if r.HoldsLog() {
		t.Fatalf("op %d has only its header but HoldsLog is true", m.Op)
	}
	r.log.setPrepare(m)
	if !r.HoldsLog() {
		t.Fatalf("op %d holds its prepare but HoldsLog is false", m.Op)
	}
	r.commitMin = m.Op
	r.log.at(m.Op).prepare = nil
	if !r.HoldsLog() {
		t.Fatal("a committed op without its body makes HoldsLog false")
	}
}
