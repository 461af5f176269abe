package partition

import "github.com/stratabroker/strata/net/wire/statecodec"

// Operation bytes of PROTOCOL.md §3.1 applied by the partition machine.
const (
	OperationSendMessages         uint8 = 160
	OperationStoreConsumerOffset  uint8 = 161
	OperationDeleteConsumerOffset uint8 = 162
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
