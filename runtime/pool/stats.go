package pool

// BucketStats describes one size class.
type BucketStats struct {
	// SizeBytes is the class size.
	SizeBytes int
	// Cached is how many idle buffers the bucket holds.
	Cached int64
	// InUse is how many of its buffers are lent out.
	InUse int64
	// Allocated counts buffers ever allocated for the class.
	Allocated uint64
	// Hits and Misses count Gets served from the cache or not.
	Hits, Misses uint64
}

// Stats is a snapshot of a pool's counters. Each bucket's counters are
// read together under its lock, but buckets and pool-wide counters one by
// one, so a snapshot taken under concurrent use is only approximately
// consistent across them.
type Stats struct {
	BudgetBytes int64
	// Hits and Misses sum the buckets' counters.
	Hits, Misses uint64
	// OutsideAllocations counts buffers allocated outside the pool: over
	// budget or over BufferSizeMax. OversizeAllocations counts the latter.
	OutsideAllocations, OversizeAllocations uint64
	// BytesInUse is the class bytes of pooled buffers lent out;
	// BytesCached of idle ones; BytesOwned is the budgeted total.
	BytesInUse, BytesCached, BytesOwned int64
	// OutsideBytesInUse is the bytes of outside buffers not yet released.
	OutsideBytesInUse int64
	// Evictions counts idle buffers dropped to fit a new one in the budget;
	// DroppedReturns counts returns dropped because the bucket was full;
	// IdleReleases counts idle buffers dropped by ReleaseIdle.
	Evictions, DroppedReturns, IdleReleases uint64
	// DoubleReleases and UseAfterRelease count ownership bugs (release
	// builds only; the invariants build panics instead).
	DoubleReleases, UseAfterRelease uint64
	// AlignmentFallbacks counts allocations that needed over-allocation to
	// reach page alignment.
	AlignmentFallbacks uint64
	Buckets            [BucketCount]BucketStats
}

// Stats returns a snapshot of the pool's counters. It does not allocate;
// it takes each bucket's lock briefly, so call it for metrics, not per
// message.
func (p *Pool) Stats() Stats {
	stats := Stats{
		BudgetBytes:         p.budgetBytes,
		OutsideAllocations:  p.outsideAllocations.Load(),
		OversizeAllocations: p.oversizeAllocations.Load(),
		BytesOwned:          p.ownedBytes.Load(),
		OutsideBytesInUse:   p.outsideBytesInUse.Load(),
		Evictions:           p.evictions.Load(),
		DroppedReturns:      p.droppedReturns.Load(),
		IdleReleases:        p.idleReleases.Load(),
		DoubleReleases:      p.doubleReleases.Load(),
		UseAfterRelease:     p.useAfterRelease.Load(),
		AlignmentFallbacks:  p.alignmentFallbacks.Load(),
	}
	for index := range p.buckets {
		class := &p.buckets[index]
		class.mu.Lock()
		bucketStats := BucketStats{
			SizeBytes: bucketSizes[index],
			Cached:    class.freeCount,
			InUse:     class.inUse,
			Allocated: class.allocated,
			Hits:      class.hits,
			Misses:    class.misses,
		}
		class.mu.Unlock()
		stats.Buckets[index] = bucketStats
		stats.Hits += bucketStats.Hits
		stats.Misses += bucketStats.Misses
		stats.BytesInUse += bucketStats.InUse * int64(bucketStats.SizeBytes)
		stats.BytesCached += bucketStats.Cached * int64(bucketStats.SizeBytes)
	}
	return stats
}
