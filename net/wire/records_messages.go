package wire

import (
	"encoding/binary"
	"fmt"
)

// SendConfirmationSize is the encoded size of a SendConfirmation.
const SendConfirmationSize = 20

// SendConfirmation says where a sent batch landed (§4.11.14).
type SendConfirmation struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	BaseOffset  uint64
}

// AppendTo appends the 20-byte record.
func (c *SendConfirmation) AppendTo(dst []byte) []byte {
	dst = appendU32(appendU32(appendU32(dst, c.StreamID), c.TopicID), c.PartitionID)
	return appendU64(dst, c.BaseOffset)
}

// SendMessagesReply is the SendMessages payload (§6.5): [count u32] +
// confirmations. It is never empty on the wire (minimum [count = 0]).
type SendMessagesReply struct {
	Confirmations []SendConfirmation
}

// AppendTo appends the payload.
func (r *SendMessagesReply) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(len(r.Confirmations)))
	for i := range r.Confirmations {
		dst = r.Confirmations[i].AppendTo(dst)
	}
	return dst
}

// Decode decodes the payload; an empty body is an error (§6.5).
func (r *SendMessagesReply) Decode(b []byte) error {
	d := newDecoder(b)
	n := d.u32("confirmations count")
	if d.err == nil && uint64(n)*SendConfirmationSize != uint64(d.remaining()) {
		return fmt.Errorf("%w: %d confirmations in %d bytes", ErrTruncated, n, d.remaining())
	}
	r.Confirmations = nil
	for i := uint32(0); i < n && d.err == nil; i++ {
		r.Confirmations = append(r.Confirmations, SendConfirmation{
			StreamID:    d.u32("stream id"),
			TopicID:     d.u32("topic id"),
			PartitionID: d.u32("partition id"),
			BaseOffset:  d.u64("base offset"),
		})
	}
	return d.end("send reply")
}

// PolledMessagesHeaderSize is the size of the poll reply head (§6.6).
const PolledMessagesHeaderSize = 16

// PartitionIDResync is the partition_id of an empty group poll that tells
// the client to re-sync (§6.6, §7).
const PartitionIDResync uint32 = 0xFFFFFFFF

// PolledMessagesHeader is the 16-byte head of a poll reply; the stored
// batch records (§6.1) follow it back to back.
type PolledMessagesHeader struct {
	PartitionID uint32
	// CurrentOffset is the partition's highest committed offset.
	CurrentOffset uint64
	// Count is the total number of messages in the records that follow.
	Count uint32
}

// AppendTo appends the 16-byte head.
func (h *PolledMessagesHeader) AppendTo(dst []byte) []byte {
	return appendU32(appendU64(appendU32(dst, h.PartitionID), h.CurrentOffset), h.Count)
}

// Encode writes the head into dst[0:16]; dst must be at least that long
// (servers reserve the head and fill it after gathering the batches).
func (h *PolledMessagesHeader) Encode(dst []byte) error {
	if len(dst) < PolledMessagesHeaderSize {
		return fmt.Errorf("%w: %d bytes for the poll head", ErrBufferTooSmall, len(dst))
	}
	binary.LittleEndian.PutUint32(dst[0:], h.PartitionID)
	binary.LittleEndian.PutUint64(dst[4:], h.CurrentOffset)
	binary.LittleEndian.PutUint32(dst[12:], h.Count)
	return nil
}

// DecodePolledMessages splits a poll reply into its head and the batch
// records (a subslice of b, not validated here; see the batch codec).
func DecodePolledMessages(b []byte) (PolledMessagesHeader, []byte, error) {
	if len(b) < PolledMessagesHeaderSize {
		return PolledMessagesHeader{}, nil, fmt.Errorf("%w: poll reply of %d bytes", ErrTruncated, len(b))
	}
	h := PolledMessagesHeader{
		PartitionID:   binary.LittleEndian.Uint32(b[0:]),
		CurrentOffset: binary.LittleEndian.Uint64(b[4:]),
		Count:         binary.LittleEndian.Uint32(b[12:]),
	}
	return h, b[PolledMessagesHeaderSize:len(b):len(b)], nil
}
