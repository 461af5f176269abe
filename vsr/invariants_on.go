//go:build invariants

package vsr

import "fmt"

// invariants is true in builds with the invariants tag, which add the
// expensive checks.
const invariants = true

// assertInvariants checks the replica's state after every input: the cheap
// checks of assertState, and, compiled in by the invariants build tag
// (make test, strata-sim), those that cost O(slots).
func (r *Replica) assertInvariants() {
	r.assertState()
	if r.status == StatusOpening {
		return
	}
	r.log.each(func(i uint64, e *logEntry) {
		if !e.present {
			return
		}
		if e.prepare != nil && e.prepare.Checksum != e.header.Checksum {
			panic(fmt.Sprintf("vsr: slot %d holds a prepare that is not its header's", i))
		}
		if e.header.Op%r.cfg.JournalSlots != i {
			panic(fmt.Sprintf("vsr: op %d in slot %d", e.header.Op, i))
		}
		if e.header.Op > r.opPrepareMax() {
			panic(fmt.Sprintf("vsr: slot %d holds op %d beyond the journal window of checkpoint %d", i, e.header.Op, r.checkpointOp))
		}
		if e.sealed && !e.recorded {
			panic(fmt.Sprintf("vsr: op %d sealed but not recorded", e.header.Op))
		}
		if (e.sealed || e.sealWritten) && (!e.durable || e.prepare == nil) {
			panic(fmt.Sprintf("vsr: op %d sealed without a durable prepare", e.header.Op))
		}
	})
	r.assertLogChain()
	if got := r.clients.costAll(); got != r.clients.bytes {
		panic(fmt.Sprintf("vsr: client table counts %d bytes, its entries cost %d", r.clients.bytes, got))
	}
}

// assertLogChain checks that the log holds a hash chain of headers from
// the applied op to its head: no op between is missing, each names the one
// below as its parent. A primary thereby holds every op of its view, and a
// restart reloads the chain the replica acknowledged.
func (r *Replica) assertLogChain() {
	if r.status == StatusRecovering && r.op == r.commitMin {
		return
	}
	below, ok := r.header(r.commitMin)
	if !ok {
		panic(fmt.Sprintf("vsr: no header of applied op %d (checkpoint %d)", r.commitMin, r.checkpointOp))
	}
	for op := r.commitMin + 1; op <= r.op; op++ {
		e := r.log.at(op)
		if e == nil {
			panic(fmt.Sprintf("vsr: log lacks op %d between applied op %d and head %d (%s, view %d)", op, r.commitMin, r.op, r.status, r.view))
		}
		if e.header.Parent != below.Checksum {
			panic(fmt.Sprintf("vsr: op %d does not chain to op %d (applied %d, head %d)", op, op-1, r.commitMin, r.op))
		}
		below = &e.header
	}
}
