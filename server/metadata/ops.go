package metadata

import (
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/net/wire/statecodec"
)

// Operation bytes of PROTOCOL.md §3.1 applied by the metadata machine.
const (
	OperationCreateStream              uint8 = 128
	OperationUpdateStream              uint8 = 129
	OperationDeleteStream              uint8 = 130
	OperationPurgeStream               uint8 = 131
	OperationCreateTopic               uint8 = 132
	OperationUpdateTopic               uint8 = 133
	OperationDeleteTopic               uint8 = 134
	OperationPurgeTopic                uint8 = 135
	OperationCreatePartitions          uint8 = 136
	OperationDeletePartitions          uint8 = 137
	OperationDeleteSegments            uint8 = 138
	OperationCreateConsumerGroup       uint8 = 139
	OperationDeleteConsumerGroup       uint8 = 140
	OperationCreateUser                uint8 = 141
	OperationUpdateUser                uint8 = 142
	OperationDeleteUser                uint8 = 143
	OperationChangePassword            uint8 = 144
	OperationUpdatePermissions         uint8 = 145
	OperationCreatePersonalAccessToken uint8 = 146
	OperationDeletePersonalAccessToken uint8 = 147
	OperationJoinConsumerGroup         uint8 = 148
	OperationLeaveConsumerGroup        uint8 = 149
)

// Identifier names a stream, topic or user by numeric id or by name
// (§4.2). It is resolved against the state inside Apply, so an operation
// sequenced behind a rename or delete sees the state it is applied to.
type Identifier struct {
	// Numeric selects ID; otherwise Name is used.
	Numeric bool
	ID      uint32
	// Name is 1..255 bytes of UTF-8 when Numeric is false.
	Name string
}

// NumericID returns an Identifier for id.
func NumericID(id uint32) Identifier { return Identifier{Numeric: true, ID: id} }

// NamedID returns an Identifier for name.
func NamedID(name string) Identifier { return Identifier{Name: name} }

// Identifier kinds of §4.2.
const (
	identifierNumeric uint8 = 1
	identifierString  uint8 = 2
)

func appendIdentifier(dst []byte, id Identifier) []byte {
	if id.Numeric {
		dst = append(dst, identifierNumeric, 4)
		return statecodec.AppendU32(dst, id.ID)
	}
	dst = append(dst, identifierString)
	return statecodec.AppendName(dst, id.Name)
}

func decodeIdentifier(d *statecodec.Decoder) Identifier {
	switch d.U8() {
	case identifierNumeric:
		if d.U8() != 4 {
			d.Fail(ErrMalformed)
			return Identifier{}
		}
		return Identifier{Numeric: true, ID: d.U32()}
	case identifierString:
		return Identifier{Name: d.Name()}
	default:
		d.Fail(ErrMalformed)
		return Identifier{}
	}
}

// Envelope is the prefix of every operation body (net/wire/statecodec's,
// shared with the partition machine).
type Envelope = statecodec.Envelope

// EnvelopeSize is the encoded size of an Envelope.
const EnvelopeSize = statecodec.EnvelopeSize

// Op is one metadata operation's fields. The server builds one from a
// decoded request, after doing every non-deterministic step (hashing,
// token generation), and submits EncodeOp's bytes for sequencing.
type Op interface {
	// Operation returns the §3.1 operation byte.
	Operation() uint8
	appendFields(dst []byte) []byte
	decodeFields(d *statecodec.Decoder)
}

// EncodeOp returns the operation body: the envelope followed by op's
// fields. Names must be 1..255 bytes (the wire guarantees it); a longer
// name is a caller bug.
func EncodeOp(env Envelope, op Op) []byte {
	dst := make([]byte, 0, 64)
	dst = env.AppendTo(dst)
	return op.appendFields(dst)
}

