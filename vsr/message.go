package vsr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Command names the kind of a Message. The numbering is part of the wire
// format and never changes.
type Command uint8

const (
	// CommandReserved is never sent; a zero header decodes to it and is
	// rejected.
	CommandReserved Command = iota
	// CommandRequest carries a client operation to the primary.
	CommandRequest
	// CommandPrepare carries an operation from the primary to the backups.
	CommandPrepare
	// CommandPrepareOk acknowledges a prepare (and, in persisted mode, its
	// durability). Context holds the checksum of the acknowledged prepare.
	CommandPrepareOk
	// CommandCommit is the primary's heartbeat announcing its commit number.
	// Context is zero, or the nonce of a read round (read_index.go: Lo the
	// round, Hi the primary's read epoch), which the backups answer with
	// CommitOk.
	CommandCommit
	// CommandStartViewChange votes to leave the current view.
	CommandStartViewChange
	// CommandDoViewChange sends a replica's log suffix (headers in the body)
	// to the primary of the new view.
	CommandDoViewChange
	// CommandStartView installs the new view's log suffix (headers in the
	// body) at the backups.
	CommandStartView
	// CommandReply answers a client request. Context holds the request's
	// checksum; Op is the op that committed it.
	CommandReply
	// CommandEviction tells a client that its session is gone.
	CommandEviction
	// CommandRecovery asks peers for the current view and log; Context holds
	// the nonce.
	CommandRecovery
	// CommandRecoveryResponse answers a Recovery with the same nonce; from
	// the primary it carries the log suffix headers in the body.
	CommandRecoveryResponse
	// CommandRequestPrepare asks a peer for the prepare at Op; Context is
	// its expected checksum, or zero when unknown.
	CommandRequestPrepare
	// CommandRequestHeaders asks for the headers of ops Op..Commit.
	CommandRequestHeaders
	// CommandHeaders answers RequestHeaders with headers in the body.
	CommandHeaders
	// CommandRequestCheckpoint asks a peer for its latest checkpoint.
	CommandRequestCheckpoint
	// CommandCheckpoint carries one chunk of a checkpoint: CheckpointOp,
	// Op = chunk offset, Commit = total size, Parent = checksum of the
	// whole checkpoint, body = chunk.
	CommandCheckpoint
	// CommandRequestStartView asks the primary of View for a StartView, sent
	// by a replica that learned of a newer view it did not take part in.
	CommandRequestStartView
	// CommandCommitOk answers a Commit that carries a read round's nonce:
	// a backup in normal status in View tells its primary that it still
	// is, after the round was sent. Context is the round's nonce.
	CommandCommitOk
	// CommandRequestSegments and CommandSegments are a partition group
	// host's segment state transfer (server/group): a replica whose
	// segments miss the flushed history of a checkpoint it installed asks
	// a peer for the segment files' manifest and chunks. The replica
	// never handles them; the host does, before Step.
	CommandRequestSegments
	CommandSegments

	commandCount
)

var commandNames = [commandCount]string{
	"reserved", "request", "prepare", "prepare_ok", "commit",
	"start_view_change", "do_view_change", "start_view", "reply", "eviction",
	"recovery", "recovery_response", "request_prepare", "request_headers",
	"headers", "request_checkpoint", "checkpoint", "request_start_view",
	"commit_ok",
	"request_segments", "segments",
}

// String returns the command's protocol name.
func (c Command) String() string {
	if c < commandCount {
		return commandNames[c]
	}
	return fmt.Sprintf("command(%d)", uint8(c))
}

// Disposition says why a replica answered a request without committing
// it. Such an answer is a CommandReply with an empty body, Op 0, and the
// request's client, request number, session, operation and checksum
// (Context), sent through Network.SendToClient like any reply: every
// request a replica receives gets either the committed reply (from the
// primary, once it applies the op) or one of these, never silence. vsr
// does not know the client protocol's codes; the host maps them (Iggy:
// 57 TransientNotCommitted for an outcome that is unknown or not yet
// decided, 58 TransientNotAccepted for a request never admitted, 59
// RequestAlreadyApplied).
type Disposition uint8

