package partition

import "github.com/stratabroker/strata/net/wire/statecodec"

// Operation bytes of PROTOCOL.md §3.1 applied by the partition machine.
const (
	OperationSendMessages         uint8 = 160
	OperationStoreConsumerOffset  uint8 = 161
	OperationDeleteConsumerOffset uint8 = 162
)

// Internal partition operations: the server submits them itself (a topic
// update, a committed purge, a deletion of segments), never a client. Their
// bytes lie outside every range §3.1 defines, so a frame carrying one is
// an invalid bit pattern on the wire and never reaches a machine.
const (
	// OperationSetFlushThresholds changes the topic's flush thresholds.
	OperationSetFlushThresholds uint8 = 176
	// OperationPurgePartition empties the partition (a committed purge of
	// its topic or stream).
	OperationPurgePartition uint8 = 177
	// OperationDeleteSegments forgets the messages of sealed segments
	// below an offset (DeleteSegments, retention).
	OperationDeleteSegments uint8 = 178
)

// Envelope is the prefix of every operation body (net/wire/statecodec's,
// shared with the metadata machine).
type Envelope = statecodec.Envelope

// EnvelopeSize is the encoded size of an Envelope.
const EnvelopeSize = statecodec.EnvelopeSize

// SendMessages carries one batch (§6.1/§6.2) the server has already
// validated (checksums, tiling, counts). Apply stamps it.
type SendMessages struct {
	Batch []byte
}

// EncodeSendMessages returns the operation body: envelope then the batch
// bytes up to the end.
func EncodeSendMessages(env Envelope, batch []byte) []byte {
	return AppendSendMessages(make([]byte, 0, EnvelopeSize+len(batch)), env, batch)
}

// AppendSendMessages appends a SendMessages body to dst, so a caller can
// reuse one buffer across sends (Apply copies the batch it keeps).
func AppendSendMessages(dst []byte, env Envelope, batch []byte) []byte {
	return append(env.AppendTo(dst), batch...)
}

// DecodeSendMessages splits a SendMessages body. The batch aliases body.
func DecodeSendMessages(body []byte) (Envelope, SendMessages, error) {
	d := statecodec.NewDecoder(body, ErrMalformed)
	env := statecodec.DecodeEnvelope(&d)
	if d.Err() != nil {
		return Envelope{}, SendMessages{}, d.Err()
	}
	return env, SendMessages{Batch: d.Rest()}, nil
}

// StoreMode says whether a StoreConsumerOffset is an explicit store (121)
// or a poll's auto-commit.
type StoreMode uint8

const (
	// StoreExplicit may move a stored offset backwards.
	StoreExplicit StoreMode = 0
	// StoreAutoCommit never moves a stored offset backwards (§6.6).
	StoreAutoCommit StoreMode = 1
)

// StoreConsumerOffset stores Offset for Consumer (§5.7, §6.7). Auto-commit
// after a poll is the same operation with Mode StoreAutoCommit.
type StoreConsumerOffset struct {
	Consumer ConsumerKey
	Offset   uint64
	Mode     StoreMode
}

// storeSize is the encoded size of a StoreConsumerOffset after the
// envelope.
const storeSize = 1 + 4 + 8 + 1

// Encode returns the operation body.
func (o StoreConsumerOffset) Encode(env Envelope) []byte {
	out := env.AppendTo(make([]byte, 0, EnvelopeSize+storeSize))
	out = append(out, o.Consumer.Kind)
	out = statecodec.AppendU32(out, o.Consumer.ID)
	out = statecodec.AppendU64(out, o.Offset)
	return append(out, uint8(o.Mode))
}

// DecodeStoreConsumerOffset decodes a body made by Encode.
func DecodeStoreConsumerOffset(body []byte) (Envelope, StoreConsumerOffset, error) {
	d := statecodec.NewDecoder(body, ErrMalformed)
	env := statecodec.DecodeEnvelope(&d)
	o := StoreConsumerOffset{Consumer: ConsumerKey{Kind: d.U8(), ID: d.U32()}, Offset: d.U64(), Mode: StoreMode(d.U8())}
	if err := d.End(); err != nil {
		return Envelope{}, StoreConsumerOffset{}, err
	}
	if !validConsumerKind(o.Consumer.Kind) || o.Mode > StoreAutoCommit {
		return Envelope{}, StoreConsumerOffset{}, ErrMalformed
	}
	return env, o, nil
}

// DeleteConsumerOffset forgets Consumer's stored offset.
type DeleteConsumerOffset struct {
	Consumer ConsumerKey
}

// Encode returns the operation body.
func (o DeleteConsumerOffset) Encode(env Envelope) []byte {
	out := env.AppendTo(make([]byte, 0, EnvelopeSize+5))
	out = append(out, o.Consumer.Kind)
	return statecodec.AppendU32(out, o.Consumer.ID)
}

