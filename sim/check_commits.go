package sim

import (
	"encoding/binary"
	"fmt"

	"github.com/stratabroker/strata/vsr"
	"github.com/zeebo/xxh3"
)

// commitScanOpsMax bounds the ops one Scan compares (after a restart only
// the newest ones can still be in the journal anyway).
const commitScanOpsMax = 4096

// commitDigest identifies the content of a committed op: its operation,
// timestamp and body.
type commitDigest struct {
	operation uint8
	timestamp uint64
	body      uint64 // xxh3 of the body
	client    uint64
	request   uint64
}

// CommitChecker checks commit-prefix agreement: no two replicas ever apply
// different operations at the same op number, and each replica applies ops
// in increasing order (ops that carry no state machine work, such as
// session registrations, are skipped by Apply). It remembers every op ever
// committed, so a committed op that is later lost and reassigned is caught
// too. Besides the applied content it compares the prepare checksums that
// replicas report through vsr.Replica.Committed, which covers every op.
type CommitChecker struct {
	committed map[uint64]commitDigest
	states    map[uint64]stateDigest // state machine state after each op
	checksums map[uint64]vsr.Uint128
	// commitView is the view of the replica that first applied each op (at
	// or after the view the op was committed in); opByView is the highest
	// op first applied in each view.
	commitView  map[uint64]uint64
	opByView    map[uint64]uint64
	lastApplied []uint64 // per replica; 0 when unknown (fresh or restored)
	known       []bool
	scanned     []uint64 // per replica: ops up to here were compared
	// CommitMax is the highest op any replica applied.
	CommitMax uint64
	violation error
}

// NewCommitChecker returns a checker for replicaCount replicas.
func NewCommitChecker(replicaCount int) *CommitChecker {
	return &CommitChecker{
		committed:   make(map[uint64]commitDigest),
		lastApplied: make([]uint64, replicaCount),
		known:       make([]bool, replicaCount),
		checksums:   make(map[uint64]vsr.Uint128),
		states:      make(map[uint64]stateDigest),
		commitView:  make(map[uint64]uint64),
		opByView:    make(map[uint64]uint64),
		scanned:     make([]uint64, replicaCount),
	}
}

func digestOf(operation uint8, timestamp uint64, body []byte) commitDigest {
	d := commitDigest{operation: operation, timestamp: timestamp, body: xxh3.Hash(body)}
	if len(body) >= requestBodySize {
		d.client = binary.LittleEndian.Uint64(body[0:])
		d.request = binary.LittleEndian.Uint64(body[8:])
	}
	return d
}

// OnApply records that replica, in view, applied op.
func (c *CommitChecker) OnApply(replica int, view, op uint64, d commitDigest) {
	if c.violation != nil {
		return
	}
	if c.known[replica] && op <= c.lastApplied[replica] {
		c.violation = fmt.Errorf("replica %d applied op %d after op %d", replica, op, c.lastApplied[replica])
		return
	}
	c.known[replica] = true
	c.lastApplied[replica] = op
	if op > c.CommitMax {
		c.CommitMax = op
	}
	if prev, ok := c.committed[op]; ok {
		if prev != d {
			c.violation = fmt.Errorf("replica %d committed op %d as operation=%d client=%d request=%d timestamp=%d, but op %d was committed before as operation=%d client=%d request=%d timestamp=%d",
				replica, op, d.operation, d.client, d.request, d.timestamp, op, prev.operation, prev.client, prev.request, prev.timestamp)
		}
		return
	}
	c.committed[op] = d
	c.commitView[op] = view
	if op > c.opByView[view] {
		c.opByView[view] = op
	}
}

// committedBefore returns the highest op first applied in a view before
// view (so committed in a view before it), if any.
func (c *CommitChecker) committedBefore(view uint64) (bool, uint64) {
	found, op := false, uint64(0)
	for v, o := range c.opByView {
		if v < view && (!found || o > op) {
			found, op = true, o
		}
	}
	return found, op
}

// stateDigest summarizes a replicated log: its length and state hash.
type stateDigest struct {
	count int
	hash  uint64
}

// OnState records replica's state machine state right after it applied op;
// every replica must hold the same state after the same op.
func (c *CommitChecker) OnState(replica int, op uint64, s stateDigest) {
	if c.violation != nil {
		return
	}
	if prev, ok := c.states[op]; ok && prev != s {
		c.violation = fmt.Errorf("replica %d holds %d values (hash %016x) after applying op %d, another replica held %d values (hash %016x) after the same op",
			replica, s.count, s.hash, op, prev.count, prev.hash)
		return
	}
	c.states[op] = s
}

// OnReset forgets replica's position (it restarted or restored a
// checkpoint); its next applied op may be anything.
func (c *CommitChecker) OnReset(replica int) {
	c.known[replica] = false
	c.scanned[replica] = 0
}

// Scan compares the checksums of the ops replica committed since the last
// scan with those every other replica committed at the same ops.
func (c *CommitChecker) Scan(replica int, r *vsr.Replica) {
	if c.violation != nil {
		return
	}
	commit := r.CommitNumber()
	op := c.scanned[replica] + 1
	if commit > commitScanOpsMax && op < commit-commitScanOpsMax {
		op = commit - commitScanOpsMax
	}
	for ; op <= commit; op++ {
		e, ok := r.Committed(op)
		if !ok {
			continue
		}
		if prev, seen := c.checksums[op]; seen && prev != e.Checksum {
			c.violation = fmt.Errorf("replica %d committed op %d with checksum %016x%016x (operation %d), another replica committed checksum %016x%016x",
				replica, op, e.Checksum.Hi, e.Checksum.Lo, e.Operation, prev.Hi, prev.Lo)
			return
		}
		c.checksums[op] = e.Checksum
	}
	c.scanned[replica] = commit
}

// Check returns the first violation seen, or nil.
func (c *CommitChecker) Check() error { return c.violation }
