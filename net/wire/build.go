package wire

import "fmt"

// NewRequestHeader returns the header a client sends for code: the
// operation from the §3.2 table, the code itself only for NonReplicated
// commands, and request = 0 and session = 0 for Register (login). request
// is the number the client's counter dictates (see RequestNumbering).
func NewRequestHeader(code Code, client Uint128, session, request uint64) (RequestHeader, error) {
	info, ok := LookupCode(code)
	if !ok {
		return RequestHeader{}, fmt.Errorf("%w: unknown command code %d", ErrBadValue, uint32(code))
	}
	h := RequestHeader{Client: client, Session: session, Request: request, Operation: info.Operation}
	if info.Operation == OpNonReplicated {
		h.Code = code
	}
	if info.Operation == OpRegister {
		h.Session, h.Request = 0, 0
	}
	return h, nil
}

// AppendRequest appends a whole request frame for req to dst: h (with
// Size set from the body) followed by the encoded body. With
// stampChecksum the header's request_checksum is set to XXH3-64 of the
// body (the Rust SDK stamps metadata ops, Register and Logout; 0 is always
// accepted). It writes in place and does not allocate when dst has room.
func AppendRequest(dst []byte, h *RequestHeader, req Request, stampChecksum bool) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	dst, err := req.AppendTo(dst)
	if err != nil {
		return dst[:start], err
	}
	body := dst[start+HeaderSize:]
	if len(body) > MaxFrameSize-HeaderSize {
		return dst[:start], fmt.Errorf("%w: body of %d bytes", ErrBadFrameSize, len(body))
	}
	h.Size = uint32(HeaderSize + len(body))
	if stampChecksum {
		h.RequestChecksum = RequestChecksum(body)
	}
	h.Encode((*[HeaderSize]byte)(dst[start : start+HeaderSize]))
	return dst, nil
}

// AppendResultReply appends a whole result-framed success reply: header,
// result prefix [0], then whatever payload appends. h.Operation should
// already be ResultReplyOperation of the request's operation.
func AppendResultReply(dst []byte, h *ReplyHeader, payload func(dst []byte) ([]byte, error)) ([]byte, error) {
	start := len(dst)
	dst = AppendResultOK(append(dst, make([]byte, HeaderSize)...))
	var err error
	if payload != nil {
		if dst, err = payload(dst); err != nil {
			return dst[:start], err
		}
	}
	return finishReply(dst, start, h)
}

// AppendRawReply appends a whole reply whose body (not result-framed) is
// produced by payload (nil for an empty body).
func AppendRawReply(dst []byte, h *ReplyHeader, payload func(dst []byte) ([]byte, error)) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	var err error
	if payload != nil {
		if dst, err = payload(dst); err != nil {
			return dst[:start], err
		}
	}
	return finishReply(dst, start, h)
}

// AppendRejectionReply appends a committed rejection or transient reply:
// body [1][0][code], status 0 (§4.9).
func AppendRejectionReply(dst []byte, h *ReplyHeader, code ErrorCode) ([]byte, error) {
	start := len(dst)
	dst = AppendResultError(append(dst, make([]byte, HeaderSize)...), code)
	return finishReply(dst, start, h)
}

// AppendDenialReply appends a pre-commit denial: status = code, empty
// body (§1.4).
func AppendDenialReply(dst []byte, h *ReplyHeader, code ErrorCode) []byte {
	h.Status = code
	h.Size = HeaderSize
	return h.AppendTo(dst)
}

func finishReply(dst []byte, start int, h *ReplyHeader) ([]byte, error) {
	size := len(dst) - start
	if size > MaxFrameSize {
		return dst[:start], fmt.Errorf("%w: reply of %d bytes", ErrBadFrameSize, size)
	}
	if h.Status != ErrorCodeOK && size != HeaderSize {
		return dst[:start], fmt.Errorf("%w: status %d with a body", ErrBadHeader, uint32(h.Status))
	}
	h.Size = uint32(size)
	h.Encode((*[HeaderSize]byte)(dst[start : start+HeaderSize]))
	return dst, nil
}
