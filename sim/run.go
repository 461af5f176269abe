package sim

import (
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/vsr"
)

// OutcomeKind classifies the end of a run.
type OutcomeKind uint8

const (
	// OutcomeOK means every checker passed.
	OutcomeOK OutcomeKind = iota
	// OutcomeSafety means a safety checker failed.
	OutcomeSafety
	// OutcomeLiveness means the quorum core did not converge in time.
	OutcomeLiveness
	// OutcomeCrash means the code under test panicked.
	OutcomeCrash
)

var outcomeNames = [...]string{"ok", "safety", "liveness", "crash"}

// String names k as scenario files and reports spell it.
func (k OutcomeKind) String() string {
	if int(k) < len(outcomeNames) {
		return outcomeNames[k]
	}
	return fmt.Sprintf("outcome(%d)", k)
}

// ExitCode returns strata-sim's exit status for k.
func (k OutcomeKind) ExitCode() int {
	switch k {
	case OutcomeSafety:
		return 2
	case OutcomeLiveness:
		return 3
	case OutcomeCrash:
		return 4
	}
	return 0
}

// Outcome is how a run ended: its kind, the checker that failed and why.
type Outcome struct {
	Kind    OutcomeKind
	Checker string // commits, exactly-once, send, corruption, linearizability, durability, liveness, client, panic
	Detail  string
}

// String renders the outcome on one line.
func (o Outcome) String() string {
	if o.Kind == OutcomeOK {
		return "ok"
	}
	return fmt.Sprintf("%s (%s): %s", o.Kind, o.Checker, o.Detail)
}

// Result is the report of one run.
type Result struct {
	Params    Params
	Outcome   Outcome
	TraceHash uint64
	Ticks     uint64
	Committed uint64 // highest op applied by any replica
	Completed int    // client operations with a response
	Requests  int    // client operations invoked
	Network   NetworkCounters
	Storage   StorageCounters
	Process   RunCounters
	// DurabilityWaived says why the durability check did not apply, if so.
	DurabilityWaived string
	history          *History
	linearizability  *LinearizabilityChecker
	// broker is set by a broker workload run.
	broker *brokerSummary
}

// WriteVisualization writes porcupine's HTML view of the run's history to
// dir/name (after the linearizability check ran).
func (r *Result) WriteVisualization(dir, name string) (string, error) {
	if r.history == nil {
		return "", nil // a broker run: its history is checked by broker_check.go
	}
	if r.linearizability == nil {
		lc := &LinearizabilityChecker{}
		_ = lc.Check(r.history) // only for the visualization; the verdict is in Outcome
		r.linearizability = lc
	}
	return r.linearizability.WriteVisualization(dir, name)
}

// Print writes the report: outcome, counters and trace hash.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "outcome: %s\n", r.Outcome)
	fmt.Fprintf(w, "ticks=%d committed=%d requests=%d completed=%d\n", r.Ticks, r.Committed, r.Requests, r.Completed)
	n := &r.Network
	fmt.Fprintf(w, "network: sent=%d delivered=%d dropped_loss=%d dropped_partition=%d dropped_capacity=%d dropped_down=%d duplicated=%d reordered=%d corrupted=%d partitions=%d clogs=%d\n",
		n.Sent, n.Delivered, n.DroppedLoss, n.DroppedPartition, n.DroppedCapacity, n.DroppedDown, n.Duplicated, n.Reordered, n.Corrupted, n.Partitions, n.Clogs)
	s := &r.Storage
	fmt.Fprintf(w, "storage: reads=%d writes=%d syncs=%d torn_writes=%d latent_sectors=%d (superblock %d, checkpoint %d) read_errors=%d misdirected=%d (superblock %d, checkpoint %d) stale_reads=%d (checkpoint %d) unsynced_lost=%d\n",
		s.Reads, s.Writes, s.Syncs, s.TornWrites, s.LatentSectors, s.LatentSuperblock, s.LatentCheckpoint, s.ReadErrors,
		s.MisdirectedWrite, s.MisdirectedSuperblock, s.MisdirectedCheckpoint, s.StaleReads, s.StaleCheckpointReads, s.UnsyncedLost)
	p := &r.Process
	fmt.Fprintf(w, "processes: crashes=%d power_losses=%d power_losses_all=%d restarts=%d evictions=%d client_retries=%d\n",
		p.Crashes, p.PowerLosses, p.PowerLossesAll, p.Restarts, p.Evictions, p.ClientRetries)
	fmt.Fprintf(w, "timed crashes:")
	for k := timedKind(0); k < timedKindCount; k++ {
		fmt.Fprintf(w, " %s=%d", strings.ReplaceAll(timedKindNames[k], " ", "_"), p.Timed[k])
	}
	fmt.Fprintf(w, "\nprotocol: view_changes=%d recoveries=%d repair_requests=%d checkpoints=%d checkpoint_chunks=%d state_transfers=%d corrupted_rejected=%d checked_prepare_oks=%d checked_do_view_changes=%d checked_view_logs=%d\n",
		p.ViewChanges, p.Recoveries, p.RepairRequests, s.CheckpointWrites, p.CheckpointChunks, p.StateTransfers, p.CorruptedRejected,
		p.CheckedPrepareOks, p.CheckedDoViewChanges, p.CheckedViewLogs)
	if b := r.broker; b != nil {
		fmt.Fprintf(w, "broker: groups=%d acked_sends=%d nonempty_polls=%d dispositions=%d segment_transfers=%d\n", b.groups, b.ackedSends, b.nonEmptyPolls, p.Dispositions, b.segmentTransfers)
		rc := &b.reads
		fmt.Fprintf(w, "broker reads: served_at_once=%d served_after_round=%d refused=%d refused_after_wait=%d\n",
			rc.servedAtOnce, rc.servedAfterRound, rc.refused, rc.refusedAfterWait)
		fmt.Fprintf(w, "broker answers: answered=%d forgotten=%d waited_max=%d host_timed_out=%d host_left_view=%d host_failed=%d\n",
			b.answered, b.forgotten, b.waitedMax, b.abandoned[group.AbandonTimeout], b.abandoned[group.AbandonLeftView], b.abandoned[group.AbandonFailed])
		if r.Params.Metadata != 0 {
			mc := &b.meta
			fmt.Fprintf(w, "broker metadata: ops_committed=%d retried=%d partition_requests_without_topic=%d topics_deleted=%d\n",
				mc.commits, mc.retried, mc.gated, mc.deleted)
		}
		for g, f := range b.fenced {
			if f != "" {
				fmt.Fprintf(w, "broker: group %d fenced (first fence; a segment transfer may have repaired it): %s\n", g, f)
			}
		}
	}
	if r.DurabilityWaived != "" {
		fmt.Fprintf(w, "durability check waived: %s\n", r.DurabilityWaived)
	}
	fmt.Fprintf(w, "trace_hash=%016x\n", r.TraceHash)
}

