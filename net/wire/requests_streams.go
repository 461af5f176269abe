package wire

// decodeFields runs body over a request body b and returns the first
// field error. Bytes after the last field are ignored, as Iggy's server
// does (it decodes every request with WireDecode::decode_from, "ignoring
// trailing bytes"): an Iggy SDK sends DeleteTopic with a partitions count
// after the two ids, and older ones send four zero bytes of permissions
// length after has_permissions 0. Every field is still read in full, so a
// length-prefixed field that runs past the end, or a permissions block
// whose length does not match its content, is still an error. Requests
// that end in an options block have no trailing bytes: the block runs to
// the end of the body and is validated as one.
func decodeFields(b []byte, body func(d *decoder)) error {
	d := newDecoder(b)
	body(&d)
	return d.err
}

// GetStreamRequest is code 200: `Id`.
type GetStreamRequest struct{ StreamID Identifier }

// DeleteStreamRequest is code 203: `Id`.
type DeleteStreamRequest struct{ StreamID Identifier }

// PurgeStreamRequest is code 205: `Id`.
type PurgeStreamRequest struct{ StreamID Identifier }

func (*GetStreamRequest) Code() Code    { return CodeGetStream }
func (*DeleteStreamRequest) Code() Code { return CodeDeleteStream }
func (*PurgeStreamRequest) Code() Code  { return CodePurgeStream }

func (r *GetStreamRequest) AppendTo(dst []byte) ([]byte, error)    { return r.StreamID.AppendTo(dst) }
func (r *DeleteStreamRequest) AppendTo(dst []byte) ([]byte, error) { return r.StreamID.AppendTo(dst) }
func (r *PurgeStreamRequest) AppendTo(dst []byte) ([]byte, error)  { return r.StreamID.AppendTo(dst) }

func (r *GetStreamRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { r.StreamID = d.identifier("stream id") })
}
func (r *DeleteStreamRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { r.StreamID = d.identifier("stream id") })
}
func (r *PurgeStreamRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { r.StreamID = d.identifier("stream id") })
}

// CreateStreamRequest is code 202: `Name`, trailing options (must be
// empty; any key is Deny 4041).
type CreateStreamRequest struct {
	Name    string
	Options Options
}

// Code returns CodeCreateStream.
func (*CreateStreamRequest) Code() Code { return CodeCreateStream }

// AppendTo appends the body.
func (r *CreateStreamRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := AppendName(dst, r.Name)
	if err != nil {
		return dst, err
	}
	return r.Options.AppendTo(dst)
}

// Decode decodes the body.
func (r *CreateStreamRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		r.Name = d.name("stream name")
		r.Options = d.trailingOptions("stream options")
	})
}

// UpdateStreamRequest is code 204: `Id`, `Name` (new name), trailing
// options (must be empty).
type UpdateStreamRequest struct {
	StreamID Identifier
	Name     string
	Options  Options
}

// Code returns CodeUpdateStream.
func (*UpdateStreamRequest) Code() Code { return CodeUpdateStream }

// AppendTo appends the body.
func (r *UpdateStreamRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.StreamID.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	if dst, err = AppendName(dst, r.Name); err != nil {
		return dst, err
	}
	return r.Options.AppendTo(dst)
}

// Decode decodes the body.
func (r *UpdateStreamRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		r.StreamID = d.identifier("stream id")
		r.Name = d.name("stream name")
		r.Options = d.trailingOptions("stream options")
	})
}

// GetTopicsRequest is code 301: `Id stream`.
type GetTopicsRequest struct{ StreamID Identifier }

// Code returns CodeGetTopics.
func (*GetTopicsRequest) Code() Code { return CodeGetTopics }

// AppendTo appends the body.
func (r *GetTopicsRequest) AppendTo(dst []byte) ([]byte, error) { return r.StreamID.AppendTo(dst) }

// Decode decodes the body.
func (r *GetTopicsRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { r.StreamID = d.identifier("stream id") })
}

// GetTopicRequest is code 300: `Id stream`, `Id topic`.
type GetTopicRequest struct{ StreamID, TopicID Identifier }

// DeleteTopicRequest is code 303: `Id stream`, `Id topic`.
type DeleteTopicRequest struct{ StreamID, TopicID Identifier }

// PurgeTopicRequest is code 305: `Id stream`, `Id topic`.
type PurgeTopicRequest struct{ StreamID, TopicID Identifier }

func (*GetTopicRequest) Code() Code    { return CodeGetTopic }
func (*DeleteTopicRequest) Code() Code { return CodeDeleteTopic }
func (*PurgeTopicRequest) Code() Code  { return CodePurgeTopic }

func (r *GetTopicRequest) AppendTo(dst []byte) ([]byte, error) {
	return appendIDs(dst, r.StreamID, r.TopicID)
}
func (r *DeleteTopicRequest) AppendTo(dst []byte) ([]byte, error) {
	return appendIDs(dst, r.StreamID, r.TopicID)
}
func (r *PurgeTopicRequest) AppendTo(dst []byte) ([]byte, error) {
	return appendIDs(dst, r.StreamID, r.TopicID)
}

