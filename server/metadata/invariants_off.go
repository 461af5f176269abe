//go:build !invariants

package metadata

// invariantsEnabled is false in release builds: the whole-state checks
// compile away.
const invariantsEnabled = false