// newOp returns an empty op for operation, or nil if the machine does not
// know it.
func newOp(operation uint8) Op {
	switch operation {
	case OperationCreateStream:
		return &CreateStream{}
	case OperationUpdateStream:
		return &UpdateStream{}
	case OperationDeleteStream:
		return &DeleteStream{}
	case OperationPurgeStream:
		return &PurgeStream{}
	case OperationCreateTopic:
		return &CreateTopic{}
	case OperationUpdateTopic:
		return &UpdateTopic{}
	case OperationDeleteTopic:
		return &DeleteTopic{}
	case OperationPurgeTopic:
		return &PurgeTopic{}
	case OperationCreatePartitions:
		return &CreatePartitions{}
	case OperationDeletePartitions:
		return &DeletePartitions{}
	case OperationDeleteSegments:
		return &DeleteSegments{}
	case OperationCreateUser:
		return &CreateUser{}
	case OperationUpdateUser:
		return &UpdateUser{}
	case OperationDeleteUser:
		return &DeleteUser{}
	case OperationChangePassword:
		return &ChangePassword{}
	case OperationUpdatePermissions:
		return &UpdatePermissions{}
	case OperationCreatePersonalAccessToken:
		return &CreatePersonalAccessToken{}
	case OperationDeletePersonalAccessToken:
		return &DeletePersonalAccessToken{}
	case OperationCreateConsumerGroup:
		return &CreateConsumerGroup{}
	case OperationDeleteConsumerGroup:
		return &DeleteConsumerGroup{}
	case OperationJoinConsumerGroup:
		return &JoinConsumerGroup{}
	case OperationLeaveConsumerGroup:
		return &LeaveConsumerGroup{}
	case OperationRemoveConsumerGroupMember:
		return &RemoveConsumerGroupMember{}
	case OperationCompleteConsumerGroupHandOff:
		return &CompleteConsumerGroupHandOff{}
	}
	return nil
}

// DecodeOp decodes an operation body made by EncodeOp. It returns
// ErrUnknownOperation for operation bytes the machine does not apply and
// ErrMalformed for
// bodies that do not decode exactly.
func DecodeOp(operation uint8, body []byte) (Envelope, Op, error) {
	op := newOp(operation)
	if op == nil {
		return Envelope{}, nil, ErrUnknownOperation
	}
	d := statecodec.NewDecoder(body, ErrMalformed)
	env := statecodec.DecodeEnvelope(&d)
	op.decodeFields(&d)
	if err := d.End(); err != nil {
		return Envelope{}, nil, err
	}
	return env, op, nil
}

// CreateStream creates a stream named Name (§5.4, code 202).
type CreateStream struct {
	Name string
}

func (*CreateStream) Operation() uint8 { return OperationCreateStream }
func (o *CreateStream) appendFields(dst []byte) []byte {
	return statecodec.AppendName(dst, o.Name)
}
func (o *CreateStream) decodeFields(d *statecodec.Decoder) { o.Name = d.Name() }

// UpdateStream renames a stream.
type UpdateStream struct {
	Stream Identifier
	Name   string
}

func (*UpdateStream) Operation() uint8 { return OperationUpdateStream }
func (o *UpdateStream) appendFields(dst []byte) []byte {
	return statecodec.AppendName(appendIdentifier(dst, o.Stream), o.Name)
}
func (o *UpdateStream) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Name = d.Name()
}

// DeleteStream deletes a stream with its topics.
type DeleteStream struct {
	Stream Identifier
}

func (*DeleteStream) Operation() uint8                     { return OperationDeleteStream }
func (o *DeleteStream) appendFields(dst []byte) []byte     { return appendIdentifier(dst, o.Stream) }
func (o *DeleteStream) decodeFields(d *statecodec.Decoder) { o.Stream = decodeIdentifier(d) }

// PurgeStream empties every partition of every topic of a stream.
type PurgeStream struct {
	Stream Identifier
}

func (*PurgeStream) Operation() uint8                     { return OperationPurgeStream }
func (o *PurgeStream) appendFields(dst []byte) []byte     { return appendIdentifier(dst, o.Stream) }
func (o *PurgeStream) decodeFields(d *statecodec.Decoder) { o.Stream = decodeIdentifier(d) }

// TopicOptions are a topic's resolved option values (§4.8 plus Strata's
// durability settings). The server resolves defaults before sequencing.
type TopicOptions struct {
	// MessageExpiryMicros: 0 = server default, NeverExpires = never.
	MessageExpiryMicros uint64
	// CompressionAlgorithm is CompressionNone or CompressionGzip.
	CompressionAlgorithm uint8
	// MaxTopicSizeBytes: 0 = server default, NeverExpires = unlimited.
	MaxTopicSizeBytes                 uint64
	SegmentSizeBytes                  uint64
	EnforceFsync                      bool
	MessagesRequiredToSave            uint32
	SizeOfMessagesRequiredToSaveBytes uint64
	PreallocateSegments               bool
	Durability                        uint8
	ConsumerOffsetDurability          uint8
}