const (
	// DispositionNone marks an ordinary reply: the request committed.
	DispositionNone Disposition = iota
	// DispositionNotPrimary: this replica is not the primary (a backup in
	// normal status, a replica still opening, or one fenced by a storage
	// failure); the request was never admitted. (58)
	DispositionNotPrimary
	// DispositionViewChange: a view change or a recovery is in flight; the
	// replica cannot say who will commit. (57)
	DispositionViewChange
	// DispositionBehind: the primary has not caught up (it waits for a
	// checkpoint, or has not applied what it knows committed, such as the
	// session's register). (57)
	DispositionBehind
	// DispositionInFlight: a prepare of this client's request (the same
	// number or a later one) is in flight or queued; the committed reply
	// follows. Sessioned operations only. (57)
	DispositionInFlight
	// DispositionOverloaded: the pipeline and the request queue are full;
	// the request was not admitted. (58)
	DispositionOverloaded
	// DispositionDropped: the request was queued or prepared by a primary
	// that left its view before committing it; it may still commit in the
	// new view. (57)
	DispositionDropped
	// DispositionAlreadyApplied: the request number is at or below the
	// session's latest and its reply is no longer cached. (59)
	DispositionAlreadyApplied
	// DispositionTooLarge: the request exceeds Config.MessageSizeMax.
	DispositionTooLarge
	// DispositionInvalid: the operation is not one a client may submit, or
	// the request names a session newer than the one the client holds.
	DispositionInvalid

	dispositionCount
)

var dispositionNames = [dispositionCount]string{
	"none", "not_primary", "view_change", "behind", "in_flight", "overloaded",
	"dropped", "already_applied", "too_large", "invalid",
}

// String returns the disposition's name.
func (d Disposition) String() string {
	if d < dispositionCount {
		return dispositionNames[d]
	}
	return fmt.Sprintf("disposition(%d)", uint8(d))
}

// Operations below OperationUserMin belong to VSR itself and never reach
// StateMachine.Apply.
const (
	// OperationReserved is never valid.
	OperationReserved uint8 = 0
	// OperationRoot is the operation of op 0, the root of the hash chain.
	OperationRoot uint8 = 1
	// OperationRegister opens a client session; the reply's Session is the
	// op number that committed it.
	OperationRegister uint8 = 2
	// OperationUserMin is the smallest operation passed to the state machine.
	OperationUserMin uint8 = 8
)

// HeaderSize is the encoded size of a Header in bytes.
const HeaderSize = 256

// headerUsedSize is the number of header bytes carrying fields; the rest is
// reserved and must be zero.
const headerUsedSize = 168

// MessageSizeMaxLimit bounds Config.MessageSizeMax (header included): a
// 64 MiB Iggy frame or batch (net/wire MaxFrameSize, BatchLengthMax) as a
// prepare body plus the header, rounded up to a sector.
const MessageSizeMaxLimit = 64<<20 + SectorSize

// Errors returned by the codec.
var (
	// ErrMessageShort means the buffer is smaller than the header or the
	// size the header claims.
	ErrMessageShort = errors.New("vsr: message too short")
	// ErrMessageChecksum means a header or body checksum did not match.
	ErrMessageChecksum = errors.New("vsr: message checksum mismatch")
	// ErrMessageInvalid means a well-checksummed header holds impossible
	// values.
	ErrMessageInvalid = errors.New("vsr: invalid message")
)

// Header is the fixed-size part of every Message. Fields not used by a
// command are zero.
type Header struct {
	// Checksum covers the encoded header after this field (ChecksumBody
	// included), so it also covers the body.
	Checksum Uint128
	// ChecksumBody covers the body.
	ChecksumBody Uint128
	// Parent is, on a prepare, the checksum of the prepare at Op-1: the
	// hash chain of the log.
	Parent Uint128
	// Client is the client id of a request, prepare, reply or eviction.
	Client Uint128
	// Context depends on the command (see the Command constants).
	Context Uint128
	// Cluster identifies the cluster; replicas drop foreign messages.
	Cluster uint64
	// Size is HeaderSize plus the body length.
	Size uint32
	// Command is the kind of message.
	Command Command
	// Operation is the state machine operation of a request/prepare/reply.
	Operation uint8
	// Replica is the sender's index (for a request: the replica addressed).
	Replica uint8
	// Disposition is set on a Reply that answers a request without
	// committing it (see Disposition); zero on every other message.
	Disposition Disposition
	// View is the sender's view.
	View uint64
	// LogView is the last view in which the sender's status was normal.
	LogView uint64
	// Op is an op number (see the commands).
	Op uint64
	// Commit is the sender's commit number.
	Commit uint64
	// Timestamp is the primary-assigned time of a prepare, in microseconds.
	Timestamp uint64
	// Request is the client's request number.
	Request uint64
	// Session is the client's session number (its register op).
	Session uint64
	// CheckpointOp is the op of the sender's latest checkpoint.
	CheckpointOp uint64
	// Group identifies the consensus group within the cluster (the
	// metadata group, or one partition's group); replicas drop messages of
	// another group. Group 0 encodes as the bytes that were reserved
	// before groups existed, so its messages are unchanged.
	Group uint64
}

// Message is a Header and its body.
type Message struct {
	Header
	// Body is the payload; len(Body) == Size - HeaderSize once sealed.
	Body []byte
}

// Clone returns a deep copy of m.
func (m *Message) Clone() *Message {
	c := &Message{Header: m.Header}
	if m.Body != nil {
		c.Body = append(make([]byte, 0, len(m.Body)), m.Body...)
	}
	return c
}

