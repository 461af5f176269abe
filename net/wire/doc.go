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
// randomness. Frames are read through io.Reader.
//
// The message batch format (PROTOCOL.md §6.1-6.3) lives in batch*.go; the
// request and record types here carry batches as opaque byte slices.
package wire
