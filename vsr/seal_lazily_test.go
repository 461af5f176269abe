package vsr

import "testing"

// TestSealLazilyOneSyncPerOp: a persisted group of one with SealLazily
// commits an op once its prepare is durable, and the op's seal rides the
// next op's sync: one sync per op where the seal took a second one in a
// row. A crash after the last op, before its seal is durable, reopens
// with every committed op (the durable prepare reloads; its seal is
// written again), and SyncSeals makes a pending seal durable.
func TestSealLazilyOneSyncPerOp(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		cfg := DefaultConfig(7, 1, 0)
		cfg.JournalSlots = 64
		cfg.PipelinePrepareMax = 4
		cfg.MessageSizeMax = 64 << 10
		cfg.WALBytesMax = 16 << 20
		cfg.Durability = Persisted
		cfg.SealLazily = lazy
		c := newTestCluster(t, cfg)
		const ops = 20
		s := c.nodes[0].storage
		start := 0
		for i := range ops {
			if i == 1 {
				start = s.syncs // after the register and the first op
			}
			if err := c.client(1).Submit(OperationUserMin, []byte{byte('a' + i)}); err != nil {
				t.Fatal(err)
			}
			for ticks := 0; c.client(1).Busy() && ticks < 1000; ticks++ {
				c.tick(1)
			}
			if c.client(1).Busy() {
				t.Fatalf("op %d not committed:\n%s", i, c.status())
			}
		}
		perOp := float64(s.syncs-start) / float64(ops-1)
		t.Logf("seal lazily %v: %.2f syncs per op", lazy, perOp)
		want := 2.0
		if lazy {
			want = 1.0
		}
		if perOp != want {
			t.Fatalf("seal lazily %v: %.2f syncs per op, want %.0f", lazy, perOp, want)
		}
		last := c.nodes[0].replica.CommitNumber()
		if lazy && !c.nodes[0].replica.SealsPending() {
			t.Fatal("the last op's seal is not pending")
		}
		c.crash(0)
		c.start(0)
		if got := c.nodes[0].replica.CommitNumber(); got != last {
			t.Fatalf("seal lazily %v: reopened at commit %d, want %d", lazy, got, last)
		}
		if lazy {
			r := c.nodes[0].replica
			for ticks := 0; r.SealsPending() && ticks < 100; ticks++ {
				r.SyncSeals()
				c.pumpIO()
			}
			if r.SealsPending() {
				t.Fatal("SyncSeals left a seal pending")
			}
		}
	}
}
