package pool

import (
	"sync"
	"testing"
)

func BenchmarkGetPut(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		b.Run(byteSizeName(size), func(b *testing.B) {
			p := newTestPool(b, Config{})
			p.Put(p.Get(size))
			b.ReportAllocs()
			for b.Loop() {
				p.Put(p.Get(size))
			}
		})
	}
}

// BenchmarkGetPutParallel measures contention: every goroutine hammers one
// bucket ("same") or spreads over eight ("spread").
func BenchmarkGetPutParallel(b *testing.B) {
	b.Run("same", func(b *testing.B) {
		p := newTestPool(b, Config{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p.Put(p.Get(4096))
			}
		})
	})
	b.Run("spread", func(b *testing.B) {
		p := newTestPool(b, Config{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			size := 4096
			for pb.Next() {
				p.Put(p.Get(size))
				size = size*2%(1<<20) + 4096
			}
		})
	})
	// syncPool is the baseline the brief asked to compare against.
	b.Run("sync.Pool-same", func(b *testing.B) {
		syncPool := sync.Pool{New: func() any { return new([4096]byte) }}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				syncPool.Put(syncPool.Get())
			}
		})
	})
}

func BenchmarkFrozenShare(b *testing.B) {
	p := newTestPool(b, Config{})
	p.Put(p.Get(16 << 10))
	b.ReportAllocs()
	for b.Loop() {
		buffer := p.Get(16 << 10).Freeze()
		buffer.Retain()
		buffer.Retain()
		buffer.Release()
		buffer.Release()
		buffer.Release()
	}
}

func byteSizeName(size int) string {
	switch {
	case size >= 1<<20:
		return itoa(size>>20) + "MiB"
	default:
		return itoa(size>>10) + "KiB"
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var digits [20]byte
	at := len(digits)
	for n > 0 {
		at--
		digits[at] = byte('0' + n%10)
		n /= 10
	}
	return string(digits[at:])
}
