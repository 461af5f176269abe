package wire

import (
	"encoding/binary"
	"fmt"
)

// HeaderSize is the size of every header kind (§1.1).
const HeaderSize = 256

// Command is the frame kind byte @60 (§1.6).
type Command uint8

// Frame kinds a client sees. Replica-plane kinds are not named here.
const (
	CommandReserved Command = 0
	CommandRequest  Command = 5
	CommandReply    Command = 8
	CommandEviction Command = 13
	// CommandInvalidFrom is the first invalid command byte: a header with
	// command ≥ 30 fails to decode and the connection is closed.
	CommandInvalidFrom Command = 30
)

// Byte offsets of the header fields (§1.2-1.5).
const (
	offChecksum     = 0
	offChecksumBody = 16
	offCluster      = 32
	offSize         = 48
	offView         = 52
	offRelease      = 56
	offCommand      = 60
	offReplica      = 61

	offRequestClient          = 128
	offRequestRequestChecksum = 144
	offRequestTimestamp       = 160
	offRequestRequest         = 168
	offRequestOperation       = 176
	offRequestSession         = 184
	offRequestUserID          = 192
	offRequestCode            = 196

	offReplyRequestChecksum = 128
	offReplyContext         = 144
	offReplyClient          = 160
	offReplyOp              = 176
	offReplyCommit          = 184
	offReplyTimestamp       = 192
	offReplyRequest         = 200
	offReplyOperation       = 208
	offReplyStatus          = 216

	offEvictionClient     = 128
	offEvictionVersionMax = 144
	offEvictionVersionMin = 148
	offEvictionReserved   = 152
	offEvictionReason     = 255
)

// PeekCommand returns the command byte of a header; header must hold at
// least HeaderSize bytes (else CommandReserved).
func PeekCommand(header []byte) Command {
	if len(header) < HeaderSize {
		return CommandReserved
	}
	return Command(header[offCommand])
}

// PeekSize returns the size field @48 of a header (0 if header is short).
func PeekSize(header []byte) uint32 {
	if len(header) < HeaderSize {
		return 0
	}
	return binary.LittleEndian.Uint32(header[offSize:])
}

// SetFrameSize writes len(frame) into the size field of the header at the
// start of frame. It fails if frame is shorter than a header or longer
// than MaxFrameSize.
func SetFrameSize(frame []byte) error {
	if len(frame) < HeaderSize || len(frame) > MaxFrameSize {
		return fmt.Errorf("%w: frame of %d bytes", ErrBadFrameSize, len(frame))
	}
	binary.LittleEndian.PutUint32(frame[offSize:], uint32(len(frame)))
	return nil
}

// checkHeader verifies the length, command and size bounds shared by every
// header decoder.
func checkHeader(b []byte, want Command) error {
	if len(b) < HeaderSize {
		return fmt.Errorf("%w: header of %d bytes", ErrTruncated, len(b))
	}
	if c := Command(b[offCommand]); c != want {
		return fmt.Errorf("%w: command %d, want %d", ErrBadHeader, c, want)
	}
	if size := binary.LittleEndian.Uint32(b[offSize:]); size < HeaderSize || size > MaxFrameSize {
		return fmt.Errorf("%w: size %d", ErrBadFrameSize, size)
	}
	return nil
}

// RequestHeader is the client → server header (§1.3, command 5). Fields
// that are always zero on the client wire (checksum, checksum_body,
// release, padding, reserved) are not represented; Encode writes zeros
// there and Decode ignores them.
type RequestHeader struct {
	// Cluster, View and Replica are sent as 0 by clients; kept so a server
	// can echo them.
	Cluster Uint128
	// Size is the total frame length, header included.
	Size    uint32
	View    uint32
	Replica uint8
	// Client is the non-zero client id chosen by the client (§1.9).
	Client Uint128
	// RequestChecksum is 0 (unstamped) or XXH3-64 of the body,
	// zero-extended (see RequestChecksum).
	RequestChecksum Uint128
	Timestamp       uint64
	// Request is the request number (§1.9).
	Request   uint64
	Operation Operation
	// Session is the session number from the Register reply.
	Session uint64
	// UserID is sent as 0; servers never trust it.
	UserID uint32
	// Code is the command code, meaningful only when Operation is
	// NonReplicated (bytes 196..200); Encode writes it only then.
	Code Code
}

