package wire

import (
	"errors"
	"strconv"
)

// ErrorCode is a numeric error code of PROTOCOL.md §8. It travels as a Reply
// status (pre-commit denials), as the result of a result section (committed
// rejections) or is implied by an eviction reason. An ErrorCode is itself a
// Go error, so decoders and validators in this package return it (wrapped
// with %w) when the protocol prescribes a specific code.
type ErrorCode uint32

// ErrorCodeOK is the zero status: no error.
const ErrorCodeOK ErrorCode = 0

type errorCodeName struct {
	code ErrorCode
	name string
}

// Name returns the §8 name of c, or "" when c is not a known code.
func (c ErrorCode) Name() string {
	lo, hi := 0, len(errorCodeNames)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if errorCodeNames[mid].code < c {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(errorCodeNames) && errorCodeNames[lo].code == c {
		return errorCodeNames[lo].name
	}
	return ""
}

// Known reports whether c is one of the codes of §8.
func (c ErrorCode) Known() bool { return c.Name() != "" }

// String returns the §8 name of c, or "ErrorCode(n)" for unknown codes.
func (c ErrorCode) String() string {
	if c == ErrorCodeOK {
		return "OK"
	}
	if n := c.Name(); n != "" {
		return n
	}
	return "ErrorCode(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// Error implements error: "iggy error 1009 StreamIdNotFound".
func (c ErrorCode) Error() string {
	return "iggy error " + strconv.FormatUint(uint64(c), 10) + " " + c.String()
}

// CodeOf returns the error code a server should report for err: the
// ErrorCode inside err's chain if there is one, InvalidCommand (3) for any
// other non-nil error (decode failures are "undecodable body", §5), and
// ErrorCodeOK for nil.
func CodeOf(err error) ErrorCode {
	if err == nil {
		return ErrorCodeOK
	}
	var c ErrorCode
	if errors.As(err, &c) {
		return c
	}
	return ErrInvalidCommand
}
