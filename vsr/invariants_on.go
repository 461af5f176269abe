//go:build invariants

package vsr

import "fmt"

// assertInvariants checks the replica's state after every input. It is
// compiled in by the invariants build tag (make test) and costs O(slots).
func (r *Replica) assertInvariants() {
	if r.status == StatusOpening {
		return
	}
	if r.logView > r.view {
		panic(fmt.Sprintf("vsr: log view %d above view %d", r.logView, r.view))
	}
	if r.checkpointOp > r.commitMin || r.commitMin > r.commitMax || r.commitMin > r.op {
		panic(fmt.Sprintf("vsr: checkpoint %d, commit min %d, commit max %d, op %d out of order", r.checkpointOp, r.commitMin, r.commitMax, r.op))
	}
	for i := range r.log.entries {
		e := &r.log.entries[i]
		if e.present && e.prepare != nil && e.prepare.Checksum != e.header.Checksum {
			panic(fmt.Sprintf("vsr: slot %d holds a prepare that is not its header's", i))
		}
		if e.present && e.header.Op%uint64(len(r.log.entries)) != uint64(i) {
			panic(fmt.Sprintf("vsr: op %d in slot %d", e.header.Op, i))
		}
	}
	if r.status == StatusNormal && r.isPrimaryOf(r.view) && r.logView != r.view {
		panic("vsr: normal primary with a stale log view")
	}
}
