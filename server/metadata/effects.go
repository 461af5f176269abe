package metadata

// EffectKind says what the server must do outside the state machine after
// an Apply (create or delete partition directories, purge partitions...).
type EffectKind uint8

const (
	// EffectStreamCreated: a stream StreamID now exists (create its
	// directory).
	EffectStreamCreated EffectKind = iota + 1
	// EffectStreamDeleted: the stream StreamID is gone. It follows one
	// EffectTopicDeleted per topic the stream held, in ascending topic id.
	EffectStreamDeleted
	// EffectTopicCreated: topic TopicID of StreamID exists with
	// PartitionIDs (create the partitions).
	EffectTopicCreated
	// EffectTopicUpdated: the options of TopicID changed (flush
	// thresholds, expiry, size caps may need refreshing).
	EffectTopicUpdated
	// EffectTopicDeleted: topic TopicID of StreamID with PartitionIDs is
	// gone (delete its partitions and directory).
	EffectTopicDeleted
	// EffectTopicPurged: every partition in PartitionIDs restarts empty at
	// offset 0 with its consumer offsets cleared. PurgeStream emits one
	// per topic, in ascending topic id.
	EffectTopicPurged
	// EffectPartitionsCreated: PartitionIDs were added to the topic.
	EffectPartitionsCreated
	// EffectPartitionsDeleted: PartitionIDs were removed from the topic.
	EffectPartitionsDeleted
	// EffectSegmentsDeleted: delete the SegmentsCount oldest sealed
	// segments of partition PartitionIDs[0].
	EffectSegmentsDeleted
	// EffectUserDeleted: user UserID is gone (end its sessions).
	EffectUserDeleted
	// EffectConsumerGroupDeleted: group GroupID of topic TopicID is gone;
	// drop its offsets (offsets/groups/{GroupID}) in every partition of
	// PartitionIDs.
	EffectConsumerGroupDeleted
)

// Effect is one thing the server must do after an Apply. Effects are
// recorded in the order the server must perform them.
type Effect struct {
	Kind          EffectKind
	StreamID      uint32
	TopicID       uint32
	PartitionIDs  []uint32
	SegmentsCount uint32
	UserID        uint32
	GroupID       uint32
}

// TakeEffects returns the effects recorded since the last call, in order,
// and forgets them. The server drains it after every Apply.
func (m *Machine) TakeEffects() []Effect {
	out := m.effects
	m.effects = nil
	return out
}

func (m *Machine) emit(e Effect) { m.effects = append(m.effects, e) }
