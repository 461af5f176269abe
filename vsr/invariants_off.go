//go:build !invariants

package vsr

// invariants is true in builds with the invariants tag, which add the
// expensive checks.
const invariants = false

// assertInvariants runs the cheap checks only without the invariants
// build tag.
func (r *Replica) assertInvariants() { r.assertState() }

// assertLogChain is compiled out without the invariants build tag.
func (r *Replica) assertLogChain() {}
