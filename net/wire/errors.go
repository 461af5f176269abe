package wire

import "errors"

// Sentinel decode errors. Every decoder in this package returns one of these
// (or an ErrorCode where PROTOCOL.md prescribes one) wrapped with %w, so
// callers test with errors.Is. CodeOf maps all of them to InvalidCommand.
var (
	// ErrTruncated: the input ended before a field was complete.
	ErrTruncated = errors.New("wire: truncated input")
	// ErrTrailingBytes: the input continues after a structure that must fill
	// its bytes exactly (a length-delimited permissions block, a record).
	// Request bodies are not such structures: bytes after their last field
	// are ignored, as by Iggy's server.
	ErrTrailingBytes = errors.New("wire: unexpected trailing bytes")
	// ErrInvalidName: a WireName or length-prefixed text is empty, too long
	// or not valid UTF-8.
	ErrInvalidName = errors.New("wire: invalid name")
	// ErrBadIdentifier: an Identifier has an unknown kind or a wrong length.
	ErrBadIdentifier = errors.New("wire: invalid identifier")
	// ErrBadConsumer: a Consumer kind other than 1 or 2.
	ErrBadConsumer = errors.New("wire: invalid consumer kind")
	// ErrBadPartitioning: a Partitioning kind/length combination not in §4.4.
	ErrBadPartitioning = errors.New("wire: invalid partitioning")
	// ErrBadPollingStrategy: a polling strategy kind not in §4.5.
	ErrBadPollingStrategy = errors.New("wire: invalid polling strategy")
	// ErrBadAckLevel: an ack level other than 0 or 1.
	ErrBadAckLevel = errors.New("wire: invalid ack level")
	// ErrBadTLV: a TLV block violates §4.7.
	ErrBadTLV = errors.New("wire: invalid TLV block")
	// ErrBadOptions: an options block violates §4.8 (non-string key,
	// duplicate key, too many pairs).
	ErrBadOptions = errors.New("wire: invalid options block")
	// ErrBadPermissions: a permissions block is malformed or its declared
	// length disagrees with its content.
	ErrBadPermissions = errors.New("wire: invalid permissions")
	// ErrBadResult: a result section is malformed.
	ErrBadResult = errors.New("wire: invalid result section")
	// ErrBadFrameSize: a header's size field is outside 256..MaxFrameSize.
	ErrBadFrameSize = errors.New("wire: frame size out of bounds")
	// ErrBadHeader: a header has the wrong command or violates its field
	// rules (§1.3-1.5, §1.8).
	ErrBadHeader = errors.New("wire: invalid header")
	// ErrBadValue: a field holds a value outside its documented set.
	ErrBadValue = errors.New("wire: invalid field value")
	// ErrBufferTooSmall: an encoder was given a fixed buffer that cannot
	// hold the output.
	ErrBufferTooSmall = errors.New("wire: buffer too small")
)
