package sim

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sort"

	"github.com/stratabroker/strata/vsr"
)

// The broker world's process faults, its liveness phase and the end of a
// run: the final reads and the checks of the whole history (broker.go
// holds the world, its nodes and their messages).

func (w *brokerWorld) randomProcessFaults() {
	p := w.params
	if p.PowerLossAllPPM > 0 && p.Durability == DurabilityPersisted && w.prng.Chance(p.PowerLossAllPPM) {
		w.counters.PowerLossesAll++
		w.logf("power loss of every node")
		for i := range w.nodes {
			w.Crash(i, true)
		}
		return
	}
	if w.prng.Chance(p.CrashPPM) && w.downCount() < DownMax(p.ReplicaCount, p.Durability) {
		i := w.prng.IntN(p.ReplicaCount)
		if w.nodes[i].up {
			w.Crash(i, w.prng.Chance(p.PowerLossPPM))
		}
	}
	if w.prng.Chance(p.RestartPPM) {
		i := w.prng.IntN(p.ReplicaCount)
		if !w.nodes[i].up {
			w.Restart(i)
		}
	}
}

// Crash stops node i: every group's host loses its memory; with powerLoss
// every group's disk and segment store also lose their unsynced writes.
func (w *brokerWorld) Crash(i int, powerLoss bool) {
	node := w.nodes[i]
	if !node.up {
		return
	}
	w.logf("crash node %d (power loss %v)", i, powerLoss)
	w.counters.Crashes++
	if powerLoss {
		w.counters.PowerLosses++
	}
	node.up = false
	node.gen++
	w.answers.ForgetNode(i)
	for g := 0; g < w.groups; g++ {
		node.hosts[g] = nil
		node.storages[g].Crash(powerLoss)
		node.segments[g].crash(powerLoss)
		w.unhealthy[g][i] = true
		w.commits[g].OnReset(i)
		if !w.params.groupPersisted(g) && (w.lostMemory[g] == "" || !w.lostAll[g]) {
			lost := 0
			for j := range w.nodes {
				if !w.nodes[j].up || w.unhealthy[g][j] {
					lost++
				}
			}
			if lost > DownMax(w.n, DurabilityReplicated) && w.lostMemory[g] == "" {
				w.lostAt[g] = w.now
				w.lostMemory[g] = fmt.Sprintf("%d of %d nodes lost group %d's memory at tick %d (replicated topic)", lost, w.n, g, w.now)
				w.logf("%s", w.lostMemory[g])
			}
			// Every node lost it in the tick that waived the checks (a
			// power loss or crash of every node), no earlier loss.
			if !w.lostAll[g] && lost == w.n && w.lostAt[g] == w.now {
				w.lostAll[g] = true
				w.logf("every node lost group %d's memory at tick %d: it restarts from the checkpoints", g, w.now)
			}
		}
	}
	for g := 0; g < w.groups; g++ {
		if w.lostMemory[g] != "" {
			// The loss the seed allows a replicated topic may reassign
			// its ops (a singleton restarts empty): commit-prefix
			// agreement starts over from here.
			w.commits[g] = NewCommitChecker(w.n)
		}
	}
	if w.meta != nil {
		w.meta.crash(i, powerLoss)
	}
	w.network.DropTo(i)
	b := binary.LittleEndian.AppendUint64(w.scratch[:0], uint64(i)|uint64(w.now)<<8|1<<63)
	_, _ = w.trace.Write(b)
}

// Restart starts crashed node i again over its storage.
func (w *brokerWorld) Restart(i int) {
	if w.nodes[i].up {
		return
	}
	w.logf("restart node %d", i)
	w.counters.Restarts++
	if err := w.start(i); err != nil {
		panic(err) // the config was valid at start-up; this is our bug
	}
}

