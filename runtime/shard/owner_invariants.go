//go:build invariants

package shard

import (
	"runtime"
	"strconv"
	"sync/atomic"
)

// ownerCheck records the loop goroutine's ID so that AssertOwner can tell
// whether shard-owned state is touched from the wrong goroutine.
type ownerCheck struct {
	goroutine atomic.Uint64
}

// claim records the calling goroutine as the owner; the loop calls it once.
func (o *ownerCheck) claim() { o.goroutine.Store(currentGoroutineID()) }

func (o *ownerCheck) assertOwner() {
	owner := o.goroutine.Load()
	if owner == 0 || owner != currentGoroutineID() {
		panic("shard: shard-owned state touched outside its shard's goroutine")
	}
}

func (o *ownerCheck) assertNotOwner(what string) {
	if owner := o.goroutine.Load(); owner != 0 && owner == currentGoroutineID() {
		panic("shard: " + what + " would deadlock")
	}
}

// currentGoroutineID parses "goroutine N [" from the current stack's
// header. Slow (a microsecond), which is why only this build uses it.
func currentGoroutineID() uint64 {
	var buffer [64]byte
	header := buffer[:runtime.Stack(buffer[:], false)]
	const prefix = "goroutine "
	if len(header) < len(prefix) {
		return 0
	}
	header = header[len(prefix):]
	end := 0
	for end < len(header) && header[end] >= '0' && header[end] <= '9' {
		end++
	}
	id, err := strconv.ParseUint(string(header[:end]), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
