package partition

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/net/wire/statecodec"
)

// Checkpoint format: statecodec's frame (magic, version, body, XXH3-64 of
// everything before). Version 2 added the flush policy, the first offset
// and the purge generation.
const (
	checkpointMagic   uint32 = 0x54505453 // "STPT"
	checkpointVersion uint16 = 2
	// checkpointBytesMax bounds a checkpoint Restore accepts.
	checkpointBytesMax = 1 << 34
	// consumerOffsetsMax bounds the stored offsets of one partition.
	consumerOffsetsMax = 1 << 24
)

// OffsetBytes is what one stored offset adds to a checkpoint, and
// DescriptorFixedBytes what a checkpoint without unflushed batches holds
// besides its offsets (Checkpoint): a descriptor with n offsets takes
// DescriptorFixedBytes + n*OffsetBytes.
const (
	OffsetBytes          = 1 + 4 + 8
	DescriptorFixedBytes = statecodec.CheckpointHeaderSize + 5*4 + 8 + 1 + 7*8 + statecodec.CheckpointTrailerSize
)

// Checkpoint encodes the whole state deterministically: configuration,
// counters, consumer offsets (ordered by key) and the unflushed batches.
// Two machines that applied the same operations (carrying out their
// flushes) encode to the same bytes.
func (m *Machine) Checkpoint() []byte {
	size := statecodec.CheckpointHeaderSize + 160 + 13*len(m.offsets) + int(m.unflushedBytes) + 8*len(m.unflushed) + statecodec.CheckpointTrailerSize
	out := make([]byte, 0, size)
	out = statecodec.AppendCheckpointHeader(out, checkpointMagic, checkpointVersion)
	out = statecodec.AppendU32(out, m.cfg.StreamID)
	out = statecodec.AppendU32(out, m.cfg.TopicID)
	out = statecodec.AppendU32(out, m.cfg.PartitionID)
	out = statecodec.AppendU32(out, m.cfg.MessagesRequiredToSave)
	out = statecodec.AppendU64(out, m.cfg.SizeOfMessagesRequiredToSaveBytes)
	out = statecodec.AppendFlag(out, m.cfg.FlushEveryBatch)
	out = statecodec.AppendU64(out, m.lastOp)
	out = statecodec.AppendU64(out, m.nextOffset)
	out = statecodec.AppendU64(out, m.firstOffset)
	out = statecodec.AppendU64(out, m.purgeGeneration)
	out = statecodec.AppendU64(out, m.lastTimestamp)
	out = statecodec.AppendU64(out, m.messagesCount)
	out = statecodec.AppendU64(out, m.sizeBytes)
	offsets := m.StoredOffsets()
	out = statecodec.AppendU32(out, uint32(len(offsets)))
	for _, o := range offsets {
		out = append(out, o.Key.Kind)
		out = statecodec.AppendU32(out, o.Key.ID)
		out = statecodec.AppendU64(out, o.Offset)
	}
	out = statecodec.AppendU32(out, uint32(len(m.unflushed)))
	for _, b := range m.unflushed {
		out = statecodec.AppendU64(out, uint64(len(b)))
		out = append(out, b...)
	}
	return statecodec.SealCheckpoint(out)
}

// Restore replaces the whole state with a checkpoint made by Checkpoint.
// On error (wrapping ErrCorruptCheckpoint) the old state is kept. Pending
// effects are dropped. The restored batches live on the Go heap; later
// ones are borrowed from the machine's Buffers, which it keeps (they are
// not state).
func (m *Machine) Restore(data []byte) error {
	restored, err := decodeCheckpoint(data)
	if err != nil {
		return err
	}
	m.ReleaseBuffers()
	restored.cfg.Buffers = m.cfg.Buffers
	restored.cfg.OffsetsMax = m.cfg.OffsetsMax
	*m = *restored
	return nil
}

