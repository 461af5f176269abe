package metadata

import (
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/net/wire/statecodec"
)

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

// okReply returns a success reply: [0u32] followed by payload.
func okReply(payload []byte) []byte {
	out := wire.AppendResultOK(make([]byte, 0, wire.ResultOKSize+len(payload)))
	return append(out, payload...)
}

// rejectReply returns the 12-byte committed rejection [1][0][code] (§4.9).
func rejectReply(code Code) []byte {
	return wire.AppendResultError(make([]byte, 0, wire.ResultErrorSize), wire.ErrorCode(code))
}

// ReplyCode reports the result code of a reply Apply returned: CodeOK for a
// success, else the committed error code. ok is false when reply is not a
// result-framed body.
func ReplyCode(reply []byte) (code Code, ok bool) {
	d := statecodec.NewDecoder(reply, ErrMalformed)
	count := d.U32()
	if d.Err() != nil {
		return 0, false
	}
	if count == 0 {
		return CodeOK, true
	}
	_ = d.U32()
	c := d.U32()
	if d.Err() != nil || count != 1 || d.Remaining() != 0 {
		return 0, false
	}
	return Code(c), true
}