// Liveness stops every fault, restarts a quorum core of nodes, isolates
// the others, and gives the core LivenessTicks to converge every group
// and finish every client's outstanding operation.
func (w *brokerWorld) Liveness() {
	if w.violation != nil {
		return
	}
	core := w.chooseCore()
	w.logf("liveness phase: core %v, %d ticks", core, w.params.LivenessTicks)
	w.faultsEnabled = false
	w.network.SetFaults(false)
	w.network.Heal()
	w.network.Unclog()
	for _, node := range w.nodes {
		for _, s := range node.storages {
			s.SetFaults(false)
		}
	}
	if w.meta != nil {
		for _, mn := range w.meta.nodes {
			mn.storage.SetFaults(false)
		}
		w.meta.onLiveness()
	}
	inCore := make([]bool, w.n)
	for _, i := range core {
		inCore[i] = true
		w.Restart(i)
	}
	for i := range inCore {
		if !inCore[i] {
			w.network.Isolate(i)
		}
	}
	for _, cl := range w.clients {
		cl.stopped = true
		if cl.call != nil && (cl.call.op == brokerPoll || cl.call.op == brokerReadOffset) {
			cl.call = nil // a read changed nothing: it need not finish
		}
		if cl.call != nil {
			cl.call.timeout = uint64(w.params.RequestTimeoutTicks) // the network healed: no backoff
		}
	}
	w.core = core
	t := 0
	converge := func() {
		for ; t < w.params.LivenessTicks && w.violation == nil; t++ {
			if w.livenessProblem() == "" {
				break
			}
			w.Tick()
		}
	}
	converge()
	// A core that converged may still change views: a backup's heartbeat
	// timeout runs from the last commit it heard, and one cut off from its
	// primary until the heal times out before the primary's next heartbeat
	// reaches it (seed 746: group 0's node 2, cut off from its primary
	// node 0 since tick 4708, timed out at 4808, three ticks after the
	// heal and the core's convergence, as the primary's first heartbeat
	// arrived; the view moved on past the isolated node 1). A read refused
	// because its replica left the view is retried once the core converged
	// again; one refused while its replica stayed normal in its view (a
	// read round that timed out) is a failure, and so is a core still
	// changing views after readProbeRoundsMax probes.
	for round := 1; w.violation == nil && w.livenessProblem() == ""; round++ {
		problem, viewMoved := w.probeReads()
		if problem == "" && !viewMoved && w.livenessProblem() != "" {
			// The probes were served, but the ticks they took moved a
			// group the probes do not read on: the metadata group's
			// backup timed out as the partition backups of seed 746 did
			// (seed 57949: metadata core node 1 started view 12 during
			// the probe, and the end-of-run check found it changing
			// views). The core must converge again, within the same
			// rounds.
			viewMoved = true
		}
		if !viewMoved || round >= readProbeRoundsMax {
			w.readProblem = problem
			return
		}
		w.logf("a view moved during the read probe; probing again once the core converged")
		converge()
	}
}

// readProbeRoundsMax bounds the read probes of the liveness phase: a probe
// refused because its view moved on is repeated, but a core that keeps
// changing views in a healed network is a liveness failure.
const readProbeRoundsMax = 3

// probeReads checks the read index's liveness once the core converged: a
// read at each group's core primary (Host.Read) is served within
// readProbeTicks. It returns the first group whose read was not, and
// whether every refused read was refused because its replica left the
// view it was admitted in (the caller then probes again).
func (w *brokerWorld) probeReads() (string, bool) {
	type probe struct {
		g, node  int
		answered bool
		d        vsr.Disposition
		view     uint64 // the replica's view when the read was issued
		left     bool   // the replica left that view or its normal status by the answer
	}
	w.readProbeRounds++
	var probes []*probe
	for g := 0; g < w.groups; g++ {
		if w.waived(g) != "" {
			continue
		}
		for _, i := range w.core {
			if h := w.host(i, g); h != nil && h.Replica().Primary() {
				r := h.Replica()
				pr := &probe{g: g, node: i, view: r.View()}
				probes = append(probes, pr)
				w.inputNode, w.inputGroup = i, g
				read := w.answers.OnRead(i, uint64(g), "the liveness phase's read probe", w.now, w.readTimeoutTicks(i, g))
				h.Read(func(d vsr.Disposition) {
					w.answers.OnReadDone(i, uint64(g), read, w.now)
					pr.answered, pr.d = true, d
					pr.left = r.View() != pr.view || r.Status() != vsr.StatusNormal
				})
			}
		}
	}
	pending := func() *probe {
		for _, pr := range probes {
			if !pr.answered {
				return pr
			}
		}
		return nil
	}
	for t := 0; t < readProbeTicks && pending() != nil && w.violation == nil; t++ {
		w.Tick()
	}
	if pr := pending(); pr != nil {
		return fmt.Sprintf("group %d: a read at core primary node %d was not answered within %d ticks", pr.g, pr.node, readProbeTicks), false
	}
	problem, viewMoved := "", true
	for _, pr := range probes {
		if pr.d != vsr.DispositionNone {
			if problem == "" {
				problem = fmt.Sprintf("group %d: a read at core primary node %d was refused (%s)", pr.g, pr.node, pr.d)
			}
			viewMoved = viewMoved && pr.d == vsr.DispositionViewChange && pr.left
		}
	}
	return problem, problem != "" && viewMoved
}

