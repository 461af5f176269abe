// Package partition is Strata's per-partition deterministic state machine:
// SendMessages (operation 160) assigns offsets and timestamps to batches,
// StoreConsumerOffset (161) and DeleteConsumerOffset (162) keep consumer
// offsets, and the server's own operations change the flush thresholds
// (176), purge the partition (177) and forget deleted segments (178). The
// machine tracks the partition's counters and the batches not yet flushed
// to segments. Every change of its state is an operation through Apply;
// what an operation asks of storage (write offsets, flush batches, remove
// files) comes out as Effects that the server carries out after the
// Apply, reporting a flush back with MarkFlushed.
//
// The package is pure: no OS access, no goroutines, no wall clock, no
// global randomness, and no map iteration order reaches an output.
package partition

import (
	"errors"
	"sort"
)

// Defaults of §9 used when a Config leaves a threshold at zero.
const (
	// DefaultMessagesRequiredToSave is the default message-count flush
	// threshold.
	DefaultMessagesRequiredToSave = 1024
	// DefaultSizeOfMessagesRequiredToSaveBytes is the default byte flush
	// threshold.
	DefaultSizeOfMessagesRequiredToSaveBytes = 1 << 20
)

// Consumer kinds of §4.3.
const (
	ConsumerKindConsumer uint8 = 1
	ConsumerKindGroup    uint8 = 2
)

var (
	// ErrMalformed reports an operation body that does not decode.
	ErrMalformed = errors.New("partition: malformed encoding")
	// ErrUnknownOperation reports an operation byte this machine does not
	// apply.
	ErrUnknownOperation = errors.New("partition: unknown operation")
	// ErrCorruptCheckpoint reports a checkpoint that does not verify or
	// decode.
	ErrCorruptCheckpoint = errors.New("partition: corrupt checkpoint")
	// ErrInvalidRecovery reports recovered state that is inconsistent.
	ErrInvalidRecovery = errors.New("partition: invalid recovered state")
)

// Config identifies the partition and carries its topic's flush
// thresholds.
type Config struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	// MessagesRequiredToSave: flush once this many messages are unflushed
	// (0 = DefaultMessagesRequiredToSave).
	MessagesRequiredToSave uint32
	// SizeOfMessagesRequiredToSaveBytes: flush once this many batch bytes
	// are unflushed (0 = DefaultSizeOfMessagesRequiredToSaveBytes).
	SizeOfMessagesRequiredToSaveBytes uint64
	// FlushEveryBatch asks for a flush after every send, whatever the
	// thresholds: a topic whose sends are synced before the reply.
	FlushEveryBatch bool
	// OffsetsMax bounds the consumer offsets the partition stores (0: the
	// decoder's bound, 1<<24); a store of a new consumer past it is
	// refused with CodeOffsetsFull. The group host sets it from its
	// checkpoint area, which must hold every stored offset: a descriptor
	// that does not fit is never written, and a partition whose journal
	// window then fills takes no send again. Every replica of a group
	// derives the same bound from the same configuration.
	OffsetsMax int
	// Buffers lends the memory unflushed batches are kept in (the
	// server's memory pool); nil keeps them on the Go heap. It does not
	// take part in the machine's state: only where bytes live.
	Buffers Buffers
}

// Buffers lends memory for the batches a machine keeps until they are
// flushed. Borrow returns a slice of n bytes and a token; the machine hands
// the token to Return once the batch is released (flushed or purged).
type Buffers interface {
	Borrow(n int) (buf []byte, token any)
	Return(token any)
}

func (c Config) withDefaults() Config {
	if c.MessagesRequiredToSave == 0 {
		c.MessagesRequiredToSave = DefaultMessagesRequiredToSave
	}
	if c.SizeOfMessagesRequiredToSaveBytes == 0 {
		c.SizeOfMessagesRequiredToSaveBytes = DefaultSizeOfMessagesRequiredToSaveBytes
	}
	return c
}

// ConsumerKey names a stored consumer offset: the consumer kind and the
// numeric consumer id (XXH32 of a name, computed by the server) or group
// id.
type ConsumerKey struct {
	Kind uint8
	ID   uint32
}

func (k ConsumerKey) less(o ConsumerKey) bool {
	if k.Kind != o.Kind {
		return k.Kind < o.Kind
	}
	return k.ID < o.ID
}

// StoredOffset is one consumer's stored offset.
type StoredOffset struct {
	Key    ConsumerKey
	Offset uint64
}

