package shard

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/spaolacci/murmur3"
)

func TestNamespaceLayout(t *testing.T) {
	namespace, err := PackNamespace(0xABCDE, 0x123, 0x45678)
	if err != nil {
		t.Fatal(err)
	}
	if uint64(namespace) != 0xABCDE_123_45678 {
		t.Fatalf("packed %#x, want %#x", uint64(namespace), uint64(0xABCDE_123_45678))
	}
	if namespace.Stream() != 0xABCDE || namespace.Topic() != 0x123 || namespace.Partition() != 0x45678 {
		t.Fatalf("unpacked %#x %#x %#x", namespace.Stream(), namespace.Topic(), namespace.Partition())
	}
	highest, err := PackNamespace(StreamIDMax, TopicIDMax, PartitionIDMax)
	if err != nil || uint64(highest) != 1<<52-1 {
		t.Fatalf("largest namespace %#x, %v", uint64(highest), err)
	}
}

func TestNamespaceLimits(t *testing.T) {
	for _, ids := range [][3]uint32{
		{StreamIDMax + 1, 0, 0}, {0, TopicIDMax + 1, 0}, {0, 0, PartitionIDMax + 1}, {1 << 31, 1 << 31, 1 << 31},
	} {
		if _, err := ShardOf(ids[0], ids[1], ids[2], 2); !errors.Is(err, ErrNamespace) {
			t.Errorf("ShardOf(%v) = %v, want ErrNamespace", ids, err)
		}
	}
}

// TestShardOfMatchesTheDefinition recomputes the route through murmur3's
// streaming hasher, a second path to the same definition.
func TestShardOfMatchesTheDefinition(t *testing.T) {
	for _, shards := range []int{1, 2, 3, 7, 64} {
		for partition := uint32(0); partition < 50; partition++ {
			var bytes [8]byte
			binary.LittleEndian.PutUint64(bytes[:], uint64(3)<<32|uint64(5)<<20|uint64(partition))
			hasher := murmur3.New64()
			if _, err := hasher.Write(bytes[:]); err != nil {
				t.Fatal(err)
			}
			want := int(hasher.Sum64()>>48) % shards
			got, err := ShardOf(3, 5, partition, shards)
			if err != nil || got != want {
				t.Fatalf("ShardOf(3, 5, %d, %d) = %d, %v; want %d", partition, shards, got, err, want)
			}
		}
	}
}

func FuzzMurmur3Sum64Of8(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(1<<52 - 1))
	f.Add(uint64(0xABCDE_123_45678))
	f.Fuzz(func(t *testing.T, value uint64) {
		var bytes [8]byte
		binary.LittleEndian.PutUint64(bytes[:], value)
		if got, want := murmur3Sum64Of8(value), murmur3.Sum64(bytes[:]); got != want {
			t.Fatalf("murmur3Sum64Of8(%#x) = %#x, murmur3.Sum64 %#x", value, got, want)
		}
	})
}

func TestPartitionsOfATopicSpreadOverTwoShards(t *testing.T) {
	const partitions = 8
	var owned [2]int
	for partition := uint32(0); partition < partitions; partition++ {
		shard, err := ShardOf(0, 0, partition, 2)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := ShardOf(0, 0, partition, 2)
		if shard != again {
			t.Fatalf("partition %d routed to %d then %d", partition, shard, again)
		}
		owned[shard]++
	}
	if owned[0] == 0 || owned[1] == 0 {
		t.Fatalf("8 partitions of topic 0 landed %v on two shards", owned)
	}
	// Over many partitions the split is close to even.
	owned = [2]int{}
	for partition := uint32(0); partition < 10000; partition++ {
		shard, _ := ShardOf(1, 2, partition, 2)
		owned[shard]++
	}
	if owned[0] < 4500 || owned[1] < 4500 {
		t.Fatalf("10000 partitions split %v", owned)
	}
}

func TestShardOfDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := ShardOf(1, 2, 3, 4); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("ShardOf allocated %.1f times", allocs)
	}
}

func BenchmarkShardOf(b *testing.B) {
	partition := uint32(0)
	for b.Loop() {
		if _, err := ShardOf(1, 2, partition, 8); err != nil {
			b.Fatal(err)
		}
		partition = (partition + 1) & PartitionIDMax
	}
}