// Seal sets Size, ChecksumBody and Checksum from the other fields and the
// body. Call it after the last change to a message and before sending.
func (m *Message) Seal() {
	m.Size = uint32(HeaderSize + len(m.Body))
	m.ChecksumBody = checksum(m.Body)
	var buf [HeaderSize]byte
	m.Header.encode(buf[:])
	m.Checksum = checksum(buf[16:])
}

// sealHeader is Seal for a body whose checksum is known to be bodySum.
func (m *Message) sealHeader(bodySum Uint128) {
	m.Size = uint32(HeaderSize + len(m.Body))
	m.ChecksumBody = bodySum
	var buf [HeaderSize]byte
	m.Header.encode(buf[:])
	m.Checksum = checksum(buf[16:])
}

// SealBody is Seal for a body whose checksum its host already holds: the
// body is not read again, only the header is sealed. bodySum must be
// checksum(m.Body) wherever a peer or a journal verifies the body (Step,
// Open); a host whose group has neither (a group of one in Replicated
// durability, whose prepares never leave memory) may pass a digest that
// commits to a body it verified another way.
func (m *Message) SealBody(bodySum Uint128) { m.sealHeader(bodySum) }

// Valid reports whether m's checksums match its contents.
func (m *Message) Valid() bool {
	if int(m.Size) != HeaderSize+len(m.Body) || checksum(m.Body) != m.ChecksumBody {
		return false
	}
	var buf [HeaderSize]byte
	m.Header.encode(buf[:])
	return checksum(buf[16:]) == m.Checksum
}

// validHeader reports whether m's header checksum matches and its size is
// its body's, whatever the body holds (BugAcceptCorruptBody trusts it).
func (m *Message) validHeader() bool {
	var buf [HeaderSize]byte
	m.Header.encode(buf[:])
	return int(m.Size) == HeaderSize+len(m.Body) && checksum(buf[16:]) == m.Checksum
}

// EncodedSize returns the number of bytes Encode appends.
func (m *Message) EncodedSize() int { return HeaderSize + len(m.Body) }

// Encode appends the wire form of m (header then body) to dst. m must be
// sealed.
func (m *Message) Encode(dst []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	m.Header.encode(dst[n : n+HeaderSize])
	return append(dst, m.Body...)
}

// Decode parses a message from buf, verifying both checksums. The body
// aliases buf. It never panics on any input.
func (m *Message) Decode(buf []byte) error {
	if err := m.Header.Decode(buf); err != nil {
		return err
	}
	if len(buf) < int(m.Size) {
		return fmt.Errorf("%w: have %d bytes, header says %d", ErrMessageShort, len(buf), m.Size)
	}
	m.Body = buf[HeaderSize:m.Size:m.Size]
	if checksum(m.Body) != m.ChecksumBody {
		return fmt.Errorf("%w: body", ErrMessageChecksum)
	}
	return nil
}

// Decode parses and verifies a header (not the body) from buf.
func (h *Header) Decode(buf []byte) error {
	if len(buf) < HeaderSize {
		return fmt.Errorf("%w: %d bytes", ErrMessageShort, len(buf))
	}
	h.decode(buf[:HeaderSize])
	if checksum(buf[16:HeaderSize]) != h.Checksum {
		return fmt.Errorf("%w: header", ErrMessageChecksum)
	}
	for _, b := range buf[headerUsedSize:HeaderSize] {
		if b != 0 {
			return fmt.Errorf("%w: reserved bytes set", ErrMessageInvalid)
		}
	}
	if h.Command == CommandReserved || h.Command >= commandCount {
		return fmt.Errorf("%w: command %d", ErrMessageInvalid, h.Command)
	}
	if h.Size < HeaderSize || h.Size > MessageSizeMaxLimit {
		return fmt.Errorf("%w: size %d", ErrMessageInvalid, h.Size)
	}
	return nil
}

// Encode writes the header into buf[:HeaderSize].
func (h *Header) Encode(buf []byte) { h.encode(buf[:HeaderSize]) }

func putUint128(b []byte, u Uint128) {
	binary.LittleEndian.PutUint64(b[0:8], u.Lo)
	binary.LittleEndian.PutUint64(b[8:16], u.Hi)
}

func getUint128(b []byte) Uint128 {
	return Uint128{Lo: binary.LittleEndian.Uint64(b[0:8]), Hi: binary.LittleEndian.Uint64(b[8:16])}
}