// readProbeTicks bounds the wait for the liveness phase's read probes:
// a read round takes a tick and a round trip of the healed network.
const readProbeTicks = 300

// chooseCore picks a quorum core of nodes, preferring ones that kept their
// memory and whose disks the fault model leaves intact. When every topic
// is persisted, memory does not matter (a down node restarts from its
// disk) and an intact disk counts more, as in the cluster's chooseCore
// under persisted durability: a faulty disk in the core with a node
// outside it is two faults of a datum, more than VSR tolerates (seed
// 15882: the core of the faulty node 0 and node 2, node 1 isolated, could
// not nack node 0's corrupt uncommitted prepare, and group 3 kept changing
// views). With a replicated topic a down node has lost its memory, which
// matters more (its recovery needs more peers than the core may hold),
// unless the topic's checks are waived already (more than f of its
// replicas lost their memory at once): then its memory does not matter
// either (seed 12641: with replicated group 1 waived, the core of the
// faulty node 0 and nodes 2 and 3, node 1 down, could not repair
// persisted group 0's committed ops 1 and 3, which only node 0's bad disk
// and node 1 held, and its commit stayed at 0 of 3). For the same reason
// a node counts as unhealthy only in a group still checked (seed 181:
// node 1, recovering in group 1, was taken over the faulty node 4, whose
// only unhealthy group was waived; group 1's core could neither recover
// node 1, with no normal primary to answer it, nor change views).
func (w *brokerWorld) chooseCore() []int {
	n := w.n
	size := max(ReplicationQuorum(n), ViewChangeQuorum(n))
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	w.prng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	persisted := true
	for g := 0; g < w.groups; g++ {
		persisted = persisted && (w.params.groupPersisted(g) || w.waived(g) != "")
	}
	rank := func(i int) int {
		r := 0
		unhealthy := false
		for g := 0; g < w.groups; g++ {
			unhealthy = unhealthy || (w.unhealthy[g][i] && w.waived(g) == "")
		}
		if persisted {
			if !w.nodes[i].up || unhealthy {
				r++
			}
			if w.params.IsStorageFaulty(i) {
				r += 2
			}
			return r
		}
		if !w.nodes[i].up {
			r += 2
		}
		if unhealthy {
			r += 2
		}
		if w.params.IsStorageFaulty(i) {
			r++
		}
		return r
	}
	sort.SliceStable(order, func(a, b int) bool { return rank(order[a]) < rank(order[b]) })
	core := append([]int(nil), order[:size]...)
	if !w.coreCanRecover(core) {
		ranked := core
		core = w.recoverableCore(order, size)
		w.logf("liveness core: the best-ranked %v leaves a recovering replica too few memoryful peers; taking %v", slices.Sorted(slices.Values(ranked)), slices.Sorted(slices.Values(core)))
	}
	sort.Ints(core)
	return core
}

// memoryless reports whether node i holds no log of group g that it may
// vote with: g's topic is replicated, g is still checked, and node i lost
// g's memory (it is down, or up and still opening or recovering).
func (w *brokerWorld) memoryless(g, i int) bool {
	if w.params.groupPersisted(g) || w.waived(g) != "" || !w.unhealthy[g][i] {
		return false
	}
	h := w.host(i, g)
	if h == nil {
		return true
	}
	st := h.Replica().Status()
	return st == vsr.StatusOpening || st == vsr.StatusRecovering
}