// SwarmGCPercent is the garbage collector setting (debug.SetGCPercent)
// strata-sim swarm runs with: a run allocates a lot of short-lived memory
// (messages, read buffers) but holds little, so collecting less often
// saves CPU at a few megabytes of heap per worker.
const SwarmGCPercent = 400

// Options configure Run.
type Options struct {
	Params Params
	Bugs   vsr.BugSet
	// Verbose, if not nil, receives a line per fault and phase change.
	Verbose io.Writer
	// TraceMessages also prints every delivered message to Verbose.
	TraceMessages bool
}

// Run simulates one seed: a safety phase of Params.SafetyTicks with random
// faults, then a liveness phase, then the checkers. It runs entirely on the
// calling goroutine and recovers a panic of the code under test as
// OutcomeCrash.
func Run(opts Options) *Result {
	if opts.Params.Workload == WorkloadBroker {
		return runBroker(opts, nil)
	}
	return runScript(opts, nil)
}

// runScript is Run with an optional scripted body replacing the random
// safety phase (scenarios). script returns a failed expectation as an
// error.
func runScript(opts Options, script func(c *Cluster, res *Result) error) (res *Result) {
	params := opts.Params
	params.normalize()
	res = &Result{Params: params}
	var c *Cluster
	defer func() {
		if v := recover(); v != nil {
			res.Outcome = Outcome{Kind: OutcomeCrash, Checker: "panic", Detail: fmt.Sprintf("%v\n%s", v, debug.Stack())}
			if c != nil {
				res.fill(c)
			}
		}
	}()
	var err error
	c, err = NewCluster(&params, opts.Bugs, opts.Verbose)
	if err != nil {
		res.Outcome = Outcome{Kind: OutcomeCrash, Checker: "setup", Detail: err.Error()}
		return res
	}
	c.traceMessages = opts.TraceMessages
	if script != nil {
		if err := script(c, res); err != nil {
			res.fill(c)
			res.Outcome = Outcome{Kind: OutcomeCrash, Checker: "scenario", Detail: err.Error()}
			return res
		}
	} else {
		c.logf("safety phase: %d ticks", params.SafetyTicks)
		for t := 0; t < params.SafetyTicks && c.violation == nil; t++ {
			c.Tick()
		}
		c.Liveness()
	}
	c.finish(res)
	return res
}

