package pool

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("pool: invalid memory pool configuration")

// Config sizes a Pool. Zero fields take the defaults.
type Config struct {
	// BudgetBytes bounds the bytes the pool owns (lent plus cached).
	// Default BudgetBytesDefault; at least BudgetBytesMin.
	BudgetBytes int64
	// BucketBuffersMax bounds the idle buffers each bucket keeps. Default
	// BucketBuffersMaxDefault; at most BucketBuffersMaxLimit.
	BucketBuffersMax int
}

// bucket is one size class: a mutex-guarded intrusive free list plus its
// counters, padded so that neighbouring buckets do not share cache lines.
// The counters are plain integers under the mutex that Get and Put take
// anyway, which keeps a cached Get/Put to two lock round trips.
type bucket struct {
	mu sync.Mutex
	// All fields below are guarded by mu.
	free      *Buffer // free list head
	freeCount int64   // free list length
	// freeLow is the shortest the free list has been since the last
	// ReleaseIdle: that many buffers sat idle the whole time.
	// Invariant: freeLow <= freeCount.
	freeLow   int64
	inUse     int64
	allocated uint64
	hits      uint64
	misses    uint64
	_         [64]byte
}

// Pool lends page-aligned buffers; see the package comment for the rules.
// All methods are safe for concurrent use.
type Pool struct {
	budgetBytes      int64
	bucketBuffersMax int64
	buckets          [BucketCount]bucket

	// ownedBytes counts the class bytes of every pooled buffer, lent or
	// cached. Invariant: ownedBytes <= budgetBytes except transiently
	// inside Get's reservation.
	ownedBytes          atomic.Int64
	outsideAllocations  atomic.Uint64
	oversizeAllocations atomic.Uint64
	outsideBytesInUse   atomic.Int64
	evictions           atomic.Uint64
	droppedReturns      atomic.Uint64
	idleReleases        atomic.Uint64
	doubleReleases      atomic.Uint64
	useAfterRelease     atomic.Uint64
	alignmentFallbacks  atomic.Uint64
}

// New returns an empty pool sized by config, or an error wrapping ErrConfig
// that names the bad value.
func New(config Config) (*Pool, error) {
	budget := config.BudgetBytes
	if budget == 0 {
		budget = BudgetBytesDefault
	}
	if budget < BudgetBytesMin {
		return nil, fmt.Errorf("%w: budget %d bytes is below the minimum of %d bytes (512 MiB)",
			ErrConfig, budget, int64(BudgetBytesMin))
	}
	buffersMax := config.BucketBuffersMax
	if buffersMax == 0 {
		buffersMax = BucketBuffersMaxDefault
	}
	if buffersMax < 0 || buffersMax > BucketBuffersMaxLimit {
		return nil, fmt.Errorf("%w: %d buffers per bucket is outside 1..%d",
			ErrConfig, buffersMax, BucketBuffersMaxLimit)
	}
	return &Pool{budgetBytes: budget, bucketBuffersMax: int64(buffersMax)}, nil
}

// BudgetBytes returns the pool's budget in bytes.
func (p *Pool) BudgetBytes() int64 { return p.budgetBytes }

// Get returns an owned, unfrozen buffer with Len() == size and Cap() at
// least size. A cached buffer of the right class is reused (its old
// contents are not cleared); otherwise a zeroed one is allocated, inside
// the budget if it fits and outside it if not. A negative size is a caller
// bug and panics.
func (p *Pool) Get(size int) *Buffer {
	if size < 0 {
		panic("pool: Get of a negative size")
	}
	index := BucketFor(size)
	if index < 0 {
		p.oversizeAllocations.Add(1)
		return p.allocateOutside(size)
	}
	class := &p.buckets[index]
	class.mu.Lock()
	buffer := class.free
	if buffer != nil {
		class.free = buffer.next
		class.freeCount--
		class.freeLow = min(class.freeLow, class.freeCount)
		class.hits++
		class.inUse++
		class.mu.Unlock()
		buffer.next = nil
		buffer.length = size
		buffer.refs.Store(1)
		return buffer
	}
	class.misses++
	class.mu.Unlock()
	classSize := int64(bucketSizes[index])
	if !p.reserve(classSize, index) {
		return p.allocateOutside(size)
	}
	data, fallback := allocateAligned(int(classSize))
	if fallback {
		p.alignmentFallbacks.Add(1)
	}
	buffer = &Buffer{data: data, length: size, pool: p, bucket: index}
	buffer.refs.Store(1)
	class.mu.Lock()
	class.allocated++
	class.inUse++
	class.mu.Unlock()
	return buffer
}