// coreCanRecover reports whether every checked group can converge on
// core: a replica that lost a replicated group's memory neither votes in
// its view changes nor acks until it recovered, and its recovery needs a
// view-change quorum of other replicas' answers (vsr.Replica's
// recoveryQuorum; the primary's word alone does not do without a kept
// view promise, which a restart without a disk lost). So a core holding
// such a replica must hold that many replicas of the group that kept
// their memory besides it. Each group loses the memory of at most
// DownMax of its replicas before its checks are waived, but groups lose
// different ones: with six nodes and two replicated groups, each may
// have its own two memoryless replicas, and no four nodes may be
// memoryful in both (seed 2002 at --ticks 6000: the core of nodes 0, 1,
// 2 and 4 held node 2, recovering in group 0, whose three memoryful
// peers in the core could neither answer its recovery with a quorum nor
// complete a view change of four votes without it; the op a replication
// quorum of nodes 2, 3 and 5 may have committed would be lost if they
// did).
func (w *brokerWorld) coreCanRecover(core []int) bool {
	need := min(ViewChangeQuorum(w.n), w.n-1)
	for g := 0; g < w.groups; g++ {
		lost, kept := 0, 0
		for _, i := range core {
			if w.memoryless(g, i) {
				lost++
			} else {
				kept++
			}
		}
		if lost > 0 && kept < need {
			return false
		}
	}
	return true
}

// recoverableCore returns the core of the fewest nodes, from size up, on
// which every checked group can converge (coreCanRecover), preferring
// the best-ranked nodes of order: the lowest sum of positions in order.
// Every node is such a core, as no checked group has lost the memory of
// more than DownMax replicas.
func (w *brokerWorld) recoverableCore(order []int, size int) []int {
	n := len(order)
	for k := size; k < n; k++ {
		var best []int
		bestSum := -1
		for mask := 0; mask < 1<<n; mask++ {
			if bits.OnesCount(uint(mask)) != k {
				continue
			}
			var core []int
			sum := 0
			for pos := 0; pos < n; pos++ {
				if mask&(1<<pos) != 0 {
					core = append(core, order[pos])
					sum += pos
				}
			}
			if (bestSum < 0 || sum < bestSum) && w.coreCanRecover(core) {
				best, bestSum = core, sum
			}
		}
		if best != nil {
			return best
		}
	}
	return append([]int(nil), order...)
}

// waived reports why group g's durability and liveness checks do not
// apply ("" if they do): its topic is replicated and more than f of its
// replicas lost their memory at once.
func (w *brokerWorld) waived(g int) string { return w.lostMemory[g] }

// livenessChecked reports whether the liveness phase checks group g: a
// group not waived, or a waived one whose every node lost its memory at
// once with every node in the core (see livenessProblem).
func (w *brokerWorld) livenessChecked(g int) bool {
	return w.waived(g) == "" || (w.lostAll[g] && len(w.core) == w.n)
}

