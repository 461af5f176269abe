package main

import (
	"fmt"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// Verifier checks every message a consumer polls from one partition:
// offsets contiguous and in order from the first expected offset, the
// payload pattern intact, the payload's partition and key matching the
// partition and offset when the producer owned the partition, the message
// id matching the key, and the frame checksum recomputed with
// wire.MessageChecksum over a frame rebuilt from the message (the
// benchmark's producers send no user headers and one origin timestamp per
// batch, so the timestamp delta is zero and the offset delta is the
// payload's batch index). A broker that loses, reorders, duplicates or
// corrupts a message fails the run.
//
// A Verifier is used by one goroutine; Check does not allocate after the
// first call.
type Verifier struct {
	partition uint32
	// next is the offset the next polled message must carry.
	next uint64
	// ownedPartition is set when the payload key is the offset.
	ownedPartition bool
	frame          []byte
	// frames turns on the id and frame-checksum checks (targets whose
	// messages carry Iggy frames).
	frames bool
	// Verified counts messages that passed.
	Verified uint64
}

// NewVerifier returns a verifier for partition starting at offset first.
func NewVerifier(partition uint32, first uint64, ownedPartition bool) *Verifier {
	return &Verifier{partition: partition, next: first, ownedPartition: ownedPartition, frames: true}
}

// Next returns the offset the verifier expects next.
func (v *Verifier) Next() uint64 { return v.next }

// Check verifies one polled message.
func (v *Verifier) Check(m *client.Message) error {
	if m.Offset != v.next {
		return fmt.Errorf("%w: partition %d: offset %d where %d was expected", ErrVerify, v.partition, m.Offset, v.next)
	}
	f, err := checkPayload(m.Payload)
	if err != nil {
		return fmt.Errorf("partition %d offset %d: %w", v.partition, m.Offset, err)
	}
	if v.ownedPartition && (f.partition != v.partition || f.key != m.Offset) {
		return fmt.Errorf("%w: partition %d offset %d carries the payload of partition %d offset %d", ErrVerify, v.partition, m.Offset, f.partition, f.key)
	}
	if !v.frames {
		v.next++
		v.Verified++
		return nil
	}
	if m.ID.Low != f.key || m.ID.High != uint64(f.producer)+1 {
		return fmt.Errorf("%w: partition %d offset %d: message id %d/%d does not match its payload", ErrVerify, v.partition, m.Offset, m.ID.High, m.ID.Low)
	}
	if f.origin != m.OriginTimestamp {
		return fmt.Errorf("%w: partition %d offset %d: origin timestamp %d, payload says %d", ErrVerify, v.partition, m.Offset, m.OriginTimestamp, f.origin)
	}
	if len(m.Headers) != 0 {
		return fmt.Errorf("%w: partition %d offset %d: unexpected user headers", ErrVerify, v.partition, m.Offset)
	}
	if sum := v.frameChecksum(m, f.index); sum != m.Checksum {
		return fmt.Errorf("%w: partition %d offset %d: frame checksum %#x, recomputed %#x", ErrVerify, v.partition, m.Offset, m.Checksum, sum)
	}
	v.next++
	v.Verified++
	return nil
}

// frameChecksum rebuilds m's frame as the producer built it and hashes it.
func (v *Verifier) frameChecksum(m *client.Message, index uint32) uint64 {
	size := wire.MessageHeaderSize + len(m.Payload)
	if cap(v.frame) < size {
		v.frame = make([]byte, size)
	}
	fr := v.frame[:size]
	// Timestamp delta 0 and no user headers, as the producer sent it.
	wire.PutFrameHeader(fr, m.ID, index, 0, len(m.Payload))
	copy(fr[wire.MessageHeaderSize:], m.Payload)
	return wire.MessageChecksum(fr)
}
