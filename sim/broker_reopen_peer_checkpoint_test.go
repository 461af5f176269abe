package sim

import (
	"fmt"
	"testing"

	"github.com/stratabroker/strata/server/partition"
)

// TestBrokerReopenOverPeerCheckpointOfLostOwnOp scripts the path of seed
// 2379 (scenarios/bug_broker_reopen_lost_own_checkpoint_2379.txt) in a
// quiet run of three nodes and one replicated topic: node X records its
// own descriptor checkpoint of op C and crashes before its superblock
// names it; it restarts over its durable checkpoint C0 < C, whose Reset
// cuts its segments to C0's flush frontier; the peers' durable checkpoint
// of C released the prepares above C0 from their journals, so X installs
// a peer's checkpoint of the same op C (its segments short of the peer's
// frontier until a segment transfer repairs them); X crashes once that
// install is durable and opens over the peer's checkpoint. The
// checkpoint-frontier check at open covers a node's own checkpoints
// only; keyed by {node, group, op}, it took the peer's checkpoint of C
// for X's own of two incarnations before and failed the run (a false
// safety failure). Installing a peer's checkpoint at an op clears the
// node's own record of it (checkCheckpointFrontier), and the run passes.
//
// The drawn runs that once took this path (2379, then 309 and 341) lost it
// as the simulator changed: the test drives the crashes itself and fails
// if any step of the path does not happen.
func TestBrokerReopenOverPeerCheckpointOfLostOwnOp(t *testing.T) {
	p := QuietParams(2379, 3, 4, DurabilityReplicated)
	p.UseBroker()
	p.Groups = 1
	p.PersistedGroupsMask = 0
	p.FlushMessages = 1 << 20 // checkpoints flush: three quarters of the window apart
	p.BatchMessagesMax = 2
	p.JournalSlots = 32
	p.ReadPPM = 0
	p.ThinkTicksMax = 5
	p.RequestsPerClient = 400
	const g = 0
	var steps []string
	res := runBroker(Options{Params: p}, func(w *brokerWorld) error {
		step := func(format string, args ...any) {
			s := fmt.Sprintf("tick %d: ", w.now) + fmt.Sprintf(format, args...)
			steps = append(steps, s)
			t.Log(s)
		}
		tickUntil := func(what string, limit int, done func() bool) bool {
			for range limit {
				if done() {
					return true
				}
				if w.violation != nil {
					return false
				}
				w.Tick()
			}
			if !done() {
				t.Errorf("tick %d: %s did not happen within %d ticks", w.now, what, limit)
				return false
			}
			return true
		}
		replica := func(i int) interface {
			CheckpointOp() uint64
			PendingCheckpointOp() (uint64, bool)
			Primary() bool
		} {
			return w.nodes[i].hosts[g].Replica()
		}
		setClients := func(stopped bool) {
			for _, cl := range w.clients {
				cl.stopped = stopped
			}
		}
		// 1. A backup records its own checkpoint of an op above a durable
		// one of its own, and crashes before its superblock names it.
		x, c, c0 := -1, uint64(0), uint64(0)
		if !tickUntil("a backup's own checkpoint above a durable one", 20000, func() bool {
			for i := range w.nodes {
				r := replica(i)
				op, pending := r.PendingCheckpointOp()
				if r.Primary() || !pending || r.CheckpointOp() == 0 {
					continue
				}
				if _, applied := w.observed[i][g].nextAfter[op]; applied && w.ownCheckpoints[[3]uint64{uint64(i), g, op}] {
					x, c, c0 = i, op, r.CheckpointOp()
					return true
				}
			}
			return false
		}) {
			return nil
		}
		step("node %d records its own checkpoint of op %d (durable: op %d) and crashes", x, c, c0)
		w.Crash(x, false)
		// The peers go on until their journals no longer reach back to op
		// c0+1 (X's recovery must take a checkpoint), their checkpoint
		// still that of op c; then the clients stop, so that no later
		// checkpoint replaces it.
		window := w.params.JournalSlots
		if !tickUntil("the peers' journals past op c0+window with their checkpoint at op c", 5000, func() bool {
			for i := range w.nodes {
				if i != x && (replica(i).CheckpointOp() != c || w.nodes[i].hosts[g].Replica().OpNumber() <= c0+window) {
					return false
				}
			}
			return true
		}) {
			return nil
		}
		setClients(true)
		// 2. The restart opens over the older checkpoint.
		step("the peers' checkpoints are of op %d, their journals past op %d: node %d restarts", c, c0+window, x)
		w.Restart(x)
		if !tickUntil("node x's open", 2000, func() bool { return w.nodes[x].opened[g] }) {
			return nil
		}
		if got := replica(x).CheckpointOp(); got != c0 {
			t.Errorf("node %d opened over its checkpoint of op %d, want op %d (its checkpoint of op %d must not have been durable)", x, got, c0, c)
			return nil
		}
		step("node %d opened over its checkpoint of op %d", x, c0)
		// 3. It installs a peer's checkpoint of op c.
		if !tickUntil("node x's install of a peer's checkpoint of op c", 3000, func() bool {
			op, pending := replica(x).PendingCheckpointOp()
			_, applied := w.observed[x][g].nextAfter[op]
			return pending && op == c && !applied
		}) {
			return nil
		}
		step("node %d installs a peer's checkpoint of op %d", x, c)
		if !tickUntil("the install's durability", 2000, func() bool {
			_, pending := replica(x).PendingCheckpointOp()
			return !pending && replica(x).CheckpointOp() == c
		}) {
			return nil
		}
		h := w.nodes[x].hosts[g]
		if !segmentsShort(w.observed[x][g].simSegments, h.Machine()) {
			t.Errorf("tick %d: node %d's segments already hold the peer's checkpoint's frontier", w.now, x)
			return nil
		}
		// 4. It crashes and opens over the peer's checkpoint, its segments
		// still short of that checkpoint's frontier.
		step("node %d's install of op %d is durable, its segments short of the frontier %d: it crashes and restarts", x, c, h.Machine().FlushedEnd())
		w.Crash(x, false)
		w.Restart(x)
		if !tickUntil("node x's second open", 2000, func() bool { return w.nodes[x].opened[g] || w.violation != nil }) {
			return nil
		}
		if w.violation != nil {
			return nil
		}
		if got := replica(x).CheckpointOp(); got != c {
			t.Errorf("node %d opened over its checkpoint of op %d, want the peer's of op %d", x, got, c)
			return nil
		}
		step("node %d opened over the peer's checkpoint of op %d", x, c)
		setClients(false)
		for range 2000 {
			if w.violation != nil {
				return nil
			}
			w.Tick()
		}
		w.Liveness()
		return nil
	})
	if len(steps) < 6 {
		t.Errorf("the run took %d of the path's 6 steps", len(steps))
	}
	if res.Outcome.Kind != OutcomeOK {
		t.Errorf("outcome %s", res.Outcome)
	}
}

// segmentsShort reports whether s lacks a flushed message of m: a gap or
// an end below its flush frontier (what simSegments.Reset reports as
// ErrMissingHistory, without resetting anything).
func segmentsShort(s *simSegments, m *partition.Machine) bool {
	next := m.FirstOffset()
	for _, b := range s.batches {
		v := batchView(b)
		end := v.BaseOffset() + uint64(v.MessageCount())
		if end <= next {
			continue
		}
		if v.BaseOffset() != next {
			return true
		}
		next = end
	}
	return next < m.FlushedEnd()
}
