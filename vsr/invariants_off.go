//go:build !invariants

package vsr

// assertInvariants is compiled out without the invariants build tag.
func (r *Replica) assertInvariants() {}