// DecodeDeleteConsumerOffset decodes a body made by Encode.
func DecodeDeleteConsumerOffset(body []byte) (Envelope, DeleteConsumerOffset, error) {
	d := statecodec.NewDecoder(body, ErrMalformed)
	env := statecodec.DecodeEnvelope(&d)
	o := DeleteConsumerOffset{Consumer: ConsumerKey{Kind: d.U8(), ID: d.U32()}}
	if err := d.End(); err != nil {
		return Envelope{}, DeleteConsumerOffset{}, err
	}
	if !validConsumerKind(o.Consumer.Kind) {
		return Envelope{}, DeleteConsumerOffset{}, ErrMalformed
	}
	return env, o, nil
}

// SetFlushThresholds sets the topic's flush thresholds (0 = the default),
// the messages_required_to_save and size_of_messages_required_to_save that
// decide when the machine asks for a flush.
type SetFlushThresholds struct {
	MessagesRequiredToSave            uint32
	SizeOfMessagesRequiredToSaveBytes uint64
}

// setFlushThresholdsSize is the encoded size after the envelope.
const setFlushThresholdsSize = 4 + 8

// Encode returns the operation body.
func (o SetFlushThresholds) Encode(env Envelope) []byte {
	out := env.AppendTo(make([]byte, 0, EnvelopeSize+setFlushThresholdsSize))
	out = statecodec.AppendU32(out, o.MessagesRequiredToSave)
	return statecodec.AppendU64(out, o.SizeOfMessagesRequiredToSaveBytes)
}

// DecodeSetFlushThresholds decodes a body made by Encode.
func DecodeSetFlushThresholds(body []byte) (Envelope, SetFlushThresholds, error) {
	d := statecodec.NewDecoder(body, ErrMalformed)
	env := statecodec.DecodeEnvelope(&d)
	o := SetFlushThresholds{MessagesRequiredToSave: d.U32(), SizeOfMessagesRequiredToSaveBytes: d.U64()}
	if err := d.End(); err != nil {
		return Envelope{}, SetFlushThresholds{}, err
	}
	return env, o, nil
}

// PurgePartition empties the partition: offsets restart at 0, counters and
// consumer offsets are cleared, unflushed batches are dropped, and the
// server removes the segment and offset files (EffectPurged). Generation
// is the metadata op that committed the purge: a purge at or below the
// partition's purge generation was carried out already and changes
// nothing, so replaying the metadata journal never purges twice.
type PurgePartition struct {
	Generation uint64
}

// Encode returns the operation body.
func (o PurgePartition) Encode(env Envelope) []byte {
	return statecodec.AppendU64(env.AppendTo(make([]byte, 0, EnvelopeSize+8)), o.Generation)
}

// DecodePurgePartition decodes a body made by Encode.
func DecodePurgePartition(body []byte) (Envelope, PurgePartition, error) {
	d := statecodec.NewDecoder(body, ErrMalformed)
	env := statecodec.DecodeEnvelope(&d)
	o := PurgePartition{Generation: d.U64()}
	if err := d.End(); err != nil {
		return Envelope{}, PurgePartition{}, err
	}
	return env, o, nil
}

// DeleteSegments forgets the messages below BelowOffset, held in sealed
// segments that the server deletes (EffectSegmentsDeleted). The submitter
// measures the segments on its storage before it submits: BelowOffset is
// the first offset of the first segment kept, Messages and SizeBytes what
// the deleted ones hold; the machine lowers its counters by them, so every
// replica applying the operation reaches the same counters whatever its
// own segment boundaries. A deletion at or below the partition's first
// offset changes nothing; one past the flushed messages is rejected (4100).
type DeleteSegments struct {
	BelowOffset uint64
	Messages    uint64
	SizeBytes   uint64
}

// deleteSegmentsSize is the encoded size after the envelope.
const deleteSegmentsSize = 8 + 8 + 8

// Encode returns the operation body.
func (o DeleteSegments) Encode(env Envelope) []byte {
	out := env.AppendTo(make([]byte, 0, EnvelopeSize+deleteSegmentsSize))
	out = statecodec.AppendU64(out, o.BelowOffset)
	out = statecodec.AppendU64(out, o.Messages)
	return statecodec.AppendU64(out, o.SizeBytes)
}

// DecodeDeleteSegments decodes a body made by Encode.
func DecodeDeleteSegments(body []byte) (Envelope, DeleteSegments, error) {
	d := statecodec.NewDecoder(body, ErrMalformed)
	env := statecodec.DecodeEnvelope(&d)
	o := DeleteSegments{BelowOffset: d.U64(), Messages: d.U64(), SizeBytes: d.U64()}
	if err := d.End(); err != nil {
		return Envelope{}, DeleteSegments{}, err
	}
	return env, o, nil
}
