package wire

import "fmt"

// ConsumerKind is the first byte of a Consumer (§4.3).
type ConsumerKind uint8

// Consumer kinds.
const (
	ConsumerKindSingle ConsumerKind = 1
	ConsumerKindGroup  ConsumerKind = 2
)

// Consumer identifies who reads or stores offsets (§4.3):
// [kind u8][Identifier]. A single consumer with a string id is keyed by
// XXH32 of the name; a group id resolves to the group.
type Consumer struct {
	Kind ConsumerKind
	ID   Identifier
}

// AppendTo appends the encoding of c.
func (c Consumer) AppendTo(dst []byte) ([]byte, error) {
	if c.Kind != ConsumerKindSingle && c.Kind != ConsumerKindGroup {
		return dst, fmt.Errorf("%w: kind %d", ErrBadConsumer, c.Kind)
	}
	return c.ID.AppendTo(append(dst, byte(c.Kind)))
}

func (d *decoder) consumer(what string) Consumer {
	kind := ConsumerKind(d.u8(what))
	if d.err == nil && kind != ConsumerKindSingle && kind != ConsumerKindGroup {
		d.failf(ErrBadConsumer, "%s kind %d", what, kind)
		return Consumer{}
	}
	return Consumer{Kind: kind, ID: d.identifier(what)}
}

// PartitioningKind is the first byte of a Partitioning (§4.4).
type PartitioningKind uint8

// Partitioning kinds.
const (
	PartitioningBalanced    PartitioningKind = 1
	PartitioningPartitionID PartitioningKind = 2
	PartitioningMessagesKey PartitioningKind = 3
)

// Partitioning says which partition a SendMessages batch goes to (§4.4):
// [kind u8][length u8][value].
type Partitioning struct {
	Kind PartitioningKind
	// PartitionID is the target when Kind is PartitioningPartitionID.
	PartitionID uint32
	// Key is the message key (1..255 bytes) when Kind is
	// PartitioningMessagesKey. Decode returns a subslice of its input.
	Key []byte
}

// Balanced returns the round-robin partitioning.
func Balanced() Partitioning { return Partitioning{Kind: PartitioningBalanced} }

// PartitionIDPartitioning targets partition id.
func PartitionIDPartitioning(id uint32) Partitioning {
	return Partitioning{Kind: PartitioningPartitionID, PartitionID: id}
}

// MessagesKey targets the partition chosen by XXH32(key) mod the count.
func MessagesKey(key []byte) Partitioning {
	return Partitioning{Kind: PartitioningMessagesKey, Key: key}
}

// AppendTo appends the encoding of p.
func (p Partitioning) AppendTo(dst []byte) ([]byte, error) {
	switch p.Kind {
	case PartitioningBalanced:
		return append(dst, byte(p.Kind), 0), nil
	case PartitioningPartitionID:
		return appendU32(append(dst, byte(p.Kind), 4), p.PartitionID), nil
	case PartitioningMessagesKey:
		if len(p.Key) == 0 || len(p.Key) > MaxNameLength {
			return dst, fmt.Errorf("%w: key of %d bytes", ErrBadPartitioning, len(p.Key))
		}
		return append(append(dst, byte(p.Kind), byte(len(p.Key))), p.Key...), nil
	}
	return dst, fmt.Errorf("%w: kind %d", ErrBadPartitioning, p.Kind)
}

func (d *decoder) partitioning(what string) Partitioning {
	kind := PartitioningKind(d.u8(what))
	n := int(d.u8(what))
	if d.err != nil {
		return Partitioning{}
	}
	switch {
	case kind == PartitioningBalanced && n == 0:
		return Balanced()
	case kind == PartitioningPartitionID && n == 4:
		return PartitionIDPartitioning(d.u32(what))
	case kind == PartitioningMessagesKey && n > 0:
		return MessagesKey(d.take(n, what))
	}
	d.failf(ErrBadPartitioning, "%s kind %d length %d", what, kind, n)
	return Partitioning{}
}

// PollingKind is the first byte of a PollingStrategy (§4.5).
type PollingKind uint8

// Polling strategy kinds.
const (
	PollOffset    PollingKind = 1
	PollTimestamp PollingKind = 2
	PollFirst     PollingKind = 3
	PollLast      PollingKind = 4
	PollNext      PollingKind = 5
)

// PollingStrategy says where a poll starts (§4.5): [kind u8][value u64].
type PollingStrategy struct {
	Kind  PollingKind
	Value uint64
}

// PollingStrategySize is the encoded size of a PollingStrategy.
const PollingStrategySize = 9

// AppendTo appends the encoding of s.
func (s PollingStrategy) AppendTo(dst []byte) ([]byte, error) {
	if s.Kind < PollOffset || s.Kind > PollNext {
		return dst, fmt.Errorf("%w: kind %d", ErrBadPollingStrategy, s.Kind)
	}
	return appendU64(append(dst, byte(s.Kind)), s.Value), nil
}

func (d *decoder) pollingStrategy(what string) PollingStrategy {
	kind := PollingKind(d.u8(what))
	value := d.u64(what)
	if d.err == nil && (kind < PollOffset || kind > PollNext) {
		d.failf(ErrBadPollingStrategy, "%s kind %d", what, kind)
		return PollingStrategy{}
	}
	return PollingStrategy{Kind: kind, Value: value}
}

// AckLevel is the acknowledgement requested for an offset write (§4.6).
type AckLevel uint8

// Ack levels.
const (
	// AckNone: applied on the partition primary, answered without
	// replication.
	AckNone AckLevel = 0
	// AckQuorum: replicated before the answer (SDK default).
	AckQuorum AckLevel = 1
)

func (d *decoder) ackLevel(what string) AckLevel {
	a := AckLevel(d.u8(what))
	if d.err == nil && a > AckQuorum {
		d.failf(ErrBadAckLevel, "%s %d", what, a)
		return 0
	}
	return a
}

// OptionalPartition is the [has_partition u8][partition_id u32] pair of
// poll and offset requests: the 4 bytes are always on the wire (0 when
// absent). Only a flag byte of 1 means present.
type OptionalPartition struct {
	Present bool
	ID      uint32
}

// SomePartition returns a present partition id.
func SomePartition(id uint32) OptionalPartition { return OptionalPartition{Present: true, ID: id} }

// AppendTo appends the 5-byte encoding of p. An absent partition is
// written with id 0.
func (p OptionalPartition) AppendTo(dst []byte) []byte {
	if !p.Present {
		return appendU32(append(dst, 0), 0)
	}
	return appendU32(append(dst, 1), p.ID)
}

// optionalPartition decodes the pair; a flag other than 1 means absent and
// the id then reads as 0 whatever the bytes hold.
func (d *decoder) optionalPartition(what string) OptionalPartition {
	flag := d.u8(what)
	id := d.u32(what)
	if flag != 1 {
		return OptionalPartition{}
	}
	return OptionalPartition{Present: true, ID: id}
}
