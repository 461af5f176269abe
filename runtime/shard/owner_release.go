//go:build !invariants

package shard

// ownerCheck is empty in release builds: ownership assertions cost nothing.
type ownerCheck struct{}

func (*ownerCheck) claim()                {}
func (*ownerCheck) assertOwner()          {}
func (*ownerCheck) assertNotOwner(string) {}
