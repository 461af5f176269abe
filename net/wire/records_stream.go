package wire

import "fmt"

// Stream is the record of §4.11.1 (GetStreams lists them, no count).
type Stream struct {
	ID            uint32
	CreatedAt     uint64 // micros since the Unix epoch
	TopicsCount   uint32
	SizeBytes     uint64
	MessagesCount uint64
	Name          string
	// Options are the stream's explicit options (none exist today).
	Options Options
}

// AppendTo appends the record.
func (s *Stream) AppendTo(dst []byte) ([]byte, error) {
	dst = appendU32(dst, s.ID)
	dst = appendU64(dst, s.CreatedAt)
	dst = appendU32(dst, s.TopicsCount)
	dst = appendU64(dst, s.SizeBytes)
	dst = appendU64(dst, s.MessagesCount)
	dst, err := AppendName(dst, s.Name)
	if err != nil {
		return dst, err
	}
	return s.Options.AppendBlock(dst)
}

func (d *decoder) stream() Stream {
	return Stream{
		ID:            d.u32("stream id"),
		CreatedAt:     d.u64("stream created_at"),
		TopicsCount:   d.u32("stream topics_count"),
		SizeBytes:     d.u64("stream size"),
		MessagesCount: d.u64("stream messages_count"),
		Name:          d.name("stream name"),
		Options:       d.optionsBlock("stream options"),
	}
}

// Decode decodes a body holding exactly one Stream.
func (s *Stream) Decode(b []byte) error {
	d := newDecoder(b)
	*s = d.stream()
	return d.end("stream")
}

// StreamDetails is a Stream followed by exactly TopicsCount TopicHeaders
// (GetStream, CreateStream payloads).
type StreamDetails struct {
	Stream
	Topics []TopicHeader
}

// AppendTo appends the record; TopicsCount must equal len(Topics).
func (s *StreamDetails) AppendTo(dst []byte) ([]byte, error) {
	if int(s.TopicsCount) != len(s.Topics) {
		return dst, fmt.Errorf("%w: topics_count %d with %d topics", ErrBadValue, s.TopicsCount, len(s.Topics))
	}
	dst, err := s.Stream.AppendTo(dst)
	for i := 0; err == nil && i < len(s.Topics); i++ {
		dst, err = s.Topics[i].AppendTo(dst)
	}
	return dst, err
}

// Decode decodes a body holding exactly one StreamDetails. An empty body
// (stream not found) fails with ErrTruncated; callers check len first.
func (s *StreamDetails) Decode(b []byte) error {
	d := newDecoder(b)
	s.Stream = d.stream()
	s.Topics = nil
	for i := uint32(0); i < s.TopicsCount && d.err == nil; i++ {
		s.Topics = append(s.Topics, d.topicHeader())
	}
	return d.end("stream details")
}

// Compression algorithm codes of a topic.
const (
	CompressionNone uint8 = 1
	CompressionGzip uint8 = 2
)

// TopicHeader is the record of §4.11.2.
type TopicHeader struct {
	ID              uint32
	CreatedAt       uint64
	PartitionsCount uint32
	// MessageExpiry in micros: 0 = server default, MaxUint64 = never.
	MessageExpiry        uint64
	CompressionAlgorithm uint8
	// MaxTopicSize in bytes: 0 = server default, MaxUint64 = unlimited.
	MaxTopicSize  uint64
	SizeBytes     uint64
	MessagesCount uint64
	Name          string
	// Options are the explicit options (what the client sent, canonical).
	Options Options
	// Derived are the server-resolved values of the keys not sent.
	Derived Options
}

// AppendTo appends the record.
func (t *TopicHeader) AppendTo(dst []byte) ([]byte, error) {
	dst = appendU32(dst, t.ID)
	dst = appendU64(dst, t.CreatedAt)
	dst = appendU32(dst, t.PartitionsCount)
	dst = appendU64(dst, t.MessageExpiry)
	dst = append(dst, t.CompressionAlgorithm)
	dst = appendU64(dst, t.MaxTopicSize)
	dst = appendU64(dst, t.SizeBytes)
	dst = appendU64(dst, t.MessagesCount)
	dst, err := AppendName(dst, t.Name)
	if err != nil {
		return dst, err
	}
	if dst, err = t.Options.AppendBlock(dst); err != nil {
		return dst, err
	}
	return t.Derived.AppendBlock(dst)
}

