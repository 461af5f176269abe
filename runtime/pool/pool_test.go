package pool

import (
	"errors"
	"sync"
	"testing"
)

func newTestPool(t testing.TB, config Config) *Pool {
	t.Helper()
	p, err := New(config)
	if err != nil {
		t.Fatalf("New(%+v): %v", config, err)
	}
	return p
}

func TestNewValidatesConfig(t *testing.T) {
	p := newTestPool(t, Config{})
	if p.BudgetBytes() != BudgetBytesDefault || p.bucketBuffersMax != BucketBuffersMaxDefault {
		t.Fatalf("defaults: budget %d, buffers %d", p.BudgetBytes(), p.bucketBuffersMax)
	}
	for _, bad := range []Config{
		{BudgetBytes: BudgetBytesMin - 1},
		{BudgetBytes: -1},
		{BucketBuffersMax: -1},
		{BucketBuffersMax: BucketBuffersMaxLimit + 1},
	} {
		if _, err := New(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", bad, err)
		}
	}
	if _, err := New(Config{BudgetBytes: BudgetBytesMin, BucketBuffersMax: 1}); err != nil {
		t.Fatalf("minimum config refused: %v", err)
	}
}

func TestBuffersArePageAligned(t *testing.T) {
	p := newTestPool(t, Config{})
	for index, classSize := range bucketSizes {
		if classSize > 8<<20 {
			break // larger classes only cost test memory; same allocator path
		}
		for _, size := range []int{classSize, classSize - PageSize + 1} {
			buffer := p.Get(size)
			if pageOffset(buffer.data) != 0 {
				t.Fatalf("class %d: buffer at page offset %d", index, pageOffset(buffer.data))
			}
			if buffer.Len() != size || buffer.Cap() != classSize || !buffer.Pooled() {
				t.Fatalf("Get(%d): len %d cap %d pooled %v", size, buffer.Len(), buffer.Cap(), buffer.Pooled())
			}
			p.Put(buffer)
		}
	}
}

func TestAlignWithinFixesMisalignedMemory(t *testing.T) {
	const size = 3 * PageSize
	raw := make([]byte, size+2*PageSize)
	for skew := 0; skew < PageSize; skew += 511 {
		aligned := alignWithin(raw[skew:], size)
		if pageOffset(aligned) != 0 || len(aligned) != size || cap(aligned) != size {
			t.Fatalf("skew %d: offset %d len %d cap %d", skew, pageOffset(aligned), len(aligned), cap(aligned))
		}
	}
}

func TestGetReusesCachedBuffer(t *testing.T) {
	p := newTestPool(t, Config{})
	first := p.Get(5000)
	first.Bytes()[0] = 7
	p.Put(first)
	second := p.Get(6000)
	if second != first {
		t.Fatalf("second Get of the same class did not reuse the cached buffer")
	}
	stats := p.Stats()
	if stats.Hits != 1 || stats.Misses != 1 || stats.Buckets[1].InUse != 1 || stats.Buckets[1].Cached != 0 {
		t.Fatalf("stats after reuse: %+v", stats.Buckets[1])
	}
	p.Put(second)
	stats = p.Stats()
	if stats.BytesInUse != 0 || stats.BytesCached != 8192 || stats.BytesOwned != 8192 {
		t.Fatalf("bytes: in use %d cached %d owned %d", stats.BytesInUse, stats.BytesCached, stats.BytesOwned)
	}
}

func TestBudgetAccountingAndEviction(t *testing.T) {
	p := newTestPool(t, Config{BudgetBytes: BudgetBytesMin})
	large := p.Get(384 << 20)
	medium := p.Get(128 << 20)
	if stats := p.Stats(); stats.BytesOwned != BudgetBytesMin || stats.BytesInUse != BudgetBytesMin {
		t.Fatalf("owned %d in use %d, want the whole budget", stats.BytesOwned, stats.BytesInUse)
	}
	over := p.Get(4096)
	stats := p.Stats()
	if over.Pooled() || stats.OutsideAllocations != 1 || stats.OversizeAllocations != 0 || stats.OutsideBytesInUse != 4096 {
		t.Fatalf("request over budget: pooled %v, stats %+v", over.Pooled(), stats)
	}
	p.Put(over)
	if stats := p.Stats(); stats.OutsideBytesInUse != 0 || stats.BytesCached != 0 {
		t.Fatalf("outside buffer came back into the pool: %+v", stats)
	}

	// An idle large buffer is evicted to make room for another class.
	p.Put(large)
	small := p.Get(8 << 20)
	stats = p.Stats()
	if !small.Pooled() || stats.Evictions != 1 || stats.BytesOwned != 128<<20+8<<20 || stats.Buckets[26].Cached != 0 {
		t.Fatalf("eviction: pooled %v, stats %+v", small.Pooled(), stats)
	}
	p.Put(small)
	p.Put(medium)
	stats = p.Stats()
	if stats.BytesInUse != 0 || stats.BytesOwned != stats.BytesCached {
		t.Fatalf("after returning all: %+v", stats)
	}
}

