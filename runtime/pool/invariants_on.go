//go:build invariants

package pool

// invariantsEnabled turns ownership misuse (double release, use after
// release) into panics in the invariants build.
const invariantsEnabled = true
