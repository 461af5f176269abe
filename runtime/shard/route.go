package shard

import (
	"errors"
	"fmt"
	"math/bits"
)

// Namespace field widths (DESIGN.md decision 9, the architecture seed's
// IggyNamespace). Together they use the low 52 bits of a u64:
//
//	bit 63 .. 52   51 ........ 32   31 ...... 20   19 ......... 0
//	   zero         stream (20)      topic (12)     partition (20)
const (
	StreamBits    = 20
	TopicBits     = 12
	PartitionBits = 20

	// StreamIDMax, TopicIDMax and PartitionIDMax are the largest IDs the
	// namespace can hold (IDs are assigned from 0).
	StreamIDMax    = 1<<StreamBits - 1
	TopicIDMax     = 1<<TopicBits - 1
	PartitionIDMax = 1<<PartitionBits - 1

	partitionShift = 0
	topicShift     = PartitionBits
	streamShift    = PartitionBits + TopicBits

	// routeHashShift keeps the upper 16 bits of the 64-bit hash: murmur3's
	// low bits mix poorly for small integer inputs (architecture seed).
	routeHashShift = 64 - 16
)

// ErrNamespace is wrapped by errors for IDs that do not fit the namespace.
var ErrNamespace = errors.New("shard: ID outside the partition namespace")

// Namespace is a packed (stream, topic, partition) triple; see the bit
// layout above.
type Namespace uint64

// PackNamespace packs the three IDs, or returns an error wrapping
// ErrNamespace when one does not fit its field.
func PackNamespace(stream, topic, partition uint32) (Namespace, error) {
	switch {
	case stream > StreamIDMax:
		return 0, fmt.Errorf("%w: stream %d is above %d", ErrNamespace, stream, StreamIDMax)
	case topic > TopicIDMax:
		return 0, fmt.Errorf("%w: topic %d is above %d", ErrNamespace, topic, TopicIDMax)
	case partition > PartitionIDMax:
		return 0, fmt.Errorf("%w: partition %d is above %d", ErrNamespace, partition, PartitionIDMax)
	}
	return Namespace(uint64(stream)<<streamShift | uint64(topic)<<topicShift | uint64(partition)<<partitionShift), nil
}

// Stream returns the stream ID field.
func (n Namespace) Stream() uint32 { return uint32(n>>streamShift) & StreamIDMax }

// Topic returns the topic ID field.
func (n Namespace) Topic() uint32 { return uint32(n>>topicShift) & TopicIDMax }

// Partition returns the partition ID field.
func (n Namespace) Partition() uint32 { return uint32(n>>partitionShift) & PartitionIDMax }

// Shard returns the owning shard among shards (> 0): the murmur3 hash of
// the namespace's 8 little-endian bytes (github.com/spaolacci/murmur3's
// Sum64, seed 0), upper 16 bits, modulo shards.
func (n Namespace) Shard(shards int) int {
	if shards <= 0 {
		panic("shard: Namespace.Shard with no shards")
	}
	return int(murmur3Sum64Of8(uint64(n))>>routeHashShift) % shards
}

// murmur3 x64-128 constants (the first half of the 128-bit hash is what
// murmur3.Sum64 returns).
const (
	murmurC1 = 0x87c37b91114253d5
	murmurC2 = 0x4cf5ad432745937f
)

// murmur3Sum64Of8 is murmur3.Sum64 of the 8 little-endian bytes of value,
// specialised to that length: the library's Sum64 moves its input to the
// heap (one allocation per call), and routing runs for every request. An
// 8-byte input has no full 16-byte block, only a tail that fills k1, then
// the finalisation. TestShardOfMatchesTheDefinition and
// FuzzMurmur3Sum64Of8 check it against the library.
func murmur3Sum64Of8(value uint64) uint64 {
	const length = 8
	var h1, h2 uint64 // seed 0
	k1 := value * murmurC1
	k1 = bits.RotateLeft64(k1, 31)
	k1 *= murmurC2
	h1 ^= k1
	h1 ^= length
	h2 ^= length
	h1 += h2
	h2 += h1
	h1 = murmurFinalize(h1)
	h2 = murmurFinalize(h2)
	return h1 + h2
}

// murmurFinalize is murmur3's fmix64 avalanche.
func murmurFinalize(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// ShardOf returns the shard owning a partition, or an error wrapping
// ErrNamespace when an ID does not fit the namespace. shards must be
// positive (a caller bug otherwise, which panics). It does not allocate.
func ShardOf(stream, topic, partition uint32, shards int) (int, error) {
	namespace, err := PackNamespace(stream, topic, partition)
	if err != nil {
		return 0, err
	}
	return namespace.Shard(shards), nil
}
