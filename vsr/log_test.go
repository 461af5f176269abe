package vsr

import "testing"

// chunksHeld counts the log's allocated chunks.
func (l *log) chunksHeld() int {
	n := 0
	for _, c := range l.chunks {
		if c != nil {
			n++
		}
	}
	return n
}

// TestLogAllocatesWithUse checks the log ring's memory follows the ops it
// holds: a fresh log of 1024 slots holds no slot, ops take chunks of
// logChunkSlots as they arrive, an op a journal size later takes the slot
// of the op it replaces (the fixed ring's numbering), the byte count stays
// the sum of the sizes above its floor, and release frees the chunks its
// op covers.
func TestLogAllocatesWithUse(t *testing.T) {
	var l log
	l.init(1024)
	if n := l.chunksHeld(); n != 0 {
		t.Fatalf("a fresh log holds %d chunks", n)
	}
	if e := l.entry(5); e.present {
		t.Fatal("an empty slot reads present")
	}
	put := func(op uint64, size uint32) {
		l.setHeader(&Header{Op: op, Size: size, Checksum: Uint128{Lo: op, Hi: uint64(size)}})
	}
	for op := uint64(1); op <= 40; op++ {
		put(op, 100)
	}
	if n := l.chunksHeld(); n != 3 {
		t.Fatalf("ops 1..40 hold %d chunks, want 3", n)
	}
	if got := l.bytesAbove(0); got != 4000 {
		t.Fatalf("bytes above 0: %d", got)
	}
	if got := l.bytesAbove(30); got != 1000 {
		t.Fatalf("bytes above 30: %d", got)
	}
	put(1024+35, 500) // replaces op 35 in its slot
	if l.at(35) != nil || l.at(1024+35) == nil || l.chunksHeld() != 3 {
		t.Fatalf("op %d did not take the slot of op 35", 1024+35)
	}
	if got := l.bytesAbove(30); got != 1400 {
		t.Fatalf("bytes above 30 after the replacement: %d", got)
	}
	l.remove(40)
	if got := l.bytesAbove(10); got != 28*100+500 {
		t.Fatalf("bytes above 10 (lowered floor, recounted): %d", got)
	}
	var order []uint64
	l.each(func(slot uint64, e *logEntry) {
		if e.present {
			order = append(order, slot)
		}
	})
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Fatalf("each visits slots out of order: %v", order)
		}
	}
	e := l.at(20)
	l.release(31)
	if n := l.chunksHeld(); n != 1 {
		t.Fatalf("after releasing ops up to 31 the log holds %d chunks, want 1 (slots 32..47)", n)
	}
	if l.at(20) != nil || l.at(31) != nil || l.at(32) == nil || l.at(1024+35) == nil {
		t.Fatal("release kept an op it covers or dropped one above")
	}
	if e.present {
		t.Fatal("a released entry still reads present")
	}
	if got := l.bytesAbove(31); got != 7*100+500 {
		t.Fatalf("bytes above 31 after release: %d", got)
	}
}

// TestSoloGroupReleasesItsLog runs a group of one with ReleaseApplied
// (a partition on a single node) through several checkpoint intervals:
// its log holds its applied op and pipeline, not a journal's worth of
// slots (nor the ops since its checkpoint).
func TestSoloGroupReleasesItsLog(t *testing.T) {
	cfg := DefaultConfig(7, 1, 0)
	cfg.JournalSlots = 1024
	cfg.PipelinePrepareMax = 8
	cfg.CheckpointIntervalOps = 64
	cfg.ReleaseApplied = true
	cfg.Sessionless.Add(OperationUserMin)
	c := newTestCluster(t, cfg)
	r := c.nodes[0].replica
	if n := r.log.chunksHeld(); n > 1 {
		t.Fatalf("an idle fresh group holds %d chunks", n)
	}
	for i := range 600 {
		r.Step(c.request(9, 0, OperationUserMin, 0, uint64(i+1), make([]byte, 64)))
		c.pumpIO()
	}
	c.tick(5)
	if r.CommitNumber() != 600 || r.CheckpointOp() < 512 {
		t.Fatalf("commit %d, checkpoint %d", r.CommitNumber(), r.CheckpointOp())
	}
	// The applied op's chunk (and the one before it, if a kept op is
	// there).
	if n := r.log.chunksHeld(); n > 2 {
		t.Fatalf("after 600 ops with checkpoint %d the log holds %d chunks, more than 2", r.CheckpointOp(), n)
	}
	if _, ok := r.header(600); !ok {
		t.Fatal("the applied op's header is gone")
	}
}
