package partition

// EffectKind says what the server must persist after an Apply.
type EffectKind uint8

const (
	// EffectOffsetStored: write Consumer's Offset to
	// offsets/consumers/{id} (or groups/{id}).
	EffectOffsetStored EffectKind = iota + 1
	// EffectOffsetDeleted: remove Consumer's offset file.
	EffectOffsetDeleted
)

// Effect is one consumer-offset change the server persists. Message
// batches are not effects: they wait in Unflushed until FlushDue.
type Effect struct {
	Kind     EffectKind
	Consumer ConsumerKey
	Offset   uint64
}

// TakeEffects returns the effects recorded since the last call, in order,
// and forgets them.
func (m *Machine) TakeEffects() []Effect {
	out := m.effects
	m.effects = nil
	return out
}

func (m *Machine) emit(e Effect) { m.effects = append(m.effects, e) }