func (d *decoder) streamTopic(stream, topic *Identifier) {
	*stream = d.identifier("stream id")
	*topic = d.identifier("topic id")
}

func (r *GetTopicRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { d.streamTopic(&r.StreamID, &r.TopicID) })
}
func (r *DeleteTopicRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { d.streamTopic(&r.StreamID, &r.TopicID) })
}
func (r *PurgeTopicRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { d.streamTopic(&r.StreamID, &r.TopicID) })
}

// CreateTopicRequest is code 302: `Id stream`, `[partitions_count u32]`,
// `Name`, trailing topic options (ParseTopicOptions validates them).
type CreateTopicRequest struct {
	StreamID        Identifier
	PartitionsCount uint32
	Name            string
	Options         Options
}

// Code returns CodeCreateTopic.
func (*CreateTopicRequest) Code() Code { return CodeCreateTopic }

// AppendTo appends the body.
func (r *CreateTopicRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := r.StreamID.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	if dst, err = AppendName(appendU32(dst, r.PartitionsCount), r.Name); err != nil {
		return dst, err
	}
	return r.Options.AppendTo(dst)
}

// Decode decodes the body; the options are checked only for the generic
// block rules here (see ParseTopicOptions for the topic rules).
func (r *CreateTopicRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		r.StreamID = d.identifier("stream id")
		r.PartitionsCount = d.u32("partitions count")
		r.Name = d.name("topic name")
		r.Options = d.trailingOptions("topic options")
	})
}

// OptionsBlock re-encodes the options as the trailing block, for
// ParseTopicOptions.
func (r *CreateTopicRequest) OptionsBlock() ([]byte, error) { return r.Options.AppendTo(nil) }

// UpdateTopicRequest is code 304: `Id`, `Id`, `Name` (new name), trailing
// options (only compression_algorithm, message_expiry, max_topic_size).
type UpdateTopicRequest struct {
	StreamID Identifier
	TopicID  Identifier
	Name     string
	Options  Options
}

// Code returns CodeUpdateTopic.
func (*UpdateTopicRequest) Code() Code { return CodeUpdateTopic }

// AppendTo appends the body.
func (r *UpdateTopicRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := appendIDs(dst, r.StreamID, r.TopicID)
	if err != nil {
		return dst, err
	}
	if dst, err = AppendName(dst, r.Name); err != nil {
		return dst, err
	}
	return r.Options.AppendTo(dst)
}

// Decode decodes the body.
func (r *UpdateTopicRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		d.streamTopic(&r.StreamID, &r.TopicID)
		r.Name = d.name("topic name")
		r.Options = d.trailingOptions("topic options")
	})
}

// PartitionsCountMax is the most partitions one CreatePartitions or
// DeletePartitions (or CreateTopic) request may name (§9).
const PartitionsCountMax = 1000

// CreatePartitionsRequest is code 402: `Id stream`, `Id topic`,
// `[partitions_count u32]`.
type CreatePartitionsRequest struct {
	StreamID        Identifier
	TopicID         Identifier
	PartitionsCount uint32
}

// DeletePartitionsRequest is code 403, same layout as 402.
type DeletePartitionsRequest struct {
	StreamID        Identifier
	TopicID         Identifier
	PartitionsCount uint32
}

func (*CreatePartitionsRequest) Code() Code { return CodeCreatePartitions }
func (*DeletePartitionsRequest) Code() Code { return CodeDeletePartitions }

func (r *CreatePartitionsRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := appendIDs(dst, r.StreamID, r.TopicID)
	return appendU32(dst, r.PartitionsCount), err
}
func (r *DeletePartitionsRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := appendIDs(dst, r.StreamID, r.TopicID)
	return appendU32(dst, r.PartitionsCount), err
}
func (r *CreatePartitionsRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		d.streamTopic(&r.StreamID, &r.TopicID)
		r.PartitionsCount = d.u32("partitions count")
	})
}
func (r *DeletePartitionsRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		d.streamTopic(&r.StreamID, &r.TopicID)
		r.PartitionsCount = d.u32("partitions count")
	})
}

// DeleteSegmentsRequest is code 503: `Id stream`, `Id topic`,
// `[partition_id u32]`, `[segments_count u32]`.
type DeleteSegmentsRequest struct {
	StreamID      Identifier
	TopicID       Identifier
	PartitionID   uint32
	SegmentsCount uint32
}

// Code returns CodeDeleteSegments.
func (*DeleteSegmentsRequest) Code() Code { return CodeDeleteSegments }

// AppendTo appends the body.
func (r *DeleteSegmentsRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := appendIDs(dst, r.StreamID, r.TopicID)
	return appendU32(appendU32(dst, r.PartitionID), r.SegmentsCount), err
}

// Decode decodes the body.
func (r *DeleteSegmentsRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		d.streamTopic(&r.StreamID, &r.TopicID)
		r.PartitionID = d.u32("partition id")
		r.SegmentsCount = d.u32("segments count")
	})
}
