//go:build !invariants

package pool

// invariantsEnabled is false in release builds: ownership misuse is counted
// in Stats instead of panicking.
const invariantsEnabled = false