func decodeCheckpoint(data []byte) (*Machine, error) {
	version, body, err := statecodec.OpenCheckpoint(data, checkpointMagic, checkpointBytesMax, ErrCorruptCheckpoint)
	if err != nil {
		return nil, err
	}
	if version != checkpointVersion {
		return nil, fmt.Errorf("%w: version %d", ErrCorruptCheckpoint, version)
	}
	d := statecodec.NewDecoder(body, ErrMalformed)
	cfg := Config{StreamID: d.U32(), TopicID: d.U32(), PartitionID: d.U32(),
		MessagesRequiredToSave: d.U32(), SizeOfMessagesRequiredToSaveBytes: d.U64(), FlushEveryBatch: d.Flag()}
	m := New(cfg)
	if m.cfg != cfg {
		return nil, fmt.Errorf("%w: zero flush threshold", ErrCorruptCheckpoint)
	}
	m.lastOp = d.U64()
	m.nextOffset = d.U64()
	m.firstOffset = d.U64()
	m.purgeGeneration = d.U64()
	m.lastTimestamp = d.U64()
	m.messagesCount = d.U64()
	m.sizeBytes = d.U64()
	if d.Err() == nil && (m.messagesCount > m.nextOffset || m.firstOffset > m.nextOffset) {
		return nil, fmt.Errorf("%w: %d messages from offset %d below offset %d", ErrCorruptCheckpoint, m.messagesCount, m.firstOffset, m.nextOffset)
	}
	if err := m.decodeOffsets(&d); err != nil {
		return nil, err
	}
	if err := m.decodeUnflushed(&d); err != nil {
		return nil, err
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
	if err := m.invariantError(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
	return m, nil
}

func (m *Machine) decodeOffsets(d *statecodec.Decoder) error {
	n := d.Count(13)
	if n > consumerOffsetsMax {
		return fmt.Errorf("%w: %d offsets", ErrCorruptCheckpoint, n)
	}
	var previous ConsumerKey
	for i := 0; i < n; i++ {
		o := StoredOffset{Key: ConsumerKey{Kind: d.U8(), ID: d.U32()}, Offset: d.U64()}
		if d.Err() != nil {
			break
		}
		if !validConsumerKind(o.Key.Kind) || (i > 0 && !previous.less(o.Key)) || o.Offset >= m.nextOffset {
			return fmt.Errorf("%w: offset entry %d", ErrCorruptCheckpoint, i)
		}
		previous = o.Key
		m.offsets[o.Key] = o.Offset
	}
	if d.Err() != nil {
		return fmt.Errorf("%w: %w", ErrCorruptCheckpoint, d.Err())
	}
	return nil
}

// decodeUnflushed reads the unflushed batches and checks they are
// contiguous and end at nextOffset - 1.
func (m *Machine) decodeUnflushed(d *statecodec.Decoder) error {
	n := d.Count(8 + wire.BatchHeaderSize)
	for i := 0; i < n; i++ {
		length := d.U64()
		if d.Err() != nil || length < wire.BatchHeaderSize || length > uint64(d.Remaining()) {
			return fmt.Errorf("%w: unflushed batch %d length", ErrCorruptCheckpoint, i)
		}
		b := append([]byte(nil), d.Take(int(length))...)
		v := wire.BatchView(b)
		last, ok := lastOffset(b)
		if !ok || v.BatchLength() != length || last < v.BaseOffset() || v.PartitionID() != uint64(m.cfg.PartitionID) {
			return fmt.Errorf("%w: unflushed batch %d header", ErrCorruptCheckpoint, i)
		}
		if len(m.unflushed) > 0 {
			if previous, _ := lastOffset(m.unflushed[len(m.unflushed)-1]); previous+1 != v.BaseOffset() {
				return fmt.Errorf("%w: unflushed batch %d not contiguous", ErrCorruptCheckpoint, i)
			}
		}
		m.unflushed = append(m.unflushed, b)
		m.unflushedTokens = append(m.unflushedTokens, nil)
		m.unflushedMessages += uint64(v.MessageCount())
		m.unflushedBytes += length
	}
	if d.Err() != nil {
		return fmt.Errorf("%w: %w", ErrCorruptCheckpoint, d.Err())
	}
	if m.unflushedMessages > m.messagesCount {
		return fmt.Errorf("%w: %d unflushed of %d messages", ErrCorruptCheckpoint, m.unflushedMessages, m.messagesCount)
	}
	if len(m.unflushed) > 0 {
		if last, _ := lastOffset(m.unflushed[len(m.unflushed)-1]); last+1 != m.nextOffset {
			return fmt.Errorf("%w: unflushed batches end at %d, next offset %d", ErrCorruptCheckpoint, last, m.nextOffset)
		}
	}
	return nil
}
