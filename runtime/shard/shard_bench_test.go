package shard

import (
	"errors"
	"runtime"
	"testing"
)

// BenchmarkSubmit measures one producer feeding a shard through its inbox;
// a full inbox makes the producer yield and retry.
func BenchmarkSubmit(b *testing.B) {
	shard, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := shard.Start(); err != nil {
		b.Fatal(err)
	}
	defer shard.Stop()
	count := 0
	task := func() { count++ }
	b.ReportAllocs()
	for b.Loop() {
		for {
			err := shard.Submit(task)
			if err == nil {
				break
			}
			if !errors.Is(err, ErrInboxFull) {
				b.Fatal(err)
			}
			runtime.Gosched()
		}
	}
	if err := shard.Call(func() {}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCall measures a round trip to a shard and back, with the loop
// locked to its thread (the production shape) and unlocked.
func BenchmarkCall(b *testing.B) {
	for _, unlocked := range []bool{false, true} {
		name := "locked"
		if unlocked {
			name = "unlocked"
		}
		b.Run(name, func(b *testing.B) {
			shard, err := New(Config{Unlocked: unlocked})
			if err != nil {
				b.Fatal(err)
			}
			if err := shard.Start(); err != nil {
				b.Fatal(err)
			}
			defer shard.Stop()
			b.ReportAllocs()
			for b.Loop() {
				if err := shard.Call(func() {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
