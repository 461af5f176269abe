package sim

import (
	"fmt"
	"testing"
)

func TestPRNGDeterministic(t *testing.T) {
	a, b := NewPRNG(42), NewPRNG(42)
	for i := 0; i < 1000; i++ {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("draw %d: %d != %d", i, x, y)
		}
	}
	if NewPRNG(1).Uint64() == NewPRNG(2).Uint64() {
		t.Fatal("different seeds gave the same first draw")
	}
}

func TestPRNGRanges(t *testing.T) {
	p := NewPRNG(7)
	seen := make([]int, 5)
	for i := 0; i < 10_000; i++ {
		v := p.Range(3, 7)
		if v < 3 || v > 7 {
			t.Fatalf("Range(3,7) = %d", v)
		}
		seen[v-3]++
		if f := p.Float64(); f < 0 || f >= 1 {
			t.Fatalf("Float64 = %v", f)
		}
	}
	for i, n := range seen {
		if n < 1500 || n > 2500 {
			t.Fatalf("value %d drawn %d times of 10000: not uniform", i+3, n)
		}
	}
	hits := 0
	for i := 0; i < 100_000; i++ {
		if p.Chance(PPM / 10) {
			hits++
		}
	}
	if hits < 9_000 || hits > 11_000 {
		t.Fatalf("Chance(10%%) hit %d of 100000", hits)
	}
	if p.Chance(0) || !p.Chance(PPM) {
		t.Fatal("Chance(0) or Chance(PPM) wrong")
	}
}

func TestPRNGForkIndependent(t *testing.T) {
	// Drawing more from one fork must not change another fork's stream.
	root1, root2 := NewPRNG(9), NewPRNG(9)
	a1, b1 := root1.Fork(1), root1.Fork(2)
	a2, b2 := root2.Fork(1), root2.Fork(2)
	for i := 0; i < 100; i++ {
		a1.Uint64()
	}
	_ = a2
	for i := 0; i < 100; i++ {
		if b1.Uint64() != b2.Uint64() {
			t.Fatal("fork streams interfere")
		}
	}
}

func TestDrawParamsWithinFaultModel(t *testing.T) {
	for seed := uint64(0); seed < 2000; seed++ {
		p := DrawParams(seed)
		q := DrawParams(seed)
		if !sameParams(&p, &q) {
			t.Fatalf("seed %d: DrawParams not deterministic", seed)
		}
		if p.ReplicaCount < 1 || p.ReplicaCount > replicaCountMax || p.ClientCount < 1 || p.ClientCount > clientCountMax {
			t.Fatalf("seed %d: counts out of range: %+v", seed, p)
		}
		if len(p.StorageFaultyReplica) > ReplicationQuorum(p.ReplicaCount)-1 {
			t.Fatalf("seed %d: %d storage-faulty replicas for %d replicas", seed, len(p.StorageFaultyReplica), p.ReplicaCount)
		}
		if p.Durability == DurabilityReplicated && (p.PowerLossAllPPM != 0 || p.PowerLossPPM != 0) {
			t.Fatalf("seed %d: power loss under replicated durability", seed)
		}
		if p.DelayTicksMin > p.DelayTicksMax {
			t.Fatalf("seed %d: delay %d..%d", seed, p.DelayTicksMin, p.DelayTicksMax)
		}
		if DownMax(p.ReplicaCount, p.Durability) == 0 && p.CrashPPM != 0 {
			t.Fatalf("seed %d: crashes drawn where the fault model allows none", seed)
		}
	}
}

func sameParams(a, b *Params) bool {
	return fmt.Sprintf("%+v", *a) == fmt.Sprintf("%+v", *b)
}