// Encode writes h as a complete 256-byte header into dst, zeroing
// everything h does not represent.
func (h *RequestHeader) Encode(dst *[HeaderSize]byte) {
	*dst = [HeaderSize]byte{}
	b := dst[:]
	putUint128(b[offCluster:], h.Cluster)
	binary.LittleEndian.PutUint32(b[offSize:], h.Size)
	binary.LittleEndian.PutUint32(b[offView:], h.View)
	b[offCommand] = byte(CommandRequest)
	b[offReplica] = h.Replica
	putUint128(b[offRequestClient:], h.Client)
	putUint128(b[offRequestRequestChecksum:], h.RequestChecksum)
	binary.LittleEndian.PutUint64(b[offRequestTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(b[offRequestRequest:], h.Request)
	b[offRequestOperation] = byte(h.Operation)
	binary.LittleEndian.PutUint64(b[offRequestSession:], h.Session)
	binary.LittleEndian.PutUint32(b[offRequestUserID:], h.UserID)
	if h.Operation == OpNonReplicated {
		binary.LittleEndian.PutUint32(b[offRequestCode:], uint32(h.Code))
	}
}

// AppendTo appends the encoded header to dst.
func (h *RequestHeader) AppendTo(dst []byte) []byte {
	var b [HeaderSize]byte
	h.Encode(&b)
	return append(dst, b[:]...)
}

// Decode fills h from the first 256 bytes of b. It checks only what is
// needed to parse (length, command 5, size bounds); ValidateRequest applies
// the §1.8 rules. Code is read from bytes 196..200 only for NonReplicated
// requests and is 0 otherwise.
func (h *RequestHeader) Decode(b []byte) error {
	if err := checkHeader(b, CommandRequest); err != nil {
		return err
	}
	h.Cluster = getUint128(b[offCluster:])
	h.Size = binary.LittleEndian.Uint32(b[offSize:])
	h.View = binary.LittleEndian.Uint32(b[offView:])
	h.Replica = b[offReplica]
	h.Client = getUint128(b[offRequestClient:])
	h.RequestChecksum = getUint128(b[offRequestRequestChecksum:])
	h.Timestamp = binary.LittleEndian.Uint64(b[offRequestTimestamp:])
	h.Request = binary.LittleEndian.Uint64(b[offRequestRequest:])
	h.Operation = Operation(b[offRequestOperation])
	h.Session = binary.LittleEndian.Uint64(b[offRequestSession:])
	h.UserID = binary.LittleEndian.Uint32(b[offRequestUserID:])
	h.Code = 0
	if h.Operation == OpNonReplicated {
		h.Code = Code(binary.LittleEndian.Uint32(b[offRequestCode:]))
	}
	return nil
}

// BodySize returns the body length implied by Size (0 if Size < 256).
func (h *RequestHeader) BodySize() int {
	if h.Size < HeaderSize {
		return 0
	}
	return int(h.Size) - HeaderSize
}

// ValidateRequest applies the §1.8 rules a server checks before acting on a
// request; the reference server drops a violating frame without a reply.
// Operations 64..68 pass this check (they are Defined) and are answered
// with an eviction by the server instead.
func ValidateRequest(h *RequestHeader) error {
	switch {
	case h.Operation == OpReserved || !h.Operation.Defined():
		return fmt.Errorf("%w: operation %d", ErrBadHeader, uint8(h.Operation))
	case h.Client.IsZero():
		return fmt.Errorf("%w: client id 0", ErrBadHeader)
	case h.Operation == OpRegister && (h.Session != 0 || h.Request != 0):
		return fmt.Errorf("%w: register with session %d request %d", ErrBadHeader, h.Session, h.Request)
	case h.Operation != OpRegister && h.Operation != OpNonReplicated && (h.Session == 0 || h.Request == 0):
		return fmt.Errorf("%w: %v with session %d request %d", ErrBadHeader, h.Operation, h.Session, h.Request)
	}
	return nil
}

// ReplyHeader is the server → client header (§1.4, command 8). Fields that
// are always zero (checksums, release, context, padding, reserved) are not
// represented.
type ReplyHeader struct {
	// Cluster, View and Replica are informational; clients ignore them.
	Cluster Uint128
	// Size is 256 + body length.
	Size    uint32
	View    uint32
	Replica uint8
	// RequestChecksum echoes the request's request_checksum.
	RequestChecksum Uint128
	// Client is recommended to echo the request's client id.
	Client Uint128
	// Op and Commit are informational (commit op / session; commit number).
	Op     uint64
	Commit uint64
	// Timestamp echoes the request's timestamp (or the op timestamp).
	Timestamp uint64
	// Request echoes the request's request number; SDKs check it.
	Request uint64
	// Operation selects result-section stripping on the client (§3.2).
	Operation Operation
	// Status is 0 or a pre-commit denial code; non-zero means empty body.
	Status ErrorCode
}

// Encode writes h as a complete 256-byte header into dst.
func (h *ReplyHeader) Encode(dst *[HeaderSize]byte) {
	*dst = [HeaderSize]byte{}
	b := dst[:]
	putUint128(b[offCluster:], h.Cluster)
	binary.LittleEndian.PutUint32(b[offSize:], h.Size)
	binary.LittleEndian.PutUint32(b[offView:], h.View)
	b[offCommand] = byte(CommandReply)
	b[offReplica] = h.Replica
	putUint128(b[offReplyRequestChecksum:], h.RequestChecksum)
	putUint128(b[offReplyClient:], h.Client)
	binary.LittleEndian.PutUint64(b[offReplyOp:], h.Op)
	binary.LittleEndian.PutUint64(b[offReplyCommit:], h.Commit)
	binary.LittleEndian.PutUint64(b[offReplyTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(b[offReplyRequest:], h.Request)
	b[offReplyOperation] = byte(h.Operation)
	binary.LittleEndian.PutUint32(b[offReplyStatus:], uint32(h.Status))
}

// AppendTo appends the encoded header to dst.
func (h *ReplyHeader) AppendTo(dst []byte) []byte {
	var b [HeaderSize]byte
	h.Encode(&b)
	return append(dst, b[:]...)
}

// Decode fills h from the first 256 bytes of b: length, command 8, size
// bounds, a defined operation, and a non-zero status only with an empty
// body are checked.
func (h *ReplyHeader) Decode(b []byte) error {
	if err := checkHeader(b, CommandReply); err != nil {
		return err
	}
	h.Cluster = getUint128(b[offCluster:])
	h.Size = binary.LittleEndian.Uint32(b[offSize:])
	h.View = binary.LittleEndian.Uint32(b[offView:])
	h.Replica = b[offReplica]
	h.RequestChecksum = getUint128(b[offReplyRequestChecksum:])
	h.Client = getUint128(b[offReplyClient:])
	h.Op = binary.LittleEndian.Uint64(b[offReplyOp:])
	h.Commit = binary.LittleEndian.Uint64(b[offReplyCommit:])
	h.Timestamp = binary.LittleEndian.Uint64(b[offReplyTimestamp:])
	h.Request = binary.LittleEndian.Uint64(b[offReplyRequest:])
	h.Operation = Operation(b[offReplyOperation])
	h.Status = ErrorCode(binary.LittleEndian.Uint32(b[offReplyStatus:]))
	if !h.Operation.Defined() {
		return fmt.Errorf("%w: reply operation %d", ErrBadHeader, uint8(h.Operation))
	}
	if h.Status != ErrorCodeOK && h.Size != HeaderSize {
		return fmt.Errorf("%w: status %d with a %d-byte body", ErrBadHeader, uint32(h.Status), h.Size-HeaderSize)
	}
	return nil
}

// EvictionHeader is the session-terminal notice (§1.5, command 13). It
// never has a body.
type EvictionHeader struct {
	// Client is the evicted client id.
	Client Uint128
	// ServerProtocolVersion and ServerProtocolVersionMin are the accepted
	// window, set only for EvictIncompatibleProtocol.
	ServerProtocolVersion    uint32
	ServerProtocolVersionMin uint32
	Reason                   EvictionReason
}

// Encode writes h as a complete 256-byte header (size 256) into dst.
func (h *EvictionHeader) Encode(dst *[HeaderSize]byte) {
	*dst = [HeaderSize]byte{}
	b := dst[:]
	binary.LittleEndian.PutUint32(b[offSize:], HeaderSize)
	b[offCommand] = byte(CommandEviction)
	putUint128(b[offEvictionClient:], h.Client)
	binary.LittleEndian.PutUint32(b[offEvictionVersionMax:], h.ServerProtocolVersion)
	binary.LittleEndian.PutUint32(b[offEvictionVersionMin:], h.ServerProtocolVersionMin)
	b[offEvictionReason] = byte(h.Reason)
}

// AppendTo appends the encoded header to dst.
func (h *EvictionHeader) AppendTo(dst []byte) []byte {
	var b [HeaderSize]byte
	h.Encode(&b)
	return append(dst, b[:]...)
}

// Decode fills h from the first 256 bytes of b and checks the §1.5 rules:
// command 13, size exactly 256, a reason byte that is not 0, reserved
// bytes zero and version fields zero unless the reason is
// IncompatibleProtocol. Reasons ≥ 16 decode (SDKError maps them).
func (h *EvictionHeader) Decode(b []byte) error {
	if err := checkHeader(b, CommandEviction); err != nil {
		return err
	}
	if size := binary.LittleEndian.Uint32(b[offSize:]); size != HeaderSize {
		return fmt.Errorf("%w: eviction of size %d", ErrBadHeader, size)
	}
	h.Client = getUint128(b[offEvictionClient:])
	h.ServerProtocolVersion = binary.LittleEndian.Uint32(b[offEvictionVersionMax:])
	h.ServerProtocolVersionMin = binary.LittleEndian.Uint32(b[offEvictionVersionMin:])
	h.Reason = EvictionReason(b[offEvictionReason])
	if h.Reason == EvictReserved {
		return fmt.Errorf("%w: eviction reason 0", ErrBadHeader)
	}
	for _, c := range b[offEvictionReserved:offEvictionReason] {
		if c != 0 {
			return fmt.Errorf("%w: eviction reserved bytes not zero", ErrBadHeader)
		}
	}
	if h.Reason != EvictIncompatibleProtocol && (h.ServerProtocolVersion != 0 || h.ServerProtocolVersionMin != 0) {
		return fmt.Errorf("%w: protocol window on eviction reason %v", ErrBadHeader, h.Reason)
	}
	return nil
}
