//go:build !invariants

package shard

const invariantsBuild = false
