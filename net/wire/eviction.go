package wire

import "strconv"

// EvictionReason is the reason byte (@255) of an Eviction header, §1.5.
type EvictionReason uint8

// Eviction reasons of §1.5.
const (
	EvictReserved                EvictionReason = 0
	EvictNoSession               EvictionReason = 1
	EvictClientReleaseTooLow     EvictionReason = 2
	EvictClientReleaseTooHigh    EvictionReason = 3
	EvictInvalidRequestOperation EvictionReason = 4
	EvictInvalidRequestBody      EvictionReason = 5
	EvictInvalidRequestBodySize  EvictionReason = 6
	EvictSessionTooLow           EvictionReason = 7
	EvictSessionReleaseMismatch  EvictionReason = 8
	EvictInvalidCredentials      EvictionReason = 9
	EvictInvalidToken            EvictionReason = 10
	EvictUserInactive            EvictionReason = 11
	EvictSessionError            EvictionReason = 12
	EvictStaleClient             EvictionReason = 13
	EvictIncompatibleProtocol    EvictionReason = 14
	EvictMalformedLogin          EvictionReason = 15
	evictionReasonCount                         = 16
)

var evictionReasonNames = [evictionReasonCount]string{
	"Reserved", "NoSession", "ClientReleaseTooLow", "ClientReleaseTooHigh",
	"InvalidRequestOperation", "InvalidRequestBody", "InvalidRequestBodySize",
	"SessionTooLow", "SessionReleaseMismatch", "InvalidCredentials",
	"InvalidToken", "UserInactive", "SessionError", "StaleClient",
	"IncompatibleProtocol", "MalformedLogin",
}

// Defined reports whether r is a valid reason (1..15).
func (r EvictionReason) Defined() bool { return r > EvictReserved && r < evictionReasonCount }

// String returns the §1.5 name of r, or "EvictionReason(n)".
func (r EvictionReason) String() string {
	if r < evictionReasonCount {
		return evictionReasonNames[r]
	}
	return "EvictionReason(" + strconv.Itoa(int(r)) + ")"
}

// SDKError returns the error an SDK reports for an eviction with reason r
// (the Go SDK mapping of §1.5). For IncompatibleProtocol the window must
// be well formed (min ≠ 0 and max ≥ min); otherwise Unauthenticated.
// Undefined reasons map to InvalidCommand.
func (r EvictionReason) SDKError(versionMax, versionMin uint32) ErrorCode {
	switch r {
	case EvictNoSession, EvictSessionTooLow, EvictSessionReleaseMismatch,
		EvictUserInactive, EvictSessionError:
		return ErrUnauthenticated
	case EvictInvalidCredentials:
		return ErrInvalidCredentials
	case EvictInvalidToken:
		return ErrInvalidPersonalAccessToken
	case EvictStaleClient:
		return ErrStaleClient
	case EvictIncompatibleProtocol:
		if versionMin == 0 || versionMax < versionMin {
			return ErrUnauthenticated
		}
		return ErrIncompatibleProtocolVersion
	case EvictMalformedLogin:
		return ErrInvalidFormat
	}
	return ErrInvalidCommand
}
