//go:build !race

package iofs

const raceEnabled = false