// livenessProblem describes what keeps the core from having converged:
// a group whose core replicas are not all in normal status in one view
// with one primary and equal commit numbers, or a client still waiting.
func (w *brokerWorld) livenessProblem() string {
	if w.readProblem != "" {
		return w.readProblem
	}
	for g := 0; g < w.groups; g++ {
		// A group whose every node lost its memory at once (before any
		// other loss waived its checks) restarts from the nodes'
		// checkpoints once every node is up (vsr/restart.go): it may have
		// lost acknowledged ops, but it converges. The liveness core is
		// every node only in clusters of one or two; a core of fewer nodes
		// cannot tell that the others lost it too, and waits (unchecked).
		// The commit may end below what was committed before the loss.
		waived := w.waived(g) != ""
		if !w.livenessChecked(g) {
			continue
		}
		var view, commit uint64
		primaries := 0
		for k, i := range w.core {
			h := w.host(i, g)
			if h == nil {
				return fmt.Sprintf("group %d: core node %d is down", g, i)
			}
			r := h.Replica()
			if r.Status() != vsr.StatusNormal {
				return fmt.Sprintf("group %d: core node %d is %s (view %d op %d commit %d/%d)", g, i, r.Status(), r.View(), r.OpNumber(), r.CommitNumber(), r.CommitMax())
			}
			if r.Behind() {
				// Its commit number is the others', but its state is not
				// there yet: a replica that could not read its checkpoint
				// back (stateMissing) counts its ops applied while its
				// machine is empty until a peer's checkpoint is installed
				// (seed 79396: core backup node 0 of group 3, installing
				// the primary's checkpoint, was taken as converged and the
				// final logs' check found it holding no message).
				return fmt.Sprintf("group %d: core node %d is behind (state missing %v): it waits for a peer's checkpoint (commit %d, checkpoint %d)",
					g, i, r.StateMissing(), r.CommitNumber(), r.CheckpointOp())
			}
			if k == 0 {
				view, commit = r.View(), r.CommitNumber()
			}
			// An op above the commit is in flight (see brokerMeta's).
			if r.View() != view || r.CommitNumber() != commit || r.CommitNumber() != r.CommitMax() || r.OpNumber() != r.CommitNumber() {
				return fmt.Sprintf("group %d: core node %d at view %d op %d commit %d/%d, node %d at view %d commit %d", g, i, r.View(), r.OpNumber(), r.CommitNumber(), r.CommitMax(), w.core[0], view, commit)
			}
			if r.Primary() {
				primaries++
				if !h.Serving() {
					return fmt.Sprintf("group %d: core primary node %d cannot serve reads (behind: %v, commit %d/%d)", g, i, r.Behind(), r.CommitNumber(), r.CommitMax())
				}
			}
		}
		if primaries != 1 {
			return fmt.Sprintf("group %d: %d primaries in the core", g, primaries)
		}
		if !waived && commit < w.commitMax[g] {
			return fmt.Sprintf("group %d: core commit %d below op %d, which a replica committed before", g, commit, w.commitMax[g])
		}
	}
	if w.meta != nil {
		if p := w.meta.livenessProblem(); p != "" {
			return p
		}
	}
	for _, cl := range w.clients {
		// A client of a group whose liveness is checked must finish its
		// operation, also when the group is waived but restarts from its
		// checkpoints: its request is still in flight and would move the
		// group on after the check passed (seed 3999: the read probes ran
		// while the restarted group 1 prepared a client's ops 1 and 2, and
		// the end-of-run check found its primary a commit ahead).
		if cl.call != nil && w.livenessChecked(cl.call.group) {
			return fmt.Sprintf("client %d still waits for its %s to group %d (request %d, first sent at tick %d)",
				cl.index, brokerOpNames[cl.call.op], cl.call.group, cl.call.request, cl.call.firstTick)
		}
	}
	return ""
}

// finish runs the end-of-run checkers and fills res.
func (w *brokerWorld) finish(res *Result) {
	w.fill(res)
	if w.violation != nil {
		res.Outcome = Outcome{Kind: OutcomeSafety, Checker: w.violationKind, Detail: w.violation.Error()}
		return
	}
	if w.core != nil {
		if p := w.livenessProblem(); p != "" {
			res.Outcome = Outcome{Kind: OutcomeLiveness, Checker: "liveness", Detail: p + w.summary()}
			return
		}
		w.readFinalLogs()
		if w.violation != nil {
			res.Outcome = Outcome{Kind: OutcomeSafety, Checker: w.violationKind, Detail: w.violation.Error()}
			return
		}
	}
	if checker, err := w.check(); err != nil {
		res.Outcome = Outcome{Kind: OutcomeSafety, Checker: checker, Detail: err.Error()}
	}
}

// readFinalLogs reads, for every group, the log its core primary serves,
// and checks that every core replica's applied log agrees with it.
func (w *brokerWorld) readFinalLogs() {
	w.finalLogs = make([][]uint64, w.groups)
	for g := 0; g < w.groups; g++ {
		if w.waived(g) != "" {
			w.checkNoDivergence(g) // broker_segment_faults.go
			continue
		}
		// The reader: the primary, or, if its partition is fenced (its
		// segments miss history), another core replica that is not.
		p := w.primaryOf(g)
		if p < 0 {
			continue
		}
		if w.host(p, g).Err() != nil {
			p = -1
			for _, i := range w.core {
				if h := w.host(i, g); h != nil && h.Err() == nil {
					p = i
					break
				}
			}
			if p < 0 {
				w.failAs("fenced", fmt.Errorf("group %d: every core replica fenced the partition (%s): none can serve it", g, w.fenced[g]))
				return
			}
		}
		offs, ids := w.serveLog(p, g, 0, ^uint32(0))
		for k, off := range offs {
			if off != uint64(k) {
				w.failAs("durability", fmt.Errorf("group %d: node %d serves offset %d (message %x) as its message %d: its log has a hole below (first unflushed %s, flushed segments end at %d)",
					g, p, off, ids[k], k, firstUnflushed(w.host(p, g).View()), w.nodes[p].segments[g].end()))
				return
			}
		}
		w.finalLogs[g] = ids
		for _, i := range w.core {
			if i == p || w.host(i, g).Err() != nil {
				continue // a fenced replica serves nothing
			}
			offsets, other := w.serveLog(i, g, 0, ^uint32(0))
			for k := range other {
				if offsets[k] != uint64(k) || k >= len(ids) || other[k] != ids[k] {
					w.failAs("durability", fmt.Errorf("group %d: core node %d serves message %d at offset %d, the primary (node %d) serves %s",
						g, i, other[k], offsets[k], p, idAt(ids, offsets[k])))
					return
				}
			}
			if len(other) != len(ids) {
				w.failAs("durability", fmt.Errorf("group %d: core node %d holds %d messages, the primary (node %d) %d, at the same commit",
					g, i, len(other), p, len(ids)))
				return
			}
		}
	}
}

