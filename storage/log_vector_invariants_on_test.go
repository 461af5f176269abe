//go:build invariants

package storage_test

// invariantsOn reports that Append fully validates every batch.
const invariantsOn = true
