package sim

import (
	"fmt"
	"strings"

	"github.com/stratabroker/strata/vsr"
)

// LivenessChecker decides whether the quorum core converged in the liveness
// phase: every core replica running, in normal status, holding the state
// of its checkpoint, in the same view, with the same commit number, at
// least as high as any op any replica ever committed, no client request
// outstanding and no client evicted.
type LivenessChecker struct{}

// Converged reports whether the cluster has converged.
func (LivenessChecker) Converged(c *Cluster, core []int) bool {
	return livenessProblem(c, core) == ""
}

// Check returns an error describing why the cluster has not converged.
func (LivenessChecker) Check(c *Cluster, core []int) error {
	if p := livenessProblem(c, core); p != "" {
		return fmt.Errorf("no convergence within %d ticks of the liveness phase: %s (core %v, replicas:%s)", c.params.LivenessTicks, p, core, c.ReplicaSummary())
	}
	return nil
}

func livenessProblem(c *Cluster, core []int) string {
	var problems []string
	var view, commit uint64
	for k, i := range core {
		r := c.replicas[i]
		if r == nil {
			problems = append(problems, fmt.Sprintf("replica %d down", i))
			continue
		}
		if err := c.openErrors[i]; err != nil {
			problems = append(problems, fmt.Sprintf("replica %d failed to open: %v", i, err))
			continue
		}
		if err := r.Err(); err != nil {
			problems = append(problems, fmt.Sprintf("replica %d failed: %v", i, err))
			continue
		}
		if r.Status() != vsr.StatusNormal {
			problems = append(problems, fmt.Sprintf("replica %d %s in view %d", i, r.Status(), r.View()))
		}
		if r.StateMissing() {
			// Its commit number is its checkpoint's op, but its state
			// machine is empty until a peer's checkpoint is installed.
			problems = append(problems, fmt.Sprintf("replica %d lacks the state of its checkpoint at op %d", i, r.CheckpointOp()))
		}
		if k == 0 {
			view, commit = r.View(), r.CommitNumber()
		} else if r.View() != view || r.CommitNumber() != commit {
			problems = append(problems, fmt.Sprintf("replica %d at view %d commit %d, replica %d at view %d commit %d",
				core[0], view, commit, i, r.View(), r.CommitNumber()))
		}
	}
	if len(core) > 0 && c.replicas[core[0]] != nil && commit < c.commits.CommitMax {
		problems = append(problems, fmt.Sprintf("core commit %d below op %d, which a replica committed before", commit, c.commits.CommitMax))
	}
	for _, cl := range c.clients {
		if cl.evicted {
			problems = append(problems, fmt.Sprintf("client %d evicted", cl.index))
		} else if cl.inflight != nil {
			problems = append(problems, fmt.Sprintf("client %d request %d outstanding since tick %d", cl.index, cl.inflight.Request, cl.firstSentTick))
		}
	}
	return strings.Join(problems, "; ")
}