func TestFullBucketDropsReturns(t *testing.T) {
	p := newTestPool(t, Config{BucketBuffersMax: 2})
	buffers := []*Buffer{p.Get(1), p.Get(1), p.Get(1)}
	for _, buffer := range buffers {
		p.Put(buffer)
	}
	stats := p.Stats()
	if stats.Buckets[0].Cached != 2 || stats.DroppedReturns != 1 || stats.BytesOwned != 2*PageSize {
		t.Fatalf("full bucket: cached %d dropped %d owned %d", stats.Buckets[0].Cached, stats.DroppedReturns, stats.BytesOwned)
	}
}

func TestReleaseIdleDropsWhatNoGetNeeded(t *testing.T) {
	p := newTestPool(t, Config{})
	const burst = 16
	buffers := make([]*Buffer, 0, burst)
	for range burst {
		buffers = append(buffers, p.Get(1<<20))
	}
	for _, buffer := range buffers {
		p.Put(buffer)
	}
	// Returned since the last run: not idle for a whole interval yet.
	if released := p.ReleaseIdle(); released != 0 {
		t.Fatalf("first run released %d bytes of buffers returned during the interval", released)
	}
	// A steady user takes one buffer per interval: that one is kept.
	p.Put(p.Get(1 << 20))
	released := p.ReleaseIdle()
	stats := p.Stats()
	if released != (burst-1)<<20 || stats.Buckets[9].Cached != 1 || stats.IdleReleases != burst-1 || stats.BytesOwned != 1<<20 {
		t.Fatalf("second run released %d bytes; cached %d, idle releases %d, owned %d",
			released, stats.Buckets[9].Cached, stats.IdleReleases, stats.BytesOwned)
	}
	if released := p.ReleaseIdle(); released != 1<<20 {
		t.Fatalf("an interval without Gets released %d bytes, want the last buffer", released)
	}
	if stats := p.Stats(); stats.BytesOwned != 0 || stats.BytesCached != 0 {
		t.Fatalf("after an idle interval: owned %d cached %d", stats.BytesOwned, stats.BytesCached)
	}
	// A lent buffer is never released, and comes back to the bucket.
	lent := p.Get(5000)
	p.ReleaseIdle()
	p.ReleaseIdle()
	p.Put(lent)
	if stats := p.Stats(); stats.Buckets[1].Cached != 1 || stats.Buckets[1].InUse != 0 {
		t.Fatalf("lent buffer: %+v", stats.Buckets[1])
	}
}

func TestFrozenBufferLifecycle(t *testing.T) {
	p := newTestPool(t, Config{})
	buffer := p.Get(100)
	copy(buffer.Bytes(), "frozen")
	buffer.Freeze()
	if !buffer.Frozen() || buffer.Refs() != 1 {
		t.Fatalf("after Freeze: frozen %v refs %d", buffer.Frozen(), buffer.Refs())
	}
	const holders = 8
	var wait sync.WaitGroup
	for range holders {
		buffer.Retain()
		wait.Add(1)
		go func() {
			defer wait.Done()
			if string(buffer.Bytes()[:6]) != "frozen" {
				t.Errorf("holder read %q", buffer.Bytes()[:6])
			}
			buffer.Release()
		}()
	}
	wait.Wait()
	if buffer.Refs() != 1 || p.Stats().Buckets[0].Cached != 0 {
		t.Fatalf("buffer returned before its last holder released it (refs %d)", buffer.Refs())
	}
	buffer.Release()
	stats := p.Stats()
	if buffer.Refs() != 0 || stats.Buckets[0].Cached != 1 || stats.Buckets[0].InUse != 0 {
		t.Fatalf("after last release: refs %d, bucket %+v", buffer.Refs(), stats.Buckets[0])
	}
	again := p.Get(10)
	if again != buffer || again.Frozen() || again.Refs() != 1 {
		t.Fatalf("reused buffer: same %v frozen %v refs %d", again == buffer, again.Frozen(), again.Refs())
	}
	again.SetLen(20)
	p.Put(again)
}

