//go:build invariants

package sim

// InvariantsEnabled reports whether the expensive checks behind the
// invariants build tag (vsr's assertInvariants after every input) are
// compiled into this binary.
const InvariantsEnabled = true
