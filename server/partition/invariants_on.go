//go:build invariants

package partition

// invariantsEnabled turns on the expensive whole-state checks after every
// Apply; `make test` builds with -tags invariants.
const invariantsEnabled = true
