package sim

import "github.com/stratabroker/strata/vsr"

// openReplica starts replica i's Open; an error leaves the replica failed
// (recorded for the liveness report) until its next restart.
func (c *Cluster) openReplica(i int, r *vsr.Replica) {
	c.openErrors[i] = nil
	c.opening[i] = true
	r.Open(func(err error) {
		if c.replicas[i] == r {
			c.opening[i] = false
		}
		if err != nil && c.replicas[i] == r {
			c.openErrors[i] = err
			c.logf("replica %d failed to open: %v", i, err)
		}
	})
}
