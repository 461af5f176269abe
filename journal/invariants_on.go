//go:build invariants

package journal

// invariants turns on the expensive checks (the invariants build tag).
const invariants = true