func (t *TopicOptions) appendTo(dst []byte) []byte {
	dst = statecodec.AppendU64(dst, t.MessageExpiryMicros)
	dst = append(dst, t.CompressionAlgorithm)
	dst = statecodec.AppendU64(dst, t.MaxTopicSizeBytes)
	dst = statecodec.AppendU64(dst, t.SegmentSizeBytes)
	dst = statecodec.AppendFlag(dst, t.EnforceFsync)
	dst = statecodec.AppendU32(dst, t.MessagesRequiredToSave)
	dst = statecodec.AppendU64(dst, t.SizeOfMessagesRequiredToSaveBytes)
	dst = statecodec.AppendFlag(dst, t.PreallocateSegments)
	dst = append(dst, t.Durability)
	return append(dst, t.ConsumerOffsetDurability)
}

func decodeTopicOptions(d *statecodec.Decoder) TopicOptions {
	t := TopicOptions{
		MessageExpiryMicros:               d.U64(),
		CompressionAlgorithm:              d.U8(),
		MaxTopicSizeBytes:                 d.U64(),
		SegmentSizeBytes:                  d.U64(),
		EnforceFsync:                      d.Flag(),
		MessagesRequiredToSave:            d.U32(),
		SizeOfMessagesRequiredToSaveBytes: d.U64(),
		PreallocateSegments:               d.Flag(),
		Durability:                        d.U8(),
		ConsumerOffsetDurability:          d.U8(),
	}
	if !validDurability(t.Durability) || !validDurability(t.ConsumerOffsetDurability) {
		d.Fail(ErrMalformed)
	}
	return t
}

func validDurability(v uint8) bool { return v == DurabilityReplicated || v == DurabilityPersisted }

// CreateTopic creates a topic with PartitionsCount partitions (ids
// 0..n-1). ExplicitOptions and DerivedOptions are the §4.8 response blocks
// (TLV, keys ascending) the server built; Options are the resolved values.
type CreateTopic struct {
	Stream          Identifier
	PartitionsCount uint32
	Name            string
	Options         TopicOptions
	ExplicitOptions []byte
	DerivedOptions  []byte
}

func (*CreateTopic) Operation() uint8 { return OperationCreateTopic }
func (o *CreateTopic) appendFields(dst []byte) []byte {
	dst = appendIdentifier(dst, o.Stream)
	dst = statecodec.AppendU32(dst, o.PartitionsCount)
	dst = statecodec.AppendName(dst, o.Name)
	dst = o.Options.appendTo(dst)
	dst = statecodec.AppendBlob(dst, o.ExplicitOptions)
	return statecodec.AppendBlob(dst, o.DerivedOptions)
}
func (o *CreateTopic) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.PartitionsCount = d.U32()
	o.Name = d.Name()
	o.Options = decodeTopicOptions(d)
	o.ExplicitOptions = d.Blob(optionsBlockBytesMax)
	o.DerivedOptions = d.Blob(optionsBlockBytesMax)
}

// UpdateTopic renames a topic and patches the options it carries: a Set
// flag marks each value the client sent; Options is the options block as
// sent (merged into the topic's explicit block, keys not sent keep theirs).
type UpdateTopic struct {
	Stream               Identifier
	Topic                Identifier
	Name                 string
	SetCompression       bool
	CompressionAlgorithm uint8
	SetMessageExpiry     bool
	MessageExpiryMicros  uint64
	SetMaxTopicSize      bool
	MaxTopicSizeBytes    uint64
	Options              []byte
}

func (*UpdateTopic) Operation() uint8 { return OperationUpdateTopic }
func (o *UpdateTopic) appendFields(dst []byte) []byte {
	dst = appendIdentifier(dst, o.Stream)
	dst = appendIdentifier(dst, o.Topic)
	dst = statecodec.AppendName(dst, o.Name)
	dst = statecodec.AppendFlag(dst, o.SetCompression)
	dst = append(dst, o.CompressionAlgorithm)
	dst = statecodec.AppendFlag(dst, o.SetMessageExpiry)
	dst = statecodec.AppendU64(dst, o.MessageExpiryMicros)
	dst = statecodec.AppendFlag(dst, o.SetMaxTopicSize)
	dst = statecodec.AppendU64(dst, o.MaxTopicSizeBytes)
	return statecodec.AppendBlob(dst, o.Options)
}
func (o *UpdateTopic) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
	o.Name = d.Name()
	o.SetCompression = d.Flag()
	o.CompressionAlgorithm = d.U8()
	o.SetMessageExpiry = d.Flag()
	o.MessageExpiryMicros = d.U64()
	o.SetMaxTopicSize = d.Flag()
	o.MaxTopicSizeBytes = d.U64()
	o.Options = d.Blob(optionsBlockBytesMax)
}