func TestRetainOfUnfrozenBufferPanics(t *testing.T) {
	p := newTestPool(t, Config{})
	buffer := p.Get(1)
	defer func() {
		if recover() == nil {
			t.Fatalf("Retain of a writable buffer did not panic")
		}
	}()
	buffer.Retain()
}

func TestSetLenOnFrozenBufferPanics(t *testing.T) {
	p := newTestPool(t, Config{})
	buffer := p.Get(1).Freeze()
	defer func() {
		if recover() == nil {
			t.Fatalf("SetLen of a frozen buffer did not panic")
		}
	}()
	buffer.SetLen(0)
}

func TestDoubleRelease(t *testing.T) {
	p := newTestPool(t, Config{})
	buffer := p.Get(1)
	p.Put(buffer)
	panicked := func() (panicked bool) {
		defer func() { panicked = recover() != nil }()
		buffer.Release()
		return false
	}()
	if panicked != invariantsEnabled {
		t.Fatalf("double release panicked=%v, invariants build=%v", panicked, invariantsEnabled)
	}
	stats := p.Stats()
	wantCounted := uint64(1)
	if invariantsEnabled {
		wantCounted = 0
	}
	if stats.DoubleReleases != wantCounted || stats.Buckets[0].Cached != 1 || buffer.Refs() != 0 {
		t.Fatalf("double release: counted %d cached %d refs %d", stats.DoubleReleases, stats.Buckets[0].Cached, buffer.Refs())
	}
}

func TestConcurrentGetPut(t *testing.T) {
	p := newTestPool(t, Config{BucketBuffersMax: 4})
	const workers = 8
	const rounds = 2000
	sizes := []int{1, 4096, 5000, 16 << 10, 100 << 10, 700 << 10}
	var wait sync.WaitGroup
	for worker := range workers {
		wait.Add(1)
		go func() {
			defer wait.Done()
			for round := range rounds {
				buffer := p.Get(sizes[(worker+round)%len(sizes)])
				data := buffer.Bytes()
				mark := byte(worker + 1)
				data[0], data[len(data)-1] = mark, mark
				if round%3 == 0 {
					buffer.Freeze().Retain()
					buffer.Release()
				}
				if data[0] != mark || data[len(data)-1] != mark {
					t.Errorf("worker %d: buffer shared with another holder", worker)
					return
				}
				p.Put(buffer)
			}
		}()
	}
	wait.Wait()
	stats := p.Stats()
	if stats.BytesInUse != 0 || stats.BytesOwned != stats.BytesCached || stats.DoubleReleases != 0 {
		t.Fatalf("after concurrent use: %+v", stats)
	}
	if stats.Hits+stats.Misses != workers*rounds {
		t.Fatalf("hits %d + misses %d != %d gets", stats.Hits, stats.Misses, workers*rounds)
	}
	for index, bucketStats := range stats.Buckets {
		if bucketStats.Cached > 4 {
			t.Fatalf("bucket %d caches %d buffers over its limit", index, bucketStats.Cached)
		}
	}
}

func TestCachedGetPutDoesNotAllocate(t *testing.T) {
	p := newTestPool(t, Config{})
	p.Put(p.Get(3000))
	p.Put(p.Get(1 << 20))
	allocs := testing.AllocsPerRun(1000, func() {
		buffer := p.Get(3000)
		buffer.Bytes()[0] = 1
		p.Put(buffer)
		large := p.Get(1 << 20).Freeze()
		large.Retain()
		large.Release()
		large.Release()
		_ = p.Stats()
	})
	if allocs != 0 {
		t.Fatalf("cached Get/Put/Freeze/Retain/Release allocated %.1f times per run", allocs)
	}
}

// TestOversizeRequestsAreOutside runs last: its 512 MiB allocation, once
// freed, would make later large allocations in this binary reuse (and
// re-zero) that memory, which is slow under -race.
func TestOversizeRequestsAreOutside(t *testing.T) {
	p := newTestPool(t, Config{})
	buffer := p.Get(BufferSizeMax + 1)
	stats := p.Stats()
	if pageOffset(buffer.data) != 0 || buffer.Cap() != BufferSizeMax+PageSize {
		t.Fatalf("oversize buffer: page offset %d cap %d", pageOffset(buffer.data), buffer.Cap())
	}
	if buffer.Pooled() || stats.OversizeAllocations != 1 || stats.OutsideAllocations != 1 || stats.BytesOwned != 0 {
		t.Fatalf("oversize: %+v", stats)
	}
	p.Put(buffer)
	if stats := p.Stats(); stats.OutsideBytesInUse != 0 {
		t.Fatalf("oversize buffer still counted: %d", stats.OutsideBytesInUse)
	}
}