// Machine is one partition's state machine. It implements the
// vsr.StateMachine contract. One goroutine at a time may call it.
type Machine struct {
	cfg Config
	// nextOffset is the offset the next message receives; 0 when empty.
	// Invariant: nextOffset >= the messages appended since the last purge
	// (equal unless a recovery skipped the offsets reserved before a
	// crash).
	nextOffset uint64
	// firstOffset is the first offset still held: the messages below it
	// were in segments that were deleted. Invariant: firstOffset <=
	// nextOffset and every unflushed batch starts at or after it.
	firstOffset uint64
	// purgeGeneration is the metadata op of the last purge applied (0:
	// never purged); a purge at or below it changes nothing.
	purgeGeneration uint64
	// lastTimestamp is the latest base_timestamp assigned; base timestamps
	// never go backwards.
	lastTimestamp uint64
	messagesCount uint64
	sizeBytes     uint64
	offsets       map[ConsumerKey]uint64
	// unflushed holds stamped batches not yet reported flushed, in offset
	// order. Invariant: contiguous, the last one ends at nextOffset - 1;
	// unflushedMessages and unflushedBytes are their totals.
	unflushed [][]byte
	// unflushedTokens holds the Buffers token of each unflushed batch
	// (nil for heap memory), index for index with unflushed.
	unflushedTokens   []any
	unflushedMessages uint64
	unflushedBytes    uint64
	lastOp            uint64
	effects           []Effect
}

// New returns the machine of a new, empty partition.
func New(cfg Config) *Machine {
	return &Machine{cfg: cfg.withDefaults(), offsets: make(map[ConsumerKey]uint64)}
}

// RecoveredState is what storage found on disk for a partition at boot.
type RecoveredState struct {
	// NextOffset is the offset the next message gets: the last durable
	// offset + 1, or past the offsets reserved before a crash (storage
	// skips them so none is handed out twice), or 0 for an empty
	// partition.
	NextOffset uint64
	// FirstOffset is the first offset the segments hold (NextOffset when
	// they hold none).
	FirstOffset uint64
	// PurgeGeneration is the purge generation the partition's superblock
	// recorded.
	PurgeGeneration uint64
	// LastTimestamp is the base_timestamp of the last durable batch.
	LastTimestamp uint64
	MessagesCount uint64
	SizeBytes     uint64
	Offsets       []StoredOffset
}

// Recover returns a machine rebuilt from what storage found on disk. Every
// recovered message is flushed, so the unflushed buffer starts empty.
// Offsets beyond the last message (a torn tail was truncated) are clamped
// to it, offsets of an empty partition are dropped; duplicates or unknown
// consumer kinds are an error.
func Recover(cfg Config, state RecoveredState) (*Machine, error) {
	m := New(cfg)
	if state.MessagesCount > state.NextOffset || state.FirstOffset > state.NextOffset {
		return nil, ErrInvalidRecovery
	}
	m.nextOffset = state.NextOffset
	m.firstOffset = state.FirstOffset
	m.purgeGeneration = state.PurgeGeneration
	m.lastTimestamp = state.LastTimestamp
	m.messagesCount = state.MessagesCount
	m.sizeBytes = state.SizeBytes
	for _, o := range state.Offsets {
		if !validConsumerKind(o.Key.Kind) {
			return nil, ErrInvalidRecovery
		}
		if _, dup := m.offsets[o.Key]; dup {
			return nil, ErrInvalidRecovery
		}
		if m.nextOffset == 0 {
			continue
		}
		m.offsets[o.Key] = min(o.Offset, m.nextOffset-1)
	}
	return m, nil
}

func validConsumerKind(kind uint8) bool {
	return kind == ConsumerKindConsumer || kind == ConsumerKindGroup
}

// Config returns the partition's configuration (defaults filled in).
func (m *Machine) Config() Config { return m.cfg }

// NextOffset returns the offset the next message will receive.
func (m *Machine) NextOffset() uint64 { return m.nextOffset }

// CurrentOffset returns the highest committed offset; ok is false (and the
// offset 0) for an empty partition. After a recovery skipped the offsets
// reserved before a crash it is the last skipped one until a message
// follows: no offset at or below it is handed out again.
func (m *Machine) CurrentOffset() (offset uint64, ok bool) {
	if m.nextOffset == 0 {
		return 0, false
	}
	return m.nextOffset - 1, true
}

// MessagesCount returns the number of messages held.
func (m *Machine) MessagesCount() uint64 { return m.messagesCount }

// SizeBytes returns the total batch bytes held.
func (m *Machine) SizeBytes() uint64 { return m.sizeBytes }

// FirstOffset returns the first offset still held (segments below it were
// deleted).
func (m *Machine) FirstOffset() uint64 { return m.firstOffset }

// PurgeGeneration returns the metadata op of the last purge applied.
func (m *Machine) PurgeGeneration() uint64 { return m.purgeGeneration }

// LastTimestamp returns the latest base_timestamp assigned.
func (m *Machine) LastTimestamp() uint64 { return m.lastTimestamp }

// LastOp returns the commit number of the last applied operation.
func (m *Machine) LastOp() uint64 { return m.lastOp }

// StoredOffset returns the stored offset of key.
func (m *Machine) StoredOffset(key ConsumerKey) (uint64, bool) {
	o, ok := m.offsets[key]
	return o, ok
}

// StoredOffsets returns every stored offset, ordered by kind then id.
func (m *Machine) StoredOffsets() []StoredOffset {
	out := make([]StoredOffset, 0, len(m.offsets))
	for k, v := range m.offsets {
		out = append(out, StoredOffset{Key: k, Offset: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.less(out[j].Key) })
	return out
}
