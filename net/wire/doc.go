// Package wire is Strata's codec for Apache Iggy's client binary protocol,
// the VSR generation with 256-byte headers and packed protocol version
// 0.11.0, byte-compatible with /work/shared/PROTOCOL.md.
//
// Everything here is a plain struct with a hand-written little-endian
// layout. Encoders append to a caller-provided slice (AppendTo) so hot
// paths do not allocate; decoders take a []byte, never panic on any input
// and return one of the package's sentinel errors wrapped with %w.
//
// The package is imported by the pure consensus core, so it touches no OS
// facility: no os, net, syscall, sync or time imports, no global
// randomness (purity_test.go checks). Frames are read through io.Reader.
//
// Map of the package:
//
//   - codes.go, operation.go: command codes (CodeCreateStream...), operation
//     bytes (OpCreateStream...), LookupCode, OperationForCode,
//     ReplyOperationForCode, ResultReplyOperation, Operation.IsResultFramed.
//   - errorcode.go, errorcode_table.go: ErrorCode (a Go error) and every §8
//     code as a constant (ErrStreamIdNotFound = 1009...); CodeOf(err) gives
//     the status a server reports for any error of this package.
//   - eviction.go, version.go: EvictionReason and its SDK error mapping;
//     ProtocolVersion (11264), AcceptsProtocolVersion, ServerVersion.
//   - header.go, frame.go, build.go, reply.go: RequestHeader, ReplyHeader,
//     EvictionHeader, ValidateRequest, ReadFrame, RequestChecksum,
//     NewRequestHeader, AppendRequest, the Append*Reply builders and
//     DecodeServerFrame (client side, evictions as *EvictionError).
//   - identifier.go, consumer.go, tlv.go, options.go, permissions.go,
//     result.go: the shared encodings of §4 (Identifier, Consumer,
//     Partitioning, PollingStrategy, AckLevel, TLV blocks, Options,
//     Permissions, result sections and ReplyPayload).
//   - records_*.go: what the server returns (StreamDetails, TopicDetails,
//     UserDetails, ConsumerGroupDetails, ClientDetails, Stats,
//     ClusterMetadata, DescribeOptionsReply, RegisterReply,
//     SendMessagesReply, PolledMessagesHeader...).
//   - requests*.go: one type per command (CreateStreamRequest,
//     PollMessagesRequest, SendMessagesRequest...), all implementing
//     Request; NewRequest(code) for dispatch; ParseLogin for Register
//     bodies.
//   - topic_options.go: create/update topic option validation and
//     resolution (ParseTopicOptions, ParseTopicUpdateOptions), including
//     Strata's durability keys; sizes and durations given as strings are
//     read by net/units, as everywhere else.
//
// The message batch format (PROTOCOL.md §6.1-6.3) lives in batch*.go; the
// request and record types here carry batches as opaque byte slices.
package wire
