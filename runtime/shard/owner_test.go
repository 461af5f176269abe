package shard

import "testing"

func TestAssertOwner(t *testing.T) {
	shard := startShard(t, Config{})
	if err := shard.Call(shard.AssertOwner); err != nil {
		t.Fatal(err)
	}
	panicked := func() (panicked bool) {
		defer func() { panicked = recover() != nil }()
		shard.AssertOwner()
		return false
	}()
	if panicked != invariantsBuild {
		t.Fatalf("AssertOwner off the shard panicked=%v, invariants build=%v", panicked, invariantsBuild)
	}
}
