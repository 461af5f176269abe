//go:build invariants

package server

// invariantsEnabled turns placement bugs into panics (go test -tags
// invariants).
const invariantsEnabled = true
