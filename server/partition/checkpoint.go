package partition

import (
	"encoding/binary"
	"fmt"

	"github.com/stratabroker/strata/net/wire"
	"github.com/zeebo/xxh3"
)

// Checkpoint format: magic, version, body, XXH3-64 of everything before.
const (
	checkpointMagic   uint32 = 0x54505453 // "STPT"
	checkpointVersion uint16 = 1
	checkpointHeader         = 4 + 2
	checkpointTrailer        = 8
	// checkpointBytesMax bounds a checkpoint Restore accepts.
	checkpointBytesMax = 1 << 34
	// consumerOffsetsMax bounds the stored offsets of one partition.
	consumerOffsetsMax = 1 << 24
)

// Checkpoint encodes the whole state deterministically: configuration,
// counters, consumer offsets (ordered by key) and the unflushed batches.
func (m *Machine) Checkpoint() []byte {
	size := checkpointHeader + 128 + 13*len(m.offsets) + int(m.unflushedBytes) + 8*len(m.unflushed) + checkpointTrailer
	out := make([]byte, 0, size)
	out = appendU32(out, checkpointMagic)
	out = binary.LittleEndian.AppendUint16(out, checkpointVersion)
	out = appendU32(out, m.cfg.StreamID)
	out = appendU32(out, m.cfg.TopicID)
	out = appendU32(out, m.cfg.PartitionID)
	out = appendU32(out, m.cfg.MessagesRequiredToSave)
	out = appendU64(out, m.cfg.SizeOfMessagesRequiredToSaveBytes)
	out = appendU64(out, m.lastOp)
	out = appendU64(out, m.nextOffset)
	out = appendU64(out, m.lastTimestamp)
	out = appendU64(out, m.messagesCount)
	out = appendU64(out, m.sizeBytes)
	offsets := m.StoredOffsets()
	out = appendU32(out, uint32(len(offsets)))
	for _, o := range offsets {
		out = append(out, o.Key.Kind)
		out = appendU32(out, o.Key.ID)
		out = appendU64(out, o.Offset)
	}
	out = appendU32(out, uint32(len(m.unflushed)))
	for _, b := range m.unflushed {
		out = appendU64(out, uint64(len(b)))
		out = append(out, b...)
	}
	return appendU64(out, xxh3.Hash(out))
}

// Restore replaces the whole state with a checkpoint made by Checkpoint.
// On error (wrapping ErrCorruptCheckpoint) the old state is kept. Pending
// effects are dropped.
func (m *Machine) Restore(data []byte) error {
	restored, err := decodeCheckpoint(data)
	if err != nil {
		return err
	}
	*m = *restored
	return nil
}

func decodeCheckpoint(data []byte) (*Machine, error) {
	if len(data) < checkpointHeader+checkpointTrailer || uint64(len(data)) > checkpointBytesMax {
		return nil, fmt.Errorf("%w: size %d", ErrCorruptCheckpoint, len(data))
	}
	body := data[:len(data)-checkpointTrailer]
	if got, want := xxh3.Hash(body), binary.LittleEndian.Uint64(data[len(body):]); got != want {
		return nil, fmt.Errorf("%w: checksum %x, want %x", ErrCorruptCheckpoint, got, want)
	}
	if magic := binary.LittleEndian.Uint32(body); magic != checkpointMagic {
		return nil, fmt.Errorf("%w: magic %x", ErrCorruptCheckpoint, magic)
	}
	if version := binary.LittleEndian.Uint16(body[4:]); version != checkpointVersion {
		return nil, fmt.Errorf("%w: version %d", ErrCorruptCheckpoint, version)
	}
	d := decoder{buf: body, off: checkpointHeader}
	cfg := Config{StreamID: d.u32(), TopicID: d.u32(), PartitionID: d.u32(),
		MessagesRequiredToSave: d.u32(), SizeOfMessagesRequiredToSaveBytes: d.u64()}
	m := New(cfg)
	if m.cfg != cfg {
		return nil, fmt.Errorf("%w: zero flush threshold", ErrCorruptCheckpoint)
	}
	m.lastOp = d.u64()
	m.nextOffset = d.u64()
	m.lastTimestamp = d.u64()
	m.messagesCount = d.u64()
	m.sizeBytes = d.u64()
	if d.err == nil && m.messagesCount > m.nextOffset {
		return nil, fmt.Errorf("%w: %d messages below offset %d", ErrCorruptCheckpoint, m.messagesCount, m.nextOffset)
	}
	if err := m.decodeOffsets(&d); err != nil {
		return nil, err
	}
	if err := m.decodeUnflushed(&d); err != nil {
		return nil, err
	}
	if err := d.end(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
	if err := m.invariantError(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
	return m, nil
}

func (m *Machine) decodeOffsets(d *decoder) error {
	n := d.count(13)
	if n > consumerOffsetsMax {
		return fmt.Errorf("%w: %d offsets", ErrCorruptCheckpoint, n)
	}
	var previous ConsumerKey
	for i := 0; i < n; i++ {
		o := StoredOffset{Key: ConsumerKey{Kind: d.u8(), ID: d.u32()}, Offset: d.u64()}
		if d.err != nil {
			break
		}
		if !validConsumerKind(o.Key.Kind) || (i > 0 && !previous.less(o.Key)) || o.Offset >= m.nextOffset {
			return fmt.Errorf("%w: offset entry %d", ErrCorruptCheckpoint, i)
		}
		previous = o.Key
		m.offsets[o.Key] = o.Offset
	}
	if d.err != nil {
		return fmt.Errorf("%w: %w", ErrCorruptCheckpoint, d.err)
	}
	return nil
}

// decodeUnflushed reads the unflushed batches and checks they are
// contiguous and end at nextOffset - 1.
func (m *Machine) decodeUnflushed(d *decoder) error {
	n := d.count(8 + wire.BatchHeaderSize)
	for i := 0; i < n; i++ {
		length := d.u64()
		if d.err != nil || length < wire.BatchHeaderSize || length > uint64(d.remaining()) {
			return fmt.Errorf("%w: unflushed batch %d length", ErrCorruptCheckpoint, i)
		}
		b := append([]byte(nil), d.take(int(length))...)
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
	if d.err != nil {
		return fmt.Errorf("%w: %w", ErrCorruptCheckpoint, d.err)
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
