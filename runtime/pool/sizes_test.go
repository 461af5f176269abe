package pool

import "testing"

// referenceBucketFor is the obvious linear scan BucketFor must agree with.
func referenceBucketFor(size int) int {
	for index, classSize := range bucketSizes {
		if size <= classSize {
			return index
		}
	}
	return -1
}

func TestBucketTable(t *testing.T) {
	sizes := BucketSizes()
	if len(sizes) != 28 || sizes[0] != 4<<10 || sizes[27] != 512<<20 {
		t.Fatalf("bucket table spans %d..%d in %d classes", sizes[0], sizes[27], len(sizes))
	}
}

func TestBucketForBoundaries(t *testing.T) {
	cases := []struct{ size, want int }{
		{-5, 0}, {0, 0}, {1, 0}, {4096, 0}, {4097, 1}, {8192, 1}, {8193, 2},
		{512 << 10, 7}, {512<<10 + 1, 8}, {768 << 10, 8}, {1 << 20, 9},
		{512 << 20, 27}, {512<<20 + 1, -1},
	}
	for _, c := range cases {
		if got := BucketFor(c.size); got != c.want {
			t.Errorf("BucketFor(%d) = %d, want %d", c.size, got, c.want)
		}
	}
	for index, classSize := range bucketSizes {
		for _, size := range []int{classSize - 1, classSize, classSize + 1} {
			if got, want := BucketFor(size), referenceBucketFor(size); got != want {
				t.Errorf("BucketFor(%d) = %d, reference %d (class %d)", size, got, want, index)
			}
		}
	}
}

func FuzzBucketFor(f *testing.F) {
	f.Add(0)
	f.Add(4097)
	f.Add(512<<20 + 1)
	f.Fuzz(func(t *testing.T, size int) {
		got := BucketFor(size)
		if want := referenceBucketFor(max(size, 0)); got != want {
			t.Fatalf("BucketFor(%d) = %d, reference %d", size, got, want)
		}
		if got >= 0 && size > bucketSizes[got] {
			t.Fatalf("class %d of size %d cannot hold %d", got, bucketSizes[got], size)
		}
	})
}
