package client

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"

	"github.com/stratabroker/strata/net/wire"
)

// Sentinel errors of the client. Failures reported by the server are
// *Error values instead; both are tested with errors.Is.
var (
	// ErrClosed: the Client was closed by Close.
	ErrClosed = errors.New("client: closed")
	// ErrConnectionLost: the connection could not be established, broke,
	// or was abandoned because a request was cancelled mid-flight; the
	// outcome of a request in flight is unknown. The next call dials again.
	// A connection that was never made is also ErrCannotConnect (a
	// *DialError).
	ErrConnectionLost = errors.New("client: connection lost")
	// ErrCannotConnect: no connection could be made (nothing listens, the
	// handshake failed, the dial timed out); nothing was sent. Always a
	// *DialError, which also matches ErrConnectionLost.
	ErrCannotConnect = errors.New("client: cannot connect")
	// ErrProtocol: the server sent a frame that breaks PROTOCOL.md (wrong
	// command, request echo mismatch, undecodable body). The connection is
	// dropped.
	ErrProtocol = errors.New("client: protocol violation by the server")
	// ErrNotLoggedIn: the operation needs a session and none is bound.
	ErrNotLoggedIn = errors.New("client: not logged in")
	// ErrInvalidArgument: an argument cannot be encoded (empty name, too
	// many messages, payload too large...).
	ErrInvalidArgument = errors.New("client: invalid argument")
	// ErrTransientRetriesExhausted: the server kept answering 57/58.
	ErrTransientRetriesExhausted = errors.New("client: transient rejections exhausted retries")
	// ErrNotFound: a single-object read found nothing (the server answers
	// "not found" with an empty body, PROTOCOL.md §13 item 10).
	ErrNotFound = errors.New("client: not found")
)

// DialError is a connection that could not be made. errors.Is matches
// ErrCannotConnect and ErrConnectionLost; Unwrap gives the dial's cause.
type DialError struct {
	// Address is the host:port dialled.
	Address string
	// Transport is the transport it was dialled over.
	Transport Transport
	// Err is the cause (a *net.OpError, a TLS or QUIC handshake error,
	// context.DeadlineExceeded...).
	Err error
}

// Error returns e.g. "cannot connect to 127.0.0.1:1 over tcp: connection
// refused".
func (e *DialError) Error() string {
	return "cannot connect to " + e.Address + " over " + string(e.Transport) + ": " + dialCause(e.Err)
}

// Unwrap returns the cause.
func (e *DialError) Unwrap() error { return e.Err }

// Is matches ErrCannotConnect and ErrConnectionLost.
func (e *DialError) Is(target error) bool {
	return target == ErrCannotConnect || target == ErrConnectionLost
}

// dialCause words a dial failure without the address the DialError
// already names: "connection refused", "timed out".
func dialCause(err error) string {
	var op *net.OpError
	var sys *os.SyscallError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.As(err, &sys):
		return sys.Err.Error()
	case errors.As(err, &op) && op.Err != nil:
		return op.Err.Error()
	}
	return err.Error()
}

// Error is a failure the server reported: a Reply status, a committed
// result code, or an error implied by an eviction (PROTOCOL.md §1.5).
// errors.Is(err, wire.ErrStreamIdNotFound) matches on Code.
type Error struct {
	// Code is the protocol error code.
	Code wire.ErrorCode
	// Operation is the request's operation.
	Operation wire.Operation
	// Command is the command code the request carried (§3.2).
	Command uint32
	// Eviction is the eviction reason when the error came from an
	// Eviction frame, else 0.
	Eviction uint8
}

// Error returns e.g. "stream not found (1009 StreamIdNotFound)".
func (e *Error) Error() string {
	return describeCode(e.Code) + " (" + strconv.FormatUint(uint64(e.Code), 10) + " " + e.Code.String() + ")"
}

// Is reports whether target is e's code, or another *Error with the same
// code.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case wire.ErrorCode:
		return t == e.Code
	case *Error:
		return t.Code == e.Code
	}
	return false
}

// Unwrap returns the code, so errors.As(err, &wire.ErrorCode) works.
func (e *Error) Unwrap() error { return e.Code }

// CodeOf returns the protocol error code carried by err, or 0 when err is
// not a server-reported failure.
func CodeOf(err error) wire.ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return wire.ErrorCodeOK
}

// describeCode gives the human phrase for the common codes of §8.
func describeCode(c wire.ErrorCode) string {
	switch c {
	case wire.ErrStreamIdNotFound, wire.ErrStreamNameNotFound:
		return "stream not found"
	case wire.ErrTopicIdNotFound, wire.ErrTopicNameNotFound:
		return "topic not found"
	case wire.ErrPartitionNotFound:
		return "partition not found"
	case wire.ErrConsumerGroupIdNotFound, wire.ErrConsumerGroupNameNotFound:
		return "consumer group not found"
	case wire.ErrResourceNotFound:
		return "resource not found"
	case wire.ErrStreamNameAlreadyExists:
		return "stream name already exists"
	case wire.ErrTopicNameAlreadyExists:
		return "topic name already exists"
	case wire.ErrUserAlreadyExists:
		return "user already exists"
	case wire.ErrPersonalAccessTokenAlreadyExists:
		return "personal access token already exists"
	case wire.ErrConsumerGroupNameAlreadyExists:
		return "consumer group name already exists"
	case wire.ErrUnauthenticated:
		return "not authenticated"
	case wire.ErrUnauthorized:
		return "permission denied"
	case wire.ErrInvalidCredentials:
		return "invalid credentials"
	case wire.ErrInvalidPersonalAccessToken:
		return "invalid personal access token"
	case wire.ErrInvalidCommand:
		return "invalid command"
	case wire.ErrInvalidFormat:
		return "invalid format"
	case wire.ErrFeatureUnavailable:
		return "feature unavailable"
	case wire.ErrInvalidOffset:
		return "invalid offset"
	case wire.ErrConsumerOffsetNotFound:
		return "consumer offset not found"
	case wire.ErrTooManyPartitions:
		return "too many partitions"
	case wire.ErrInvalidTopicSize:
		return "invalid topic size"
	case wire.ErrUnsupportedOptionKey:
		return "unsupported option key"
	case wire.ErrInvalidOptionValue:
		return "invalid option value"
	case wire.ErrStaleClient:
		return "session evicted as stale"
	case wire.ErrIncompatibleProtocolVersion:
		return "incompatible protocol version"
	case wire.ErrTransientNotCommitted:
		return "request not committed yet"
	case wire.ErrTransientNotAccepted:
		return "request not accepted"
	case wire.ErrRequestAlreadyApplied:
		return "request already applied"
	case wire.ErrInvalidUsername:
		return "invalid username"
	case wire.ErrCannotDeleteUser:
		return "cannot delete user"
	case wire.ErrCannotChangePermissions:
		return "cannot change permissions"
	}
	return "server error"
}