// DeleteTopic deletes a topic with its partitions.
type DeleteTopic struct {
	Stream Identifier
	Topic  Identifier
}

func (*DeleteTopic) Operation() uint8 { return OperationDeleteTopic }
func (o *DeleteTopic) appendFields(dst []byte) []byte {
	return appendIdentifier(appendIdentifier(dst, o.Stream), o.Topic)
}
func (o *DeleteTopic) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
}

// PurgeTopic empties every partition of a topic.
type PurgeTopic struct {
	Stream Identifier
	Topic  Identifier
}

func (*PurgeTopic) Operation() uint8 { return OperationPurgeTopic }
func (o *PurgeTopic) appendFields(dst []byte) []byte {
	return appendIdentifier(appendIdentifier(dst, o.Stream), o.Topic)
}
func (o *PurgeTopic) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
}

// CreatePartitions adds Count partitions after the highest id.
type CreatePartitions struct {
	Stream Identifier
	Topic  Identifier
	Count  uint32
}

func (*CreatePartitions) Operation() uint8 { return OperationCreatePartitions }
func (o *CreatePartitions) appendFields(dst []byte) []byte {
	return statecodec.AppendU32(appendIdentifier(appendIdentifier(dst, o.Stream), o.Topic), o.Count)
}
func (o *CreatePartitions) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
	o.Count = d.U32()
}

// DeletePartitions removes the Count highest-numbered partitions.
type DeletePartitions struct {
	Stream Identifier
	Topic  Identifier
	Count  uint32
}

func (*DeletePartitions) Operation() uint8 { return OperationDeletePartitions }
func (o *DeletePartitions) appendFields(dst []byte) []byte {
	return statecodec.AppendU32(appendIdentifier(appendIdentifier(dst, o.Stream), o.Topic), o.Count)
}
func (o *DeletePartitions) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
	o.Count = d.U32()
}

// DeleteSegments asks for the SegmentsCount oldest sealed segments of a
// partition to be deleted; the metadata machine validates the target and
// records an effect, the server's storage does the deleting.
type DeleteSegments struct {
	Stream        Identifier
	Topic         Identifier
	PartitionID   uint32
	SegmentsCount uint32
}

func (*DeleteSegments) Operation() uint8 { return OperationDeleteSegments }
func (o *DeleteSegments) appendFields(dst []byte) []byte {
	dst = appendIdentifier(appendIdentifier(dst, o.Stream), o.Topic)
	return statecodec.AppendU32(statecodec.AppendU32(dst, o.PartitionID), o.SegmentsCount)
}
func (o *DeleteSegments) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
	o.PartitionID = d.U32()
	o.SegmentsCount = d.U32()
}

// appendOptionalPermissions appends [1][len u32][permissions], or a single
// 0 when p is nil: net/wire's embedded request form, which
// decodeOptionalPermissions reads.
func appendOptionalPermissions(dst []byte, p *Permissions) []byte {
	return wire.AppendOptionalPermissions(dst, (*wire.Permissions)(p))
}

func decodeOptionalPermissions(d *statecodec.Decoder) *Permissions {
	if !d.Flag() {
		return nil
	}
	b := d.Blob(permissionsBytesMax)
	if d.Err() != nil {
		return nil
	}
	p, err := DecodePermissions(b)
	if err != nil {
		d.Fail(err)
		return nil
	}
	return p
}

// CreateUser creates a user. PasswordHash is the server's opaque hash
// (salted before sequencing). The first boot's bootstrap is a CreateUser of
// the root user under RootUserID (see BootstrapRoot).
type CreateUser struct {
	Username     string
	PasswordHash string
	Status       uint8
	Permissions  *Permissions
	Options      []byte
}

func (*CreateUser) Operation() uint8 { return OperationCreateUser }
func (o *CreateUser) appendFields(dst []byte) []byte {
	dst = statecodec.AppendName(dst, o.Username)
	dst = statecodec.AppendText(dst, o.PasswordHash)
	dst = append(dst, o.Status)
	dst = appendOptionalPermissions(dst, o.Permissions)
	return statecodec.AppendBlob(dst, o.Options)
}
func (o *CreateUser) decodeFields(d *statecodec.Decoder) {
	o.Username = d.Name()
	o.PasswordHash = d.Text(hashBytesMax)
	o.Status = d.U8()
	o.Permissions = decodeOptionalPermissions(d)
	o.Options = d.Blob(optionsBlockBytesMax)
}

