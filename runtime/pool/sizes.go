package pool

// Sizes of the pool, as named limits (STYLE.md rule 5).
const (
	// PageSize is the alignment of every pooled buffer, in bytes.
	PageSize = 4096
	// BucketCount is the number of size classes.
	BucketCount = 28
	// BufferSizeMin is the smallest class, in bytes.
	BufferSizeMin = 4 << 10
	// BufferSizeMax is the largest class, in bytes; larger requests are
	// served outside the pool.
	BufferSizeMax = 512 << 20
	// BudgetBytesDefault is the default budget, in bytes.
	BudgetBytesDefault = 4 << 30
	// BudgetBytesMin is the smallest budget accepted, in bytes.
	BudgetBytesMin = 512 << 20
	// BucketBuffersMaxDefault is how many idle buffers a bucket keeps by
	// default.
	BucketBuffersMaxDefault = 8192
	// BucketBuffersMaxLimit bounds the configurable per-bucket cache.
	BucketBuffersMaxLimit = 1 << 20
)

// bucketSizes holds the class sizes, ascending; index = bucket number.
var bucketSizes = [BucketCount]int{
	4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10,
	768 << 10, 1 << 20, 1536 << 10, 2 << 20, 4 << 20, 6 << 20, 8 << 20, 10 << 20,
	12 << 20, 16 << 20, 24 << 20, 32 << 20, 48 << 20, 64 << 20, 96 << 20, 128 << 20,
	192 << 20, 256 << 20, 384 << 20, 512 << 20,
}

func init() {
	// Invariant: classes ascend strictly, are page multiples, and span
	// BufferSizeMin..BufferSizeMax.
	if bucketSizes[0] != BufferSizeMin || bucketSizes[BucketCount-1] != BufferSizeMax {
		panic("pool: bucket table does not span BufferSizeMin..BufferSizeMax")
	}
	for i, size := range bucketSizes {
		if size%PageSize != 0 {
			panic("pool: bucket size is not a page multiple")
		}
		if i > 0 && size <= bucketSizes[i-1] {
			panic("pool: bucket sizes do not ascend")
		}
	}
	if BudgetBytesMin < BufferSizeMax || BudgetBytesDefault < BudgetBytesMin {
		panic("pool: budget limits are inconsistent")
	}
}

// BucketSizes returns the size of every class in bytes, ascending.
func BucketSizes() [BucketCount]int { return bucketSizes }

// BucketFor returns the index of the smallest class holding size bytes, or
// -1 when size exceeds BufferSizeMax. Sizes of zero or less map to class 0.
func BucketFor(size int) int {
	if size <= BufferSizeMin {
		return 0
	}
	if size > BufferSizeMax {
		return -1
	}
	// Binary search over 28 entries: at most 5 probes, no allocation.
	low, high := 0, BucketCount-1
	for low < high {
		middle := (low + high) / 2
		if bucketSizes[middle] >= size {
			high = middle
		} else {
			low = middle + 1
		}
	}
	return low
}
