package sim

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire"
)

// Damage to a node's segment files (the scenario zones segment-truncate
// and segment-bitflip, as in the NATS JetStream 2.12.1 analysis: block
// files truncated or bit-flipped on a minority of nodes) and the check a
// restarted node's segment loader makes of every record it reads back.

const (
	segmentTruncate = "segment-truncate"
	segmentBitFlip  = "segment-bitflip"
)

// loadSegments is what node i's segment loader does at start: it reads
// every record back and verifies it (wire.ValidateBatch: frame and batch
// checksums, lengths); the first record that fails, and every record
// after it, is unreadable, so the files are truncated at the last good
// record. The restored machine then finds its segments short of its
// flushed history (Reset) and the partition is fenced on this node, to be
// served by the replicas whose files are whole, never served with a
// corrupted or missing message.
func (w *brokerWorld) loadSegments(i int) {
	for g, s := range w.nodes[i].segments {
		for k, b := range s.batches {
			err := fmt.Errorf("record of %d bytes shorter than a batch header", len(b))
			if len(b) >= wire.BatchHeaderSize {
				err = wire.ValidateBatch(b, batchView(b).MessageCount())
			}
			if err != nil {
				w.logf("node %d group %d: segment record %d of %d does not verify (%v): the files are truncated before it", i, g, k, len(s.batches), err)
				s.truncateBatches(k)
				break
			}
		}
	}
}

// corrupt damages a down node's segment files of one group (st.Number):
// segment-truncate cuts the files in the middle of a record past the
// middle of the log (what a crash of a file system without ordered data
// writes, or a torn truncation, leaves); segment-bitflip flips one bit in
// the payload of the middle record (media rot the checksums must catch).
func (w *brokerWorld) corrupt(st *ScenarioStep) error {
	i, g := st.Replica, int(st.Number)
	switch st.Zone {
	case segmentTruncate, segmentBitFlip:
	default:
		return fmt.Errorf("the broker workload corrupts only %s and %s", segmentTruncate, segmentBitFlip)
	}
	if g >= w.groups {
		return fmt.Errorf("%s: no group %d (the run has %d)", st.Zone, g, w.groups)
	}
	if w.nodes[i].up {
		return fmt.Errorf("%s: node %d is up: damage its files while it is down", st.Zone, i)
	}
	s := w.nodes[i].segments[g]
	if len(s.batches) == 0 {
		return fmt.Errorf("%s: node %d holds no segment record of group %d", st.Zone, i, g)
	}
	if w.segmentsDamaged == nil {
		w.segmentsDamaged = map[[2]int]bool{}
	}
	w.segmentsDamaged[[2]int{i, g}] = true
	k := len(s.batches) / 2
	b := append([]byte(nil), s.batches[k]...)
	if st.Zone == segmentTruncate {
		b = b[:len(b)/2]
		s.truncateBatches(k)
		s.batches = append(s.batches, b)
	} else {
		b[len(b)-1] ^= 0x10 // the last payload byte of the record's last message
		s.batches[k] = b
	}
	w.logf("%s: node %d group %d: record %d of %d damaged", st.Zone, i, g, k, len(s.batches))
	return nil
}

// partition runs a partition or partition-oneway line over the nodes.
func (w *brokerWorld) partition(st *ScenarioStep) {
	side := make([]int, w.n)
	for i := range side {
		side[i] = -1
	}
	for _, i := range st.SideA {
		side[i] = 0
	}
	for _, i := range st.SideB {
		side[i] = 1
	}
	w.logf("partition %v (one way %v)", side, st.Command == "partition-oneway")
	w.network.Partition(side, st.Command == "partition-oneway")
}

// checkExpectation evaluates a numeric expectation of a broker scenario
// now: crashes, power-losses, view (the highest view of any group on a
// node that is up), completed (acknowledged sends so far), committed (the
// lowest, over the groups, of the highest op committed).
func (w *brokerWorld) checkExpectation(e *Expectation) (string, error) {
	var actual int64
	switch e.Subject {
	case "crashes":
		actual = int64(w.counters.Crashes)
	case "power-losses":
		actual = int64(w.counters.PowerLosses)
	case "view":
		for i := range w.nodes {
			for g := 0; g < w.groups; g++ {
				if h := w.host(i, g); h != nil {
					actual = max(actual, int64(h.Replica().View()))
				}
			}
		}
	case "completed":
		for _, e := range w.history.entries {
			if e.op == brokerSend && e.done && e.outcome == outcomeOK {
				actual++
			}
		}
	case "committed":
		actual = -1
		for g := 0; g < w.groups; g++ {
			if c := int64(w.commitMax[g]); actual < 0 || c < actual {
				actual = c
			}
		}
	default:
		return "", fmt.Errorf("the broker workload checks outcome=, violation=, crashes, power-losses, view, completed and committed, not %s", e.Subject)
	}
	if e.Holds(actual) {
		return "", nil
	}
	return fmt.Sprintf("%s is %d, expected %s%d", e.Subject, actual, e.Op, e.Value), nil
}

// checkNoDivergence is the end-of-run check of a group whose durability
// checks are waived (a replicated topic that lost more than f nodes'
// memory at once, which may lose acknowledged messages, as the durability
// seed allows): its replicas still never diverge. Every core replica that
// serves the group and has converged with its primary (same view, same
// commit) holds the primary's message at every offset both hold.
func (w *brokerWorld) checkNoDivergence(g int) {
	p := w.primaryOf(g)
	if p < 0 || w.host(p, g).Err() != nil {
		return
	}
	ph := w.host(p, g)
	offs, ids := w.serveLog(p, g, 0, ^uint32(0))
	at := make(map[uint64]uint64, len(offs))
	for k, off := range offs {
		at[off] = ids[k]
	}
	for _, i := range w.core {
		h := w.host(i, g)
		if i == p || h == nil || h.Err() != nil || h.Replica().View() != ph.Replica().View() ||
			h.Replica().CommitNumber() != ph.Replica().CommitNumber() {
			continue
		}
		o, other := w.serveLog(i, g, 0, ^uint32(0))
		for k, off := range o {
			if id, ok := at[off]; ok && id != other[k] {
				w.failAs("divergence", fmt.Errorf("group %d (durability waived: %s): core node %d serves message %x at offset %d, the primary (node %d) message %x",
					g, w.waived(g), i, other[k], off, p, id))
				return
			}
		}
	}
}
