// Package metadata is Strata's deterministic metadata state machine: streams,
// topics, partitions (as metadata), users, permissions and personal access
// tokens. Every change is an encoded operation (ops.go) applied by
// Machine.Apply in commit order; the same operations travel through the
// metadata journal and, later, VSR. Reads are served from the applied state
// through the read helpers (reads.go).
//
// The package is pure: no OS access, no goroutines, no wall clock, no global
// randomness, and no map iteration order reaches an output.
package metadata
