package client

// Request bodies and reply records are encoded and decoded by net/wire,
// the codec the server uses (PROTOCOL.md §4, §5). The client converts its
// own types to and from net/wire's: identifiers in identifier.go,
// consumers and partitionings in messages.go, records in records.go,
// permissions in permissions.go.

import "github.com/stratabroker/strata/net/wire"

// requestBody is the body of one command: net/wire's request types, and
// sendBody for SendMessages.
type requestBody interface {
	// Code is the command code (§3.2).
	Code() wire.Code
	// AppendTo appends the encoded body to dst.
	AppendTo(dst []byte) ([]byte, error)
}
