package sim

import "fmt"

// DurabilityChecker checks that every acknowledged append survives: once
// the liveness phase has converged, every core replica's log holds each
// acknowledged value at its acknowledged position. Under persisted
// durability this must hold after any crash pattern, power loss of every
// replica included; under replicated durability it must hold whenever a
// quorum kept its memory, so the run marks itself exempt (Waive) when a
// scripted fault broke that condition.
type DurabilityChecker struct {
	waived string
}

// Waive exempts the run from the durability check, saying why.
func (c *DurabilityChecker) Waive(reason string) {
	if c.waived == "" {
		c.waived = reason
	}
}

// Waived returns the reason the check was waived, or "".
func (c *DurabilityChecker) Waived() string { return c.waived }

// Check compares the acknowledged appends of history with the logs of the
// core replicas.
func (c *DurabilityChecker) Check(history *History, coreLogs map[int][]uint64, core []int) error {
	if c.waived != "" {
		return nil
	}
	for i := range history.Entries {
		e := &history.Entries[i]
		if !e.Completed || e.Kind != HistoryAppend {
			continue
		}
		for _, replica := range core {
			values := coreLogs[replica]
			if e.Position >= uint64(len(values)) {
				return fmt.Errorf("acknowledged append of value %d at position %d (op %d, client %d request %d) is missing on replica %d, whose log has %d values",
					e.Argument, e.Position, e.Op, e.Client, e.Request, replica, len(values))
			}
			if values[e.Position] != e.Argument {
				return fmt.Errorf("acknowledged append of value %d at position %d (op %d, client %d request %d) holds value %d on replica %d",
					e.Argument, e.Position, e.Op, e.Client, e.Request, values[e.Position], replica)
			}
		}
	}
	return nil
}
