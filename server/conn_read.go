package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/stratabroker/strata/net/wire"
)

// requestFrame is one request read from a client connection: header and
// body, in the connection's own buffer or in a buffer lent under the
// request budget for this request only (released by releaseRequest once
// the reply is written).
type requestFrame struct {
	header, body []byte
	budget       budgetBuffer
}

// readRequest reads one request frame from r, whose first byte has
// arrived: the 256-byte header, then, once the size is known to be
// allowed, the body. A connection with no bound session may send frames
// of at most the transport's unauthenticated_max_message_size; a larger
// size is refused before any of its body is read (nothing is allocated for
// it). A frame that fits the connection's own buffer (connFrameBufferBytes
// at most) is read there; a larger one waits for the request budget until
// deadline. The caller bounds the reads themselves with the same deadline.
func (s *Server) readRequest(c *connection, r io.Reader, bound bool, limits transportLimits, deadline time.Time) (requestFrame, error) {
	head := c.requestHead[:]
	if n, err := io.ReadFull(r, head); err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return requestFrame{}, io.EOF
		}
		return requestFrame{}, readFailure(err)
	}
	if command := wire.PeekCommand(head); command >= wire.CommandInvalidFrom {
		return requestFrame{}, fmt.Errorf("%w: command %d", wire.ErrBadHeader, command)
	}
	size := wire.PeekSize(head)
	if size < wire.HeaderSize || size > min(s.cfg.MessageBus.MaxMessageSize, wire.MaxFrameSize) {
		return requestFrame{}, fmt.Errorf("%w: size %d", wire.ErrBadFrameSize, size)
	}
	if !bound && size > limits.unauthenticatedFrameMax {
		return requestFrame{}, fmt.Errorf("%w: %d bytes, at most %d", errUnauthenticatedFrameSize, size, limits.unauthenticatedFrameMax)
	}
	var frame requestFrame
	var buf []byte
	switch {
	case int(size) <= len(c.frameBuf.data):
		buf = c.frameBuf.data
	case size <= connFrameBufferBytes:
		buf = c.frameBuf.grow(int(size))
	default:
		lent, err := s.guard.budget.lend(int(size), deadline, c.done)
		if err != nil {
			return requestFrame{}, err
		}
		frame.budget, buf = lent, lent.data
	}
	copy(buf, head)
	if _, err := io.ReadFull(r, buf[wire.HeaderSize:size]); err != nil {
		s.guard.budget.giveBack(&frame.budget)
		return requestFrame{}, readFailure(err)
	}
	frame.header, frame.body = buf[:wire.HeaderSize:wire.HeaderSize], buf[wire.HeaderSize:size:size]
	return frame, nil
}

// releaseRequest returns a request's budgeted buffer, if it had one.
func (s *Server) releaseRequest(frame *requestFrame) {
	s.guard.budget.giveBack(&frame.budget)
	frame.header, frame.body = nil, nil
}

// readFailure classifies a read error inside a frame: an end of stream is
// a truncated frame.
func readFailure(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", wire.ErrTruncated, err)
	}
	return err
}

// isTimeout reports whether err is a deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// requestDeadline is when a request whose first byte arrived at started
// must be read whole: request_read_timeout later, and before login no
// later than the idle deadline either.
func requestDeadline(bound bool, lastSeen, started time.Time, limits transportLimits) time.Time {
	deadline := started.Add(limits.requestRead)
	if idle := idleDeadline(bound, lastSeen, limits); !idle.IsZero() && idle.Before(deadline) {
		deadline = idle
	}
	return deadline
}

// idleDeadline is when an unbound connection that last completed a
// request at lastSeen is closed (zero for a bound one).
func idleDeadline(bound bool, lastSeen time.Time, limits transportLimits) time.Time {
	if bound {
		return time.Time{}
	}
	return lastSeen.Add(limits.unauthenticatedIdle)
}

// limitOf names the limit that ended a connection's read, or "" when err
// is not a limit (end of stream, malformed frame, closed socket).
func limitOf(err error, bound bool) string {
	switch {
	case errors.Is(err, errUnauthenticatedFrameSize):
		return limitUnauthenticatedSize
	case errors.Is(err, errBudgetTimeout):
		return limitInFlightBytes
	case isTimeout(err) && !bound:
		return limitUnauthenticatedIdle
	case isTimeout(err):
		return limitRequestRead
	}
	return ""
}
