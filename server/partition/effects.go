package partition

// EffectKind says what the server must do on storage after an Apply.
type EffectKind uint8

const (
	// EffectOffsetStored: write Consumer's Offset to
	// offsets/consumers/{id} (or groups/{id}); AutoCommit says it came
	// from a poll, whose reply never waits for the write.
	EffectOffsetStored EffectKind = iota + 1
	// EffectOffsetDeleted: remove Consumer's offset file.
	EffectOffsetDeleted
	// EffectFlush: write the unflushed batches up to offset UpTo to the
	// segments, then report them with MarkFlushed(UpTo).
	EffectFlush
	// EffectPurged: remove every segment and offset file of the partition
	// and record Generation as its purge generation.
	EffectPurged
	// EffectSegmentsDeleted: delete the sealed segments whose messages
	// all lie below offset Below.
	EffectSegmentsDeleted
)

// Effect is one change on storage that an applied operation asks for.
// The server carries the effects out in order, after the Apply that
// emitted them and before the next one, so that the flush frontier (what
// MarkFlushed released) is, like everything else in the machine, a
// function of the operations applied.
type Effect struct {
	Kind EffectKind
	// Consumer and Offset: EffectOffsetStored, EffectOffsetDeleted.
	Consumer   ConsumerKey
	Offset     uint64
	AutoCommit bool
	// UpTo: EffectFlush.
	UpTo uint64
	// Generation: EffectPurged.
	Generation uint64
	// Below: EffectSegmentsDeleted.
	Below uint64
}

// TakeEffects returns the effects recorded since the last call, in order
// (nil when there are none). The slice is the machine's, reused for the
// next effects: valid until the next Apply.
func (m *Machine) TakeEffects() []Effect {
	if len(m.effects) == 0 {
		return nil
	}
	out := m.effects
	m.effects = m.effects[:0]
	return out
}

func (m *Machine) emit(e Effect) { m.effects = append(m.effects, e) }
