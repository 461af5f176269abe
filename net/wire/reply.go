package wire

import "fmt"

// EvictionError is what a client gets when the server answers with an
// Eviction frame instead of a Reply (§1.5). It unwraps to the ErrorCode the
// SDKs report for the reason, so errors.Is(err, ErrUnauthenticated) works.
type EvictionError struct {
	Header EvictionHeader
}

// Error describes the eviction.
func (e *EvictionError) Error() string {
	return fmt.Sprintf("wire: evicted (%v): %v", e.Header.Reason, e.Unwrap())
}

// Unwrap returns the mapped ErrorCode.
func (e *EvictionError) Unwrap() error {
	return e.Header.Reason.SDKError(e.Header.ServerProtocolVersion, e.Header.ServerProtocolVersionMin)
}

// DecodeServerFrame is the client decode order of §1.4 for one frame read
// with ReadFrame: an Eviction becomes an *EvictionError; a Reply has its
// header decoded, the body length checked against size, a non-zero status
// returned as its ErrorCode, and the result section stripped when the
// reply operation is result-framed (a committed rejection is returned as
// its ErrorCode too). payload aliases body. The caller still compares
// h.Request with the request number it sent.
func DecodeServerFrame(header, body []byte) (h ReplyHeader, payload []byte, err error) {
	switch PeekCommand(header) {
	case CommandEviction:
		var ev EvictionHeader
		if err := ev.Decode(header); err != nil {
			return ReplyHeader{}, nil, err
		}
		if len(body) != 0 {
			return ReplyHeader{}, nil, fmt.Errorf("%w: eviction with a %d-byte body", ErrBadHeader, len(body))
		}
		return ReplyHeader{}, nil, &EvictionError{Header: ev}
	case CommandReply:
		if err := h.Decode(header); err != nil {
			return ReplyHeader{}, nil, err
		}
		if int(h.Size)-HeaderSize != len(body) {
			return h, nil, fmt.Errorf("%w: size %d with a %d-byte body", ErrBadHeader, h.Size, len(body))
		}
		payload, err = ReplyPayload(h.Operation, h.Status, body)
		return h, payload, err
	}
	if len(header) < HeaderSize {
		return ReplyHeader{}, nil, fmt.Errorf("%w: header of %d bytes", ErrTruncated, len(header))
	}
	return ReplyHeader{}, nil, fmt.Errorf("%w: command %d from the server", ErrBadHeader, header[offCommand])
}