// Put returns a buffer the caller owns; it is Release under the name the
// Get/Put pairing reads best with. A nil buffer is ignored; a buffer of
// another pool is a caller bug and panics.
func (p *Pool) Put(buffer *Buffer) {
	if buffer == nil {
		return
	}
	if buffer.pool != p {
		panic("pool: Put of a buffer from another pool")
	}
	buffer.Release()
}

// reserve adds bytes to ownedBytes if the budget allows, first evicting
// cached buffers of other classes when it does not. It reports whether the
// reservation stands.
func (p *Pool) reserve(bytes int64, requester int) bool {
	if p.ownedBytes.Add(bytes) <= p.budgetBytes {
		return true
	}
	// Evict idle buffers, largest classes first, until the reservation
	// fits or nothing idle is left.
	for index := BucketCount - 1; index >= 0; index-- {
		if index == requester {
			continue
		}
		for p.ownedBytes.Load() > p.budgetBytes && p.evictOne(index) {
		}
		if p.ownedBytes.Load() <= p.budgetBytes {
			return true
		}
	}
	p.ownedBytes.Add(-bytes)
	return false
}

// evictOne drops one idle buffer of class index, reporting whether there
// was one.
func (p *Pool) evictOne(index int) bool {
	class := &p.buckets[index]
	class.mu.Lock()
	buffer := class.free
	if buffer != nil {
		class.free = buffer.next
		class.freeCount--
		class.freeLow = min(class.freeLow, class.freeCount)
	}
	class.mu.Unlock()
	if buffer == nil {
		return false
	}
	buffer.next = nil
	p.ownedBytes.Add(-int64(bucketSizes[index]))
	p.evictions.Add(1)
	return true
}

// allocateOutside serves a request the pool cannot hold.
func (p *Pool) allocateOutside(size int) *Buffer {
	p.outsideAllocations.Add(1)
	capacity := roundUpToPage(size)
	if capacity == 0 {
		capacity = PageSize
	}
	data, fallback := allocateAligned(capacity)
	if fallback {
		p.alignmentFallbacks.Add(1)
	}
	p.outsideBytesInUse.Add(int64(capacity))
	buffer := &Buffer{data: data, length: size, pool: p, bucket: -1}
	buffer.refs.Store(1)
	return buffer
}

// recycle takes back a buffer whose last reference was just released.
func (p *Pool) recycle(buffer *Buffer) {
	buffer.frozen = false
	buffer.length = 0
	if buffer.bucket < 0 {
		p.outsideBytesInUse.Add(-int64(len(buffer.data)))
		return
	}
	class := &p.buckets[buffer.bucket]
	class.mu.Lock()
	class.inUse--
	if class.freeCount < p.bucketBuffersMax {
		buffer.next = class.free
		class.free = buffer
		class.freeCount++
		class.mu.Unlock()
		return
	}
	class.mu.Unlock()
	p.ownedBytes.Add(-int64(bucketSizes[buffer.bucket]))
	p.droppedReturns.Add(1)
}

// ReleaseIdle drops the cached buffers that stayed idle since the previous
// call (each bucket's shortest free list in between: buffers a Get never
// needed) and returns how many bytes it dropped. A caller runs it on a
// timer, so that a burst's buffers do not stay cached, and counted as the
// process's memory, for the life of the process; a bucket in steady use
// keeps the buffers its Gets take. The dropped buffers are left to the
// garbage collector.
func (p *Pool) ReleaseIdle() (releasedBytes int64) {
	for index := range p.buckets {
		class := &p.buckets[index]
		class.mu.Lock()
		idle := class.freeLow
		for range idle {
			buffer := class.free
			class.free = buffer.next
			buffer.next = nil
		}
		class.freeCount -= idle
		class.freeLow = class.freeCount
		class.mu.Unlock()
		if idle > 0 {
			bytes := idle * int64(bucketSizes[index])
			p.ownedBytes.Add(-bytes)
			p.idleReleases.Add(uint64(idle))
			releasedBytes += bytes
		}
	}
	return releasedBytes
}

// misuse reports a buffer ownership bug: a panic in the invariants build,
// otherwise a count in the given counter.
func (p *Pool) misuse(counter *atomic.Uint64, what string) {
	if invariantsEnabled {
		panic("pool: " + what)
	}
	counter.Add(1)
}