func firstUnflushed(v interface{ FirstUnflushedOffset() (uint64, bool) }) string {
	if off, ok := v.FirstUnflushedOffset(); ok {
		return fmt.Sprint(off)
	}
	return "none"
}

func idAt(ids []uint64, off uint64) string {
	if off < uint64(len(ids)) {
		return fmt.Sprint(ids[off])
	}
	return "nothing"
}

func (w *brokerWorld) summary() string {
	out := "\n"
	for g := 0; g < w.groups; g++ {
		out += fmt.Sprintf("group %d:", g)
		for i := range w.nodes {
			h := w.host(i, g)
			if h == nil {
				out += fmt.Sprintf(" n%d=down", i)
				continue
			}
			r := h.Replica()
			out += fmt.Sprintf(" n%d=%s/v%d/op%d/c%d/%d", i, r.Status(), r.View(), r.OpNumber(), r.CommitNumber(), r.CommitMax())
		}
		out += "\n"
	}
	return out
}

func (w *brokerWorld) fill(res *Result) {
	res.TraceHash = w.trace.Sum64()
	res.Ticks = w.now
	var committed uint64
	for g := 0; g < w.groups; g++ {
		for i := range w.nodes {
			if h := w.host(i, g); h != nil {
				committed = max(committed, h.Replica().CommitNumber())
			}
		}
	}
	res.Committed = committed
	res.Requests = len(w.history.entries)
	for _, e := range w.history.entries {
		if e.done {
			res.Completed++
		}
	}
	res.Network = w.network.Counters
	for _, node := range w.nodes {
		for _, s := range node.storages {
			res.Storage.add(s.Counters)
		}
	}
	if w.meta != nil {
		for _, mn := range w.meta.nodes {
			res.Storage.add(mn.storage.Counters)
		}
	}
	res.Process = w.counters
	for _, cl := range w.clients {
		res.Process.ClientRetries += cl.retries
	}
	var waived []string
	for g := 0; g < w.groups; g++ {
		if w.lostMemory[g] != "" {
			waived = append(waived, w.lostMemory[g])
		}
	}
	if len(waived) > 0 {
		res.DurabilityWaived = fmt.Sprint(waived)
	}
	res.broker = &brokerSummary{groups: w.groups, fenced: append([]string(nil), w.fenced...), reads: w.reads,
		answered: w.answers.Answered, forgotten: w.answers.Forgotten, waitedMax: w.answers.WaitedMax, abandoned: w.abandoned}
	if w.meta != nil {
		res.broker.meta = w.meta.counters
	}
	for _, node := range w.nodes {
		for _, sg := range node.segments {
			res.broker.segmentTransfers += sg.installs
		}
	}
	for _, e := range w.history.entries {
		if e.op == brokerPoll && e.done && len(e.ids) > 0 {
			res.broker.nonEmptyPolls++
		}
		if e.op == brokerSend && e.done && e.outcome == outcomeOK {
			res.broker.ackedSends++
		}
	}
}

// brokerSummary is what a broker run adds to its Result.
type brokerSummary struct {
	groups        int
	ackedSends    int
	nonEmptyPolls int
	fenced        []string
	reads         readCounters
	// segmentTransfers counts segment state transfers installed.
	segmentTransfers uint64
	// meta counts the metadata plane's events (broker_meta.go).
	meta metaCounters
	// answered, forgotten and waitedMax are the answers checker's counts
	// (check_answers.go); abandoned the hosts' own 57s, by group.Abandon.
	answered, forgotten, waitedMax uint64
	abandoned                      [4]uint64
}
