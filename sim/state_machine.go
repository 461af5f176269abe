package sim

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/stratabroker/strata/vsr"
)

// The replicated log's operations (vsr.OperationUserMin and up).
const (
	// OperationAppend appends a value; the reply is its position.
	OperationAppend = vsr.OperationUserMin
	// OperationRead reads the value at a position; the reply says whether
	// the position exists and, if so, its value.
	OperationRead = vsr.OperationUserMin + 1
)

// Sizes of the replicated log's encodings.
const (
	requestBodySize = 24 // client id, request number, argument; then padding
	// requestPaddingBytesMax bounds the padding a client adds to a request
	// body, so that prepares span several sectors and torn writes matter.
	requestPaddingBytesMax = 3*vsr.SectorSize + 512
	appendReplySize        = 8
	readReplySize          = 9
	// logValuesMax bounds the values a replicated log holds (and so its
	// checkpoint size).
	logValuesMax = 4096
)

// ErrCheckpoint is returned by Restore for a corrupt checkpoint.
var ErrCheckpoint = errors.New("sim: corrupt replicated log checkpoint")

// encodeRequestBody encodes a request of the replicated log. The client id
// and request number ride in the body so that the exactly-once checker can
// see, at Apply, which client request an op carries. Padding bytes (a
// pattern derived from the argument) follow; Apply ignores them.
func encodeRequestBody(dst []byte, client, request, argument uint64) []byte {
	return encodeRequestBodyPadded(dst, client, request, argument, 0)
}

func encodeRequestBodyPadded(dst []byte, client, request, argument uint64, padding int) []byte {
	var b [requestBodySize]byte
	binary.LittleEndian.PutUint64(b[0:], client)
	binary.LittleEndian.PutUint64(b[8:], request)
	binary.LittleEndian.PutUint64(b[16:], argument)
	dst = append(dst, b[:]...)
	for i := 0; i < padding; i++ {
		dst = append(dst, byte(argument)+byte(i))
	}
	return dst
}

// applyObserver receives every operation a replica applies and every
// checkpoint it restores.
type applyObserver interface {
	observeApply(replica int, op, timestamp uint64, operation uint8, body, reply []byte)
	observeRestore(replica int, valueCount int)
}

// ReplicatedLog is the state machine under test: an append-only log of
// uint64 values. It implements vsr.StateMachine and reports each Apply to
// the run's checkers.
type ReplicatedLog struct {
	replica  int
	values   []uint64
	observer applyObserver
	// stateHash chains every value in order: equal logs have equal hashes,
	// so replicas' states can be compared op by op in O(1).
	stateHash uint64
}

// chainValue extends a state hash by one value.
func chainValue(h, v uint64) uint64 {
	h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
	return h * 0xff51afd7ed558ccd
}

// StateDigest returns the number of values and the state hash.
func (l *ReplicatedLog) StateDigest() (count int, hash uint64) { return len(l.values), l.stateHash }

// NewReplicatedLog returns an empty log for replica.
func NewReplicatedLog(replica int, observer applyObserver) *ReplicatedLog {
	return &ReplicatedLog{replica: replica, observer: observer}
}

// Apply implements vsr.StateMachine. Malformed bodies get an empty reply
// (the simulator's clients never send them).
func (l *ReplicatedLog) Apply(op uint64, timestamp uint64, operation uint8, body []byte) []byte {
	var reply []byte
	if len(body) >= requestBodySize {
		argument := binary.LittleEndian.Uint64(body[16:])
		switch operation {
		case OperationAppend:
			if len(l.values) < logValuesMax {
				reply = binary.LittleEndian.AppendUint64(nil, uint64(len(l.values)))
				l.values = append(l.values, argument)
				l.stateHash = chainValue(l.stateHash, argument)
			}
		case OperationRead:
			reply = make([]byte, readReplySize)
			if argument < uint64(len(l.values)) {
				reply[0] = 1
				binary.LittleEndian.PutUint64(reply[1:], l.values[argument])
			}
		}
	}
	if l.observer != nil {
		l.observer.observeApply(l.replica, op, timestamp, operation, body, reply)
	}
	return reply
}

// Checkpoint implements vsr.StateMachine: a count then the values.
func (l *ReplicatedLog) Checkpoint() []byte {
	out := make([]byte, 8+8*len(l.values))
	binary.LittleEndian.PutUint64(out, uint64(len(l.values)))
	for i, v := range l.values {
		binary.LittleEndian.PutUint64(out[8+8*i:], v)
	}
	return out
}

// Restore implements vsr.StateMachine.
func (l *ReplicatedLog) Restore(data []byte) error {
	if len(data) < 8 {
		return fmt.Errorf("%w: %d bytes", ErrCheckpoint, len(data))
	}
	count := binary.LittleEndian.Uint64(data)
	if count > logValuesMax || uint64(len(data)) != 8+8*count {
		return fmt.Errorf("%w: count %d in %d bytes", ErrCheckpoint, count, len(data))
	}
	values := make([]uint64, count)
	hash := uint64(0)
	for i := range values {
		values[i] = binary.LittleEndian.Uint64(data[8+8*i:])
		hash = chainValue(hash, values[i])
	}
	l.values = values
	l.stateHash = hash
	if l.observer != nil {
		l.observer.observeRestore(l.replica, len(values))
	}
	return nil
}

// Values returns the log's contents (shared; do not modify).
func (l *ReplicatedLog) Values() []uint64 { return l.values }
