package wire

import (
	"encoding/binary"
	"fmt"
)

// ResultEntry is one {index, result} pair of a result section (§4.9).
type ResultEntry struct {
	Index  uint32
	Result ErrorCode
}

// Result section sizes.
const (
	// ResultOKSize is the success prefix: count 0.
	ResultOKSize = 4
	// ResultErrorSize is a whole rejection body: [1][0][code].
	ResultErrorSize = 12
	// resultEntriesMax bounds the count a decoder accepts.
	resultEntriesMax = 1 << 16
)

// AppendResultOK appends the success result prefix [count u32 = 0]; the
// success payload follows it.
func AppendResultOK(dst []byte) []byte { return appendU32(dst, 0) }

// AppendResultError appends a committed rejection or transient body:
// [count 1][index 0][code].
func AppendResultError(dst []byte, code ErrorCode) []byte {
	return appendU32(appendU32(appendU32(dst, 1), 0), uint32(code))
}

// SplitResult separates a result-framed body into its entries and payload.
// code is the first non-zero result (ErrorCodeOK if none); payload is what
// follows the entries (a subslice of body).
func SplitResult(body []byte) (payload []byte, code ErrorCode, err error) {
	if len(body) < 4 {
		return nil, 0, fmt.Errorf("%w: body of %d bytes: %w", ErrBadResult, len(body), ErrTruncated)
	}
	count := binary.LittleEndian.Uint32(body)
	if count > resultEntriesMax || uint64(len(body)-4) < uint64(count)*8 {
		return nil, 0, fmt.Errorf("%w: %d entries in %d bytes", ErrBadResult, count, len(body))
	}
	for i := uint32(0); i < count; i++ {
		r := ErrorCode(binary.LittleEndian.Uint32(body[4+8*i+4:]))
		if code == ErrorCodeOK && r != ErrorCodeOK {
			code = r
		}
	}
	end := 4 + 8*int(count)
	return body[end:len(body):len(body)], code, nil
}

// ReplyPayload is the client-side decode of a Reply body (§1.4): it strips
// the result section when the reply's operation is result-framed
// (Register only when the body is non-empty) and turns a rejection into
// its ErrorCode. status is the header status; non-zero returns it.
func ReplyPayload(operation Operation, status ErrorCode, body []byte) ([]byte, error) {
	if status != ErrorCodeOK {
		return nil, status
	}
	if !operation.IsResultFramed() || (operation == OpRegister && len(body) == 0) {
		return body, nil
	}
	payload, code, err := SplitResult(body)
	if err != nil {
		return nil, err
	}
	if code != ErrorCodeOK {
		return nil, code
	}
	return payload, nil
}
