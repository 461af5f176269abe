//go:build !invariants

package server

// invariantsEnabled is false in release builds: placement bugs are refused
// as errors instead of panicking.
const invariantsEnabled = false
