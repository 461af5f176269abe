package metadata

// Code is a protocol error code (PROTOCOL.md §8) returned as the committed
// result of an operation. CodeOK (0) means success.
type Code uint32

// Result codes Apply commits. The values are the protocol's error codes.
const (
	CodeOK                        Code = 0
	CodeInvalidCommand            Code = 3
	CodeFeatureUnavailable        Code = 5
	CodeResourceNotFound          Code = 20
	CodeUnauthorized              Code = 41
	CodeInvalidCredentials        Code = 42
	CodeInvalidUsername           Code = 43
	CodeUserAlreadyExists         Code = 46
	CodeCannotDeleteUser          Code = 48
	CodeCannotChangePermissions   Code = 49
	CodePersonalAccessTokenExists Code = 51
	CodePersonalAccessTokensLimit Code = 52
	CodeUsersLimitReached         Code = 55
	CodeInvalidTokenExpiry        Code = 56
	CodeStreamIDNotFound          Code = 1009
	CodeStreamNameAlreadyExists   Code = 1012
	CodeInvalidTopicSize          Code = 1019
	CodeTooManyStreams            Code = 1020
	CodeTopicIDNotFound           Code = 2010
	CodeTopicNameAlreadyExists    Code = 2013
	CodeTooManyPartitions         Code = 2015
	CodeInvalidPartitionsCount    Code = 2019
	CodeTooManyTopics             Code = 2021
	CodePartitionNotFound         Code = 3007
	CodePartitionIDSpaceExhausted Code = 3013
	CodeInvalidOptionValue        Code = 4042
)

// resultOK is the result section of a success with no payload (§4.9).
var resultOK = []byte{0, 0, 0, 0}

// okReply returns a success reply: [0u32] followed by payload.
func okReply(payload []byte) []byte {
	out := make([]byte, 0, 4+len(payload))
	out = append(out, resultOK...)
	return append(out, payload...)
}

// rejectReply returns the 12-byte committed rejection [1][0][code] (§4.9).
func rejectReply(code Code) []byte {
	out := make([]byte, 0, 12)
	out = appendU32(out, 1)
	out = appendU32(out, 0)
	return appendU32(out, uint32(code))
}

// ReplyCode reports the result code of a reply Apply returned: CodeOK for a
// success, else the committed error code. ok is false when reply is not a
// result-framed body.
func ReplyCode(reply []byte) (code Code, ok bool) {
	d := decoder{buf: reply}
	count := d.u32()
	if d.err != nil {
		return 0, false
	}
	if count == 0 {
		return CodeOK, true
	}
	_ = d.u32()
	c := d.u32()
	if d.err != nil || count != 1 || d.remaining() != 0 {
		return 0, false
	}
	return Code(c), true
}