// UpdateUser renames a user and/or changes its status.
type UpdateUser struct {
	User        Identifier
	SetUsername bool
	Username    string
	SetStatus   bool
	Status      uint8
}

func (*UpdateUser) Operation() uint8 { return OperationUpdateUser }
func (o *UpdateUser) appendFields(dst []byte) []byte {
	dst = appendIdentifier(dst, o.User)
	dst = statecodec.AppendFlag(dst, o.SetUsername)
	if o.SetUsername {
		dst = statecodec.AppendName(dst, o.Username)
	}
	dst = statecodec.AppendFlag(dst, o.SetStatus)
	return append(dst, o.Status)
}
func (o *UpdateUser) decodeFields(d *statecodec.Decoder) {
	o.User = decodeIdentifier(d)
	o.SetUsername = d.Flag()
	if o.SetUsername {
		o.Username = d.Name()
	}
	o.SetStatus = d.Flag()
	o.Status = d.U8()
}

// DeleteUser deletes a user and its personal access tokens.
type DeleteUser struct {
	User Identifier
}

func (*DeleteUser) Operation() uint8                     { return OperationDeleteUser }
func (o *DeleteUser) appendFields(dst []byte) []byte     { return appendIdentifier(dst, o.User) }
func (o *DeleteUser) decodeFields(d *statecodec.Decoder) { o.User = decodeIdentifier(d) }

// ChangePassword replaces a user's password hash. The server verifies the
// current password against the hash it read before sequencing and puts
// that hash in VerifiedHash (empty when verification failed); Apply commits
// 42 unless the user's hash is still VerifiedHash, so a concurrent change
// cannot be overwritten. An empty NewPasswordHash (empty new password)
// also commits 42.
type ChangePassword struct {
	User            Identifier
	VerifiedHash    string
	NewPasswordHash string
}

func (*ChangePassword) Operation() uint8 { return OperationChangePassword }
func (o *ChangePassword) appendFields(dst []byte) []byte {
	dst = appendIdentifier(dst, o.User)
	dst = statecodec.AppendText(dst, o.VerifiedHash)
	return statecodec.AppendText(dst, o.NewPasswordHash)
}
func (o *ChangePassword) decodeFields(d *statecodec.Decoder) {
	o.User = decodeIdentifier(d)
	o.VerifiedHash = d.Text(hashBytesMax)
	o.NewPasswordHash = d.Text(hashBytesMax)
}

// UpdatePermissions replaces a user's permissions (nil removes them all).
type UpdatePermissions struct {
	User        Identifier
	Permissions *Permissions
}

func (*UpdatePermissions) Operation() uint8 { return OperationUpdatePermissions }
func (o *UpdatePermissions) appendFields(dst []byte) []byte {
	return appendOptionalPermissions(appendIdentifier(dst, o.User), o.Permissions)
}
func (o *UpdatePermissions) decodeFields(d *statecodec.Decoder) {
	o.User = decodeIdentifier(d)
	o.Permissions = decodeOptionalPermissions(d)
}

// CreatePersonalAccessToken creates a token for the requesting user.
// TokenHash is the hash of the raw token the server generated; the raw
// token never enters the operation. ExpiryMicros is the lifetime as sent
// (0 or NeverExpires = never; otherwise expiry = op timestamp + lifetime).
type CreatePersonalAccessToken struct {
	Name         string
	TokenHash    string
	ExpiryMicros uint64
}

func (*CreatePersonalAccessToken) Operation() uint8 { return OperationCreatePersonalAccessToken }
func (o *CreatePersonalAccessToken) appendFields(dst []byte) []byte {
	dst = statecodec.AppendName(dst, o.Name)
	dst = statecodec.AppendText(dst, o.TokenHash)
	return statecodec.AppendU64(dst, o.ExpiryMicros)
}
func (o *CreatePersonalAccessToken) decodeFields(d *statecodec.Decoder) {
	o.Name = d.Name()
	o.TokenHash = d.Text(hashBytesMax)
	o.ExpiryMicros = d.U64()
}

// DeletePersonalAccessToken deletes the requesting user's token Name.
type DeletePersonalAccessToken struct {
	Name string
}

func (*DeletePersonalAccessToken) Operation() uint8 { return OperationDeletePersonalAccessToken }
func (o *DeletePersonalAccessToken) appendFields(dst []byte) []byte {
	return statecodec.AppendName(dst, o.Name)
}
func (o *DeletePersonalAccessToken) decodeFields(d *statecodec.Decoder) { o.Name = d.Name() }