func (d *decoder) topicHeader() TopicHeader {
	return TopicHeader{
		ID:                   d.u32("topic id"),
		CreatedAt:            d.u64("topic created_at"),
		PartitionsCount:      d.u32("topic partitions_count"),
		MessageExpiry:        d.u64("topic message_expiry"),
		CompressionAlgorithm: d.u8("topic compression"),
		MaxTopicSize:         d.u64("topic max_topic_size"),
		SizeBytes:            d.u64("topic size"),
		MessagesCount:        d.u64("topic messages_count"),
		Name:                 d.name("topic name"),
		Options:              d.optionsBlock("topic options"),
		Derived:              d.optionsBlock("topic derived options"),
	}
}

// Decode decodes a body holding exactly one TopicHeader.
func (t *TopicHeader) Decode(b []byte) error {
	d := newDecoder(b)
	*t = d.topicHeader()
	return d.end("topic")
}

// TopicDetails is a TopicHeader followed by exactly PartitionsCount
// Partition records (GetTopic and CreateTopic payloads).
type TopicDetails struct {
	TopicHeader
	Partitions []Partition
}

// AppendTo appends the record; PartitionsCount must equal len(Partitions).
func (t *TopicDetails) AppendTo(dst []byte) ([]byte, error) {
	if int(t.PartitionsCount) != len(t.Partitions) {
		return dst, fmt.Errorf("%w: partitions_count %d with %d partitions", ErrBadValue, t.PartitionsCount, len(t.Partitions))
	}
	dst, err := t.TopicHeader.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	for i := range t.Partitions {
		dst = t.Partitions[i].AppendTo(dst)
	}
	return dst, nil
}

// Decode decodes a body holding exactly one TopicDetails.
func (t *TopicDetails) Decode(b []byte) error {
	d := newDecoder(b)
	t.TopicHeader = d.topicHeader()
	t.Partitions = nil
	for i := uint32(0); i < t.PartitionsCount && d.err == nil; i++ {
		t.Partitions = append(t.Partitions, d.partition())
	}
	return d.end("topic details")
}

// AppendTopicList appends the GetTopics payload: [count u32] + headers.
func AppendTopicList(dst []byte, topics []TopicHeader) ([]byte, error) {
	dst = appendU32(dst, uint32(len(topics)))
	var err error
	for i := 0; err == nil && i < len(topics); i++ {
		dst, err = topics[i].AppendTo(dst)
	}
	return dst, err
}

// DecodeTopicList decodes the GetTopics payload.
func DecodeTopicList(b []byte) ([]TopicHeader, error) {
	d := newDecoder(b)
	n := d.u32("topics count")
	var out []TopicHeader
	for i := uint32(0); i < n && d.err == nil; i++ {
		out = append(out, d.topicHeader())
	}
	return out, d.end("topics")
}

// PartitionSize is the encoded size of a Partition.
const PartitionSize = 40

// Partition is the record of §4.11.3.
type Partition struct {
	ID            uint32
	CreatedAt     uint64
	SegmentsCount uint32
	CurrentOffset uint64
	SizeBytes     uint64
	MessagesCount uint64
}

// AppendTo appends the 40-byte record.
func (p *Partition) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, p.ID)
	dst = appendU64(dst, p.CreatedAt)
	dst = appendU32(dst, p.SegmentsCount)
	dst = appendU64(dst, p.CurrentOffset)
	dst = appendU64(dst, p.SizeBytes)
	return appendU64(dst, p.MessagesCount)
}

func (d *decoder) partition() Partition {
	return Partition{
		ID:            d.u32("partition id"),
		CreatedAt:     d.u64("partition created_at"),
		SegmentsCount: d.u32("partition segments_count"),
		CurrentOffset: d.u64("partition current_offset"),
		SizeBytes:     d.u64("partition size"),
		MessagesCount: d.u64("partition messages_count"),
	}
}

// AppendStreams appends the GetStreams payload (records, no count).
func AppendStreams(dst []byte, streams []Stream) ([]byte, error) {
	var err error
	for i := 0; err == nil && i < len(streams); i++ {
		dst, err = streams[i].AppendTo(dst)
	}
	return dst, err
}

// DecodeStreams decodes the GetStreams payload.
func DecodeStreams(b []byte) ([]Stream, error) {
	return decodeList(b, (*decoder).stream, "streams")
}

// decodeList decodes records until b ends.
func decodeList[T any](b []byte, one func(*decoder) T, what string) ([]T, error) {
	d := newDecoder(b)
	var out []T
	for d.remaining() > 0 && d.err == nil {
		v := one(&d)
		if d.err == nil {
			out = append(out, v)
		}
	}
	if d.err != nil {
		return nil, fmt.Errorf("%s: %w", what, d.err)
	}
	return out, nil
}
