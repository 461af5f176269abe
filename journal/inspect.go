package journal

import (
	"encoding/binary"
	"fmt"
)

// RecordFrameSize is the size of the frame in front of every record.
const RecordFrameSize = recordFrameSize

// Record is one verified record of either zone, as ParseRecord returns
// it to an inspector of the raw zones (the simulator's checks, which read
// what a replica made durable without going through its journal).
type Record struct {
	// Prepare reports a prepare record; otherwise the record is a header
	// record of Kind.
	Prepare bool
	Kind    HeaderKind
	Op      uint64
	Seq     uint64
	// Payload aliases the buffer given to ParseRecord.
	Payload []byte
}

// RecordSize returns the bytes (frame and payload) of the record whose
// frame starts buf, read from its length field without verifying it;
// false if buf is shorter than a frame.
func RecordSize(buf []byte) (uint64, bool) {
	if len(buf) < recordFrameSize {
		return 0, false
	}
	return recordFrameSize + uint64(binary.LittleEndian.Uint32(buf[16:])), true
}

// ParseRecord verifies the record at the start of buf (the bytes of a
// header slot or of a prepare slot) and returns it, or an error wrapping
// ErrFaulty. It never panics.
func ParseRecord(buf []byte) (Record, error) {
	rec, err := unframe(buf)
	if err != nil {
		return Record{}, err
	}
	if rec.kind == kindPrepare {
		return Record{Prepare: true, Op: rec.op, Seq: rec.seq, Payload: rec.payload}, nil
	}
	if !HeaderKind(rec.kind).valid() {
		return Record{}, fmt.Errorf("%w: kind %d", ErrFaulty, rec.kind)
	}
	return Record{Kind: HeaderKind(rec.kind), Op: rec.op, Seq: rec.seq, Payload: rec.payload}, nil
}
