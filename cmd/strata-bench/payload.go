package main

import (
	"encoding/binary"
	"fmt"
)

// Payload layout written by every benchmark producer, so a consumer can
// prove what it reads (little-endian):
//
//	0  u32 payloadMagic
//	4  u32 partition id, or partitionUnknown for balanced producers
//	8  u64 key: the message's offset when the producer owns its partition,
//	       else producer<<40 | sequence
//	16 u32 index of the message in its sent batch (its frame offset delta)
//	20 u32 producer index
//	24 u64 origin: send time in Unix micros (the end-to-end clock; the
//	       consumer reads it from the payload on every target)
//	32 fill: 8-byte words, word j = seed(partition, key) + j, then a tail
//	       of the next word's low bytes.
const (
	payloadHeaderSize = 32
	payloadOriginAt   = 24
	payloadMagic      = 0x42525453 // "STRB"
	partitionUnknown  = ^uint32(0)
	// fillSeedMultiplier spreads (partition, key) into a fill seed.
	fillSeedMultiplier = 0x9E3779B97F4A7C15
)

// fillSeed derives the fill pattern's first word.
func fillSeed(partition uint32, key uint64) uint64 {
	return (key ^ uint64(partition)<<48) * fillSeedMultiplier
}

// fillPayload writes the verifiable payload into p (len(p) ≥
// payloadHeaderSize). It does not allocate.
func fillPayload(p []byte, partition uint32, key uint64, index, producer uint32) {
	binary.LittleEndian.PutUint32(p[0:], payloadMagic)
	binary.LittleEndian.PutUint32(p[4:], partition)
	binary.LittleEndian.PutUint64(p[8:], key)
	binary.LittleEndian.PutUint32(p[16:], index)
	binary.LittleEndian.PutUint32(p[20:], producer)
	binary.LittleEndian.PutUint64(p[payloadOriginAt:], 0)
	w := fillSeed(partition, key)
	i := payloadHeaderSize
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], w)
		w++
	}
	for j := 0; i < len(p); i, j = i+1, j+1 {
		p[i] = byte(w >> (8 * j))
	}
}

// stampOrigin writes the send time into a filled payload.
func stampOrigin(p []byte, micros uint64) {
	binary.LittleEndian.PutUint64(p[payloadOriginAt:], micros)
}

// payloadOrigin reads the send time of a verified payload.
func payloadOrigin(p []byte) uint64 {
	return binary.LittleEndian.Uint64(p[payloadOriginAt:])
}

// payloadFields is the decoded payload header.
type payloadFields struct {
	partition uint32
	key       uint64
	index     uint32
	producer  uint32
	origin    uint64
}

// checkPayload decodes p's header and checks its fill. It never panics.
func checkPayload(p []byte) (payloadFields, error) {
	var f payloadFields
	if len(p) < payloadHeaderSize {
		return f, fmt.Errorf("%w: payload of %d bytes, shorter than its %d-byte header", ErrVerify, len(p), payloadHeaderSize)
	}
	if m := binary.LittleEndian.Uint32(p[0:]); m != payloadMagic {
		return f, fmt.Errorf("%w: payload magic %#x", ErrVerify, m)
	}
	f.partition = binary.LittleEndian.Uint32(p[4:])
	f.key = binary.LittleEndian.Uint64(p[8:])
	f.index = binary.LittleEndian.Uint32(p[16:])
	f.producer = binary.LittleEndian.Uint32(p[20:])
	f.origin = binary.LittleEndian.Uint64(p[payloadOriginAt:])
	w := fillSeed(f.partition, f.key)
	i := payloadHeaderSize
	for ; i+8 <= len(p); i += 8 {
		if binary.LittleEndian.Uint64(p[i:]) != w {
			return f, fmt.Errorf("%w: payload of key %d differs from its pattern at byte %d", ErrVerify, f.key, i)
		}
		w++
	}
	for j := 0; i < len(p); i, j = i+1, j+1 {
		if p[i] != byte(w>>(8*j)) {
			return f, fmt.Errorf("%w: payload of key %d differs from its pattern at byte %d", ErrVerify, f.key, i)
		}
	}
	return f, nil
}