func (h *Header) encode(b []byte) {
	_ = b[HeaderSize-1]
	putUint128(b[0:], h.Checksum)
	putUint128(b[16:], h.ChecksumBody)
	putUint128(b[32:], h.Parent)
	putUint128(b[48:], h.Client)
	putUint128(b[64:], h.Context)
	le := binary.LittleEndian
	le.PutUint64(b[80:], h.Cluster)
	le.PutUint32(b[88:], h.Size)
	b[92] = byte(h.Command)
	b[93] = h.Operation
	b[94] = h.Replica
	b[95] = byte(h.Disposition)
	le.PutUint64(b[96:], h.View)
	le.PutUint64(b[104:], h.LogView)
	le.PutUint64(b[112:], h.Op)
	le.PutUint64(b[120:], h.Commit)
	le.PutUint64(b[128:], h.Timestamp)
	le.PutUint64(b[136:], h.Request)
	le.PutUint64(b[144:], h.Session)
	le.PutUint64(b[152:], h.CheckpointOp)
	le.PutUint64(b[160:], h.Group)
	clear(b[headerUsedSize:HeaderSize])
}

func (h *Header) decode(b []byte) {
	_ = b[HeaderSize-1]
	le := binary.LittleEndian
	h.Checksum = getUint128(b[0:])
	h.ChecksumBody = getUint128(b[16:])
	h.Parent = getUint128(b[32:])
	h.Client = getUint128(b[48:])
	h.Context = getUint128(b[64:])
	h.Cluster = le.Uint64(b[80:])
	h.Size = le.Uint32(b[88:])
	h.Command = Command(b[92])
	h.Operation = b[93]
	h.Replica = b[94]
	h.Disposition = Disposition(b[95])
	h.View = le.Uint64(b[96:])
	h.LogView = le.Uint64(b[104:])
	h.Op = le.Uint64(b[112:])
	h.Commit = le.Uint64(b[120:])
	h.Timestamp = le.Uint64(b[128:])
	h.Request = le.Uint64(b[136:])
	h.Session = le.Uint64(b[144:])
	h.CheckpointOp = le.Uint64(b[152:])
	h.Group = le.Uint64(b[160:])
}

// String renders the header fields that matter for the command, for traces.
func (m *Message) String() string {
	h := &m.Header
	switch h.Command {
	case CommandRequest:
		return fmt.Sprintf("request client=%d req=%d session=%d operation=%d body=%q", h.Client.Lo, h.Request, h.Session, h.Operation, m.Body)
	case CommandPrepare:
		return fmt.Sprintf("prepare v=%d op=%d commit=%d client=%d req=%d operation=%d", h.View, h.Op, h.Commit, h.Client.Lo, h.Request, h.Operation)
	case CommandPrepareOk:
		return fmt.Sprintf("prepare_ok v=%d op=%d", h.View, h.Op)
	case CommandCommit:
		if !h.Context.IsZero() {
			return fmt.Sprintf("commit v=%d commit=%d read_round=%d", h.View, h.Commit, h.Context.Lo)
		}
		return fmt.Sprintf("commit v=%d commit=%d", h.View, h.Commit)
	case CommandCommitOk:
		return fmt.Sprintf("commit_ok v=%d read_round=%d", h.View, h.Context.Lo)
	case CommandReply:
		if h.Disposition != DispositionNone {
			return fmt.Sprintf("reply v=%d client=%d req=%d operation=%d disposition=%s", h.View, h.Client.Lo, h.Request, h.Operation, h.Disposition)
		}
		return fmt.Sprintf("reply v=%d op=%d client=%d req=%d session=%d body=%q", h.View, h.Op, h.Client.Lo, h.Request, h.Session, m.Body)
	case CommandEviction:
		return fmt.Sprintf("eviction v=%d client=%d", h.View, h.Client.Lo)
	case CommandStartViewChange:
		return fmt.Sprintf("start_view_change v=%d", h.View)
	case CommandDoViewChange, CommandStartView, CommandRecoveryResponse, CommandHeaders:
		return fmt.Sprintf("%s v=%d log_view=%d op=%d commit=%d headers=%d", h.Command, h.View, h.LogView, h.Op, h.Commit, len(m.Body)/HeaderSize)
	case CommandRecovery:
		return fmt.Sprintf("recovery nonce=%d", h.Context.Lo)
	case CommandRequestPrepare:
		return fmt.Sprintf("request_prepare v=%d op=%d", h.View, h.Op)
	case CommandRequestHeaders:
		return fmt.Sprintf("request_headers v=%d ops=%d..%d", h.View, h.Op, h.Commit)
	case CommandRequestCheckpoint:
		return fmt.Sprintf("request_checkpoint v=%d offset=%d", h.View, h.Op)
	case CommandCheckpoint:
		return fmt.Sprintf("checkpoint v=%d checkpoint_op=%d offset=%d size=%d", h.View, h.CheckpointOp, h.Op, h.Commit)
	case CommandRequestStartView:
		return fmt.Sprintf("request_start_view v=%d", h.View)
	}
	return h.Command.String()
}