// Liveness runs the liveness phase: faults stop, a quorum core is chosen
// (replicas that kept their memory and healthy disks first), its crashed
// members restart, the rest are isolated, clients send no new requests,
// and the core has LivenessTicks to converge.
func (c *Cluster) Liveness() {
	if c.violation != nil {
		return
	}
	core := c.chooseCore()
	c.logf("liveness phase: core %v, %d ticks", core, c.params.LivenessTicks)
	c.faultsEnabled = false
	c.network.SetFaults(false)
	c.network.Heal()
	c.network.Unclog()
	for _, s := range c.storages {
		s.SetFaults(false)
	}
	inCore := make([]bool, c.params.ReplicaCount)
	for _, i := range core {
		inCore[i] = true
		c.Restart(i)
	}
	for i := range inCore {
		if !inCore[i] {
			c.network.Isolate(i)
		}
	}
	for _, cl := range c.clients {
		cl.stopped = true
	}
	c.core = core
	for t := 0; t < c.params.LivenessTicks && c.violation == nil; t++ {
		if (LivenessChecker{}).Converged(c, core) {
			break
		}
		c.Tick()
	}
}

// chooseCore picks max(replication quorum, view-change quorum) replicas,
// preferring (replicated) ones that kept their memory, or (persisted) ones
// whose disk the fault model leaves intact; ties are broken by a seeded
// shuffle.
func (c *Cluster) chooseCore() []int {
	n := c.params.ReplicaCount
	size := ReplicationQuorum(n)
	if q := ViewChangeQuorum(n); q > size {
		size = q
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	c.prng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	// Under replicated durability memory is what matters (a restarted
	// replica has lost it); under persisted durability the disk is.
	downWeight, faultyWeight := 2, 1
	if c.params.Durability == DurabilityPersisted {
		downWeight, faultyWeight = 1, 2
	}
	rank := func(i int) int {
		r := 0
		if c.replicas[i] == nil || c.unhealthy[i] {
			r += downWeight
		}
		if c.params.IsStorageFaulty(i) {
			r += faultyWeight
		}
		return r
	}
	sort.SliceStable(order, func(a, b int) bool { return rank(order[a]) < rank(order[b]) })
	core := append([]int(nil), order[:size]...)
	sort.Ints(core)
	return core
}

// finish runs the end-of-run checkers and fills res.
func (c *Cluster) finish(res *Result) {
	res.fill(c)
	switch {
	case c.violation != nil:
		res.Outcome = Outcome{Kind: OutcomeSafety, Checker: c.violationChecker(), Detail: c.violation.Error()}
		return
	}
	lc := &LinearizabilityChecker{}
	if err := lc.Check(&c.history); err != nil {
		res.linearizability = lc // kept for the visualization
		res.Outcome = Outcome{Kind: OutcomeSafety, Checker: "linearizability", Detail: err.Error()}
		return
	}
	if c.core == nil {
		return // a scenario without a liveness phase
	}
	if err := (LivenessChecker{}).Check(c, c.core); err != nil {
		res.Outcome = Outcome{Kind: OutcomeLiveness, Checker: "liveness", Detail: err.Error()}
		return
	}
	logs := make(map[int][]uint64, len(c.core))
	for _, i := range c.core {
		logs[i] = c.logs[i].Values()
	}
	if err := c.durability.Check(&c.history, logs, c.core); err != nil {
		res.Outcome = Outcome{Kind: OutcomeSafety, Checker: "durability", Detail: err.Error()}
	}
}

func (c *Cluster) violationChecker() string {
	switch {
	case c.violationKind != "":
		return c.violationKind
	case c.commits.Check() != nil:
		return "commits"
	case c.exactlyOnce.Check() != nil:
		return "exactly-once"
	case c.sends.Check() != nil:
		return "send"
	}
	return "client"
}

// storageCounters sums the counters of every replica's disk.
func (c *Cluster) storageCounters() StorageCounters {
	var sum StorageCounters
	for _, s := range c.storages {
		sum.add(s.Counters)
	}
	return sum
}

func (r *Result) fill(c *Cluster) {
	r.TraceHash = c.trace.Sum64()
	r.Ticks = c.now
	r.Committed = c.commits.CommitMax
	r.Requests = len(c.history.Entries)
	r.Completed = c.completedCount()
	r.Network = c.network.Counters
	r.Storage = c.storageCounters()
	r.Process = c.counters
	r.Process.CheckedPrepareOks = c.sends.PrepareOks
	r.Process.CheckedDoViewChanges = c.sends.DoViewChanges
	r.Process.CheckedViewLogs = c.sends.StartViews
	for _, cl := range c.clients {
		r.Process.ClientRetries += cl.retries
	}
	r.DurabilityWaived = c.durability.Waived()
	// Copy the history header so that the result does not keep the whole
	// cluster (disks, journals) alive.
	h := c.history
	r.history = &h
}

// ReplicaSummary describes every replica in one line, for reports.
func (c *Cluster) ReplicaSummary() string {
	var b strings.Builder
	for i, r := range c.replicas {
		if r == nil {
			fmt.Fprintf(&b, " r%d=down", i)
			continue
		}
		fmt.Fprintf(&b, " r%d=%s/v%d/op%d/c%d", i, r.Status(), r.View(), r.OpNumber(), r.CommitNumber())
	}
	return b.String()
}
