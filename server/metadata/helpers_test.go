package metadata

import (
	"encoding/binary"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// stateMachine mirrors vsr.StateMachine (vsr does not build on its own
// yet); the assertion keeps Machine's method set in step with it.
type stateMachine interface {
	Apply(op uint64, timestamp uint64, operation uint8, body []byte) (reply []byte)
	Checkpoint() []byte
	Restore(data []byte) error
}

var _ stateMachine = (*Machine)(nil)

// harness applies operations with increasing op numbers and timestamps.
type harness struct {
	t  *testing.T
	m  *Machine
	op uint64
	ts uint64
}

const rootHash = "root-hash"

// newHarness returns a machine with the root user bootstrapped.
func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, m: New(), ts: 1_000_000}
	reply := h.raw(OperationCreateUser, BootstrapRoot("iggy", rootHash, nil))
	if code, _ := ReplyCode(reply); code != CodeOK {
		t.Fatalf("bootstrap: code %d", code)
	}
	h.m.TakeEffects()
	return h
}

func (h *harness) raw(operation uint8, body []byte) []byte {
	h.op++
	h.ts += 10
	return h.m.Apply(h.op, h.ts, operation, body)
}

// apply applies o as user and returns the reply.
func (h *harness) apply(user uint32, o Op) []byte {
	return h.raw(o.Operation(), EncodeOp(Envelope{UserID: user, ClientLo: 7, Request: h.op + 1}, o))
}

// code applies o as user and returns the committed result code.
func (h *harness) code(user uint32, o Op) Code {
	h.t.Helper()
	code, ok := ReplyCode(h.apply(user, o))
	if !ok {
		h.t.Fatalf("%T: reply is not result-framed", o)
	}
	return code
}

// mustOK applies o as root and fails the test unless it succeeds.
func (h *harness) mustOK(o Op) []byte {
	h.t.Helper()
	reply := h.apply(RootUserID, o)
	if code, _ := ReplyCode(reply); code != CodeOK {
		h.t.Fatalf("%T: code %d", o, code)
	}
	return reply[4:]
}

// addUser creates a user with permissions and returns its id.
func (h *harness) addUser(name string, p *Permissions) uint32 {
	h.t.Helper()
	payload := h.mustOK(&CreateUser{Username: name, PasswordHash: "h-" + name, Status: UserStatusActive, Permissions: p})
	return binary.LittleEndian.Uint32(payload)
}

// reader decodes reply payloads by hand in tests.
type reader struct {
	t   *testing.T
	b   []byte
	off int
}

func (r *reader) u8() uint8 {
	r.t.Helper()
	if r.off+1 > len(r.b) {
		r.t.Fatalf("short payload at %d", r.off)
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) u32() uint32 {
	r.t.Helper()
	if r.off+4 > len(r.b) {
		r.t.Fatalf("short payload at %d", r.off)
	}
	r.off += 4
	return binary.LittleEndian.Uint32(r.b[r.off-4:])
}

func (r *reader) u64() uint64 {
	r.t.Helper()
	if r.off+8 > len(r.b) {
		r.t.Fatalf("short payload at %d", r.off)
	}
	r.off += 8
	return binary.LittleEndian.Uint64(r.b[r.off-8:])
}

func (r *reader) bytes(n int) []byte {
	r.t.Helper()
	if r.off+n > len(r.b) {
		r.t.Fatalf("short payload at %d", r.off)
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

func (r *reader) name() string { return string(r.bytes(int(r.u8()))) }

func (r *reader) done() {
	r.t.Helper()
	if r.off != len(r.b) {
		r.t.Fatalf("%d trailing payload bytes", len(r.b)-r.off)
	}
}

func defaultTopicOptions() TopicOptions {
	return TopicOptions{
		MessageExpiryMicros: NeverExpires, CompressionAlgorithm: CompressionNone,
		MaxTopicSizeBytes: NeverExpires, SegmentSizeBytes: 1 << 30,
		MessagesRequiredToSave: 1024, SizeOfMessagesRequiredToSaveBytes: 1 << 20,
		Durability: DurabilityReplicated, ConsumerOffsetDurability: DurabilityReplicated,
	}
}

func createTopicOp(stream Identifier, name string, partitions uint32) *CreateTopic {
	return &CreateTopic{Stream: stream, PartitionsCount: partitions, Name: name, Options: defaultTopicOptions()}
}

// block encodes options as a stored block (keys ascending).
func block(options ...wire.Option) []byte {
	b, err := encodeOptions(options)
	if err != nil {
		panic(err)
	}
	return b
}
