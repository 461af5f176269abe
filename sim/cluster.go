package sim

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/stratabroker/strata/vsr"
	"github.com/zeebo/xxh3"
)

// simCluster is the cluster id every simulated replica and client uses.
const simCluster = 0x5354524154410001

// timedKind names a fault timed to the protocol.
type timedKind uint8

const (
	timedAfterPrepareOk timedKind = iota
	timedAfterDoViewChange
	timedAfterStartView
	timedBeforeSuperblock
	timedAfterSuperblock
	timedMidCheckpoint
	timedMidTransfer
	timedPowerLossAllAfterView
	timedKindCount
)

var timedKindNames = [timedKindCount]string{
	"after PrepareOk", "after DoViewChange", "after StartView", "before a superblock write",
	"after a superblock write", "mid-checkpoint", "mid-state-transfer", "power loss of every replica after a view change",
}

// RunCounters counts the process-level faults, protocol events and client
// events of a run.
type RunCounters struct {
	Crashes          uint64
	PowerLosses      uint64
	PowerLossesAll   uint64
	Restarts         uint64
	Evictions        uint64
	ClientRetries    uint64
	MalformedReplies uint64
	// Dispositions counts replicas' answers to requests they did not
	// commit (not primary, view change, overloaded, ...), not delivered.
	Dispositions uint64
	Restores     uint64 // checkpoints restored into a state machine
	// Timed counts the faults timed to the protocol, by kind.
	Timed [timedKindCount]uint64
	// Protocol events.
	ViewChanges       uint64 // StartView broadcasts of a new view
	Recoveries        uint64 // replicas that left the recovering status
	RepairRequests    uint64 // RequestPrepare messages sent
	CheckpointChunks  uint64 // checkpoint chunks sent for state transfer
	StateTransfers    uint64 // checkpoints restored by a running replica
	CorruptedRejected uint64 // corrupted packets delivered (and rejected)
	PrimaryFlaps      uint64 // new primaries cut off by flapToNewPrimary
	// Messages checked at the moment of sending.
	CheckedPrepareOks    uint64
	CheckedDoViewChanges uint64
	CheckedViewLogs      uint64
}

// pendingCrash is a fault timed to the protocol, struck at the next safe
// point (once the replica's current input is handled).
type pendingCrash struct {
	replica   int
	kind      timedKind
	powerLoss bool
	torn      bool // every in-flight multi-sector write lands torn
}

// Cluster is one simulated world: replicas, their disks and clocks, the
// network, the clients and the checkers, all advanced by Tick on a single
// goroutine.
type Cluster struct {
	params   *Params
	bugs     vsr.BugSet
	prng     *PRNG // process faults and core choice
	now      uint64
	configs  []vsr.Config
	replicas []*vsr.Replica // nil while crashed
	storages []*Storage
	logs     []*ReplicatedLog
	clocks   []*Clock
	network  *Network[*vsr.Message]
	clients  []*client
	history  History

	// unhealthy[i] is true from a crash of replica i until it is back in
	// normal status and has applied every op it knows committed (under
	// replicated durability it has lost its memory until then, and also
	// holds the prepare of every op above its commit: a replica that
	// recovered only headers may have acked those ops before it lost them,
	// so it can never nack them, and were a replication quorum of such
	// replicas to lose them, no view change could truncate them).
	unhealthy     []bool
	openErrors    []error // per replica: why its last Open failed
	faultsEnabled bool

	commits     *CommitChecker
	exactlyOnce *ExactlyOnceChecker
	durability  DurabilityChecker
	sends       *SendChecker

	// Faults timed to the protocol.
	timed          *PRNG
	pendingCrashes []pendingCrash
	powerLossAllAt uint64 // tick of a scheduled power loss of every replica, or 0
	lastStartView  []uint64
	// holdFor and holdSince drive holdIsolation.
	holdFor   int
	holdSince uint64
	// flapView, flapPrepares and flapAfter drive flapToNewPrimary.
	flapView     uint64
	flapPrepares int
	flapAfter    int
	lastStatus   []vsr.Status
	opening      []bool
	// corruptStep is 1 + the node handling a corrupted packet, or 0.
	corruptStep int
	violation   error // first violation seen during the run
	// violationKind names the checker of violation when fail's caller
	// says (failAs), else violationChecker works it out.
	violationKind string
	core          []int // the liveness core, once chosen

	trace    *xxh3.Hasher
	scratch  [vsr.HeaderSize + 32]byte
	counters RunCounters
	verbose  io.Writer
	// traceMessages prints every delivered message to verbose.
	traceMessages bool
}

// NewCluster builds the world for params with every replica open.
func NewCluster(params *Params, bugs vsr.BugSet, verbose io.Writer) (*Cluster, error) {
	params.normalize()
	root := NewPRNG(params.Seed)
	root.Fork(1) // the parameter stream (DrawParams)
	c := &Cluster{
		params:        params,
		bugs:          bugs,
		prng:          root.Fork(2),
		replicas:      make([]*vsr.Replica, params.ReplicaCount),
		storages:      make([]*Storage, params.ReplicaCount),
		logs:          make([]*ReplicatedLog, params.ReplicaCount),
		clocks:        make([]*Clock, params.ReplicaCount),
		configs:       make([]vsr.Config, params.ReplicaCount),
		unhealthy:     make([]bool, params.ReplicaCount),
		openErrors:    make([]error, params.ReplicaCount),
		faultsEnabled: true,
		commits:       NewCommitChecker(params.ReplicaCount),
		exactlyOnce:   NewExactlyOnceChecker(),
		trace:         xxh3.New(),
		verbose:       verbose,
		lastStartView: make([]uint64, params.ReplicaCount),
		lastStatus:    make([]vsr.Status, params.ReplicaCount),
		opening:       make([]bool, params.ReplicaCount),
	}
	c.sends = newSendChecker(c)
	nodes := params.ReplicaCount + params.ClientCount
	c.network = NewNetwork[*vsr.Message](nodes, params.ReplicaCount, params, root.Fork(3), (*vsr.Message).Clone, corruptMessage)
	c.network.primary = c.currentPrimary
	c.network.hold = c.holdIsolation
	storageRoot := root.Fork(4)
	clockRoot := root.Fork(5)
	clientRoot := root.Fork(6)
	c.timed = root.Fork(7)
	for i := 0; i < params.ReplicaCount; i++ {
		cfg := vsr.DefaultConfig(simCluster, uint8(params.ReplicaCount), uint8(i))
		if params.Durability == DurabilityPersisted {
			cfg.Durability = vsr.Persisted
		}
		cfg.JournalSlots = params.JournalSlots
		cfg.MessageSizeMax = params.MessageSizeMax
		cfg.WALBytesMax = params.WALBytesMax
		cfg.PipelinePrepareMax = params.PipelinePrepareMax
		cfg.RequestQueueMax = params.RequestQueueMax
		cfg.CheckpointIntervalOps = params.CheckpointIntervalOps
		cfg.Bugs = bugs
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("sim: replica %d: %w", i, err)
		}
		c.configs[i] = cfg
		zones := map[vsr.Zone]uint64{}
		for _, z := range []vsr.Zone{vsr.ZoneSuperblock, vsr.ZoneWALHeaders, vsr.ZoneWALPrepares, vsr.ZoneCheckpoint} {
			zones[z] = cfg.ZoneSize(z)
		}
		c.storages[i] = NewStorage(i, params, storageRoot.Fork(uint64(i)), &c.now, zones)
		c.storages[i].onEvent = c.storageEventHandler(i)
		c.clocks[i] = NewClock(&c.now, clockRoot.Fork(uint64(i)))
	}
	for i := 0; i < params.ClientCount; i++ {
		c.clients = append(c.clients, newClient(i, params.ReplicaCount+i, simCluster, params, clientRoot.Fork(uint64(i))))
	}
	for i := 0; i < params.ReplicaCount; i++ {
		if err := c.start(i); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// replicaNetwork is replica i's view of the simulated network.
type replicaNetwork struct {
	cluster *Cluster
	index   int
}

// SendToReplica implements vsr.Network. Every message is checked as it
// leaves (SendChecker) and may trigger a fault timed to the protocol.
func (n replicaNetwork) SendToReplica(replica uint8, m *vsr.Message) {
	c := n.cluster
	if int(replica) >= c.params.ReplicaCount {
		panic(fmt.Sprintf("sim: replica %d sent to replica %d of %d", n.index, replica, c.params.ReplicaCount))
	}
	c.onReplicaSend(n.index, m)
	c.network.Send(c.now, n.index, int(replica), m)
}

// SendToClient implements vsr.Network. Messages to unknown clients vanish.
func (n replicaNetwork) SendToClient(client vsr.Uint128, m *vsr.Message) {
	c := n.cluster
	if m.Command == vsr.CommandReply && m.Disposition != vsr.DispositionNone {
		// The toy workload's clients retry on their timeout; answers
		// without a commit are counted, not delivered, so that every seed
		// replays the run it replayed before vsr sent them.
		c.counters.Dispositions++
		return
	}
	if c.corruptStep == n.index+1 {
		c.failAs("corruption", fmt.Errorf("replica %d sent %s to a client while handling a corrupted packet", n.index, m.Command))
	}
	c.sends.OnReply(n.index, m)
	i := client.Lo - clientIDBase
	if client.Hi != simCluster || client.Lo < clientIDBase || i >= uint64(len(c.clients)) {
		return
	}
	c.network.Send(c.now, n.index, c.clients[i].node, m)
}

func (c *Cluster) clientSend(cl *client, replica int, m *vsr.Message) {
	c.network.Send(c.now, cl.node, replica, m)
}

func (c *Cluster) malformedReply(cl *client, m *vsr.Message) {
	c.counters.MalformedReplies++
	c.fail(fmt.Errorf("client %d got a malformed reply to request %d (operation %d, op %d): %d body bytes",
		cl.index, m.Request, m.Operation, m.Op, len(m.Body)))
}

// failAs records the first safety violation, found by checker.
func (c *Cluster) failAs(checker string, err error) {
	if c.violation == nil {
		c.violationKind = checker
	}
	c.fail(err)
}

// fail records the first safety violation.
func (c *Cluster) fail(err error) {
	if c.violation == nil {
		c.violation = err
		c.logf("violation: %v", err)
	}
}

func (c *Cluster) logf(format string, a ...any) {
	if c.verbose != nil {
		fmt.Fprintf(c.verbose, "[%6d] %s\n", c.now, fmt.Sprintf(format, a...))
	}
}

// start creates replica i over its existing storage and opens it.
func (c *Cluster) start(i int) error {
	c.logs[i] = NewReplicatedLog(i, c)
	r, err := vsr.NewReplica(c.configs[i], c.storages[i], replicaNetwork{c, i}, c.logs[i], c.clocks[i])
	if err != nil {
		return fmt.Errorf("sim: replica %d: %w", i, err)
	}
	c.replicas[i] = r
	c.lastStatus[i] = vsr.StatusOpening
	c.commits.OnReset(i)
	c.openReplica(i, r)
	return nil
}

// observeApply implements applyObserver: every applied op feeds the trace
// hash and the commit and exactly-once checkers.
func (c *Cluster) observeApply(replica int, op, timestamp uint64, operation uint8, body, reply []byte) {
	d := digestOf(operation, timestamp, body)
	var view uint64
	if r := c.replicas[replica]; r != nil {
		view = r.View()
	}
	c.commits.OnApply(replica, view, op, d)
	if l := c.logs[replica]; l != nil {
		count, hash := l.StateDigest()
		c.commits.OnState(replica, op, stateDigest{count, hash})
	}
	if d.client != 0 {
		c.exactlyOnce.OnApply(replica, op, d.client, d.request)
	}
	b := c.scratch[:0]
	b = binary.LittleEndian.AppendUint64(b, uint64(replica)|1<<63)
	b = binary.LittleEndian.AppendUint64(b, op)
	b = binary.LittleEndian.AppendUint64(b, d.body)
	b = binary.LittleEndian.AppendUint64(b, xxh3.Hash(reply))
	_, _ = c.trace.Write(b)
}

// observeRestore implements applyObserver.
func (c *Cluster) observeRestore(replica int, valueCount int) {
	c.commits.OnReset(replica)
	c.counters.Restores++
	if !c.opening[replica] {
		c.counters.StateTransfers++
	}
	c.logf("replica %d restored a checkpoint of %d values", replica, valueCount)
}

// Tick advances the world by one tick: random faults, storage completions,
// message delivery, replica timers, then clients. A fault timed to the
// protocol strikes right after the input that triggered it (the message
// handled, the storage completion, the timer).
func (c *Cluster) Tick() {
	c.now++
	if c.faultsEnabled {
		c.network.Tick(c.now)
		c.randomProcessFaults()
		if c.powerLossAllAt != 0 && c.now >= c.powerLossAllAt {
			c.powerLossAllAt = 0
			c.counters.Timed[timedPowerLossAllAfterView]++
			c.logf("power loss of every replica (after a view change)")
			for i := range c.replicas {
				c.Crash(i, true, false)
			}
		}
	}
	for i, s := range c.storages {
		if c.replicas[i] != nil {
			s.Tick(c.now)
			c.afterInput(i)
		}
	}
	c.network.DeliverDue(c.now, c.deliver)
	for i, r := range c.replicas {
		if r == nil {
			continue
		}
		r.Tick()
		c.afterInput(i)
		if r = c.replicas[i]; r == nil {
			continue
		}
		c.commits.Scan(i, r)
		if c.unhealthy[i] && r.Status() == vsr.StatusNormal && r.CommitNumber() >= r.CommitMax() &&
			(c.params.Durability == DurabilityPersisted || r.HoldsLog()) {
			c.unhealthy[i] = false
		}
	}
	for _, cl := range c.clients {
		cl.tick(c)
	}
	for _, err := range []error{c.commits.Check(), c.exactlyOnce.Check(), c.sends.Check()} {
		if err != nil {
			c.fail(err)
		}
	}
}

// afterInput runs once replica i handled an input: it notes status
// changes for the coverage counters and strikes pending timed faults.
func (c *Cluster) afterInput(i int) {
	if r := c.replicas[i]; r != nil {
		st := r.Status()
		if c.lastStatus[i] == vsr.StatusRecovering && st != vsr.StatusRecovering {
			c.counters.Recoveries++
			c.sends.OnRecovered(i)
		}
		c.lastStatus[i] = st
	}
	for len(c.pendingCrashes) > 0 {
		pc := c.pendingCrashes[0]
		c.pendingCrashes = c.pendingCrashes[1:]
		if c.replicas[pc.replica] == nil {
			continue
		}
		c.counters.Timed[pc.kind]++
		c.logf("timed crash %s", timedKindNames[pc.kind])
		c.Crash(pc.replica, pc.powerLoss, pc.torn)
	}
}

// timedCrash schedules a crash of replica i (a power loss with
// PowerLossPPM, persisted; tearing every write in flight with
// TornWritePPM) with chance ppm, for the next safe point, if the fault
// model allows one more replica down.
func (c *Cluster) timedCrash(i int, kind timedKind, ppm uint32) {
	if !c.faultsEnabled || ppm == 0 || c.replicas[i] == nil || !c.timed.Chance(ppm) {
		return
	}
	for _, pc := range c.pendingCrashes {
		if pc.replica == i {
			return
		}
	}
	if c.downCount()+len(c.pendingCrashes) >= DownMax(c.params.ReplicaCount, c.params.Durability) {
		return
	}
	powerLoss := c.params.Durability == DurabilityPersisted && c.timed.Chance(c.params.PowerLossPPM)
	torn := c.timed.Chance(c.params.TornWritePPM)
	c.pendingCrashes = append(c.pendingCrashes, pendingCrash{replica: i, kind: kind, powerLoss: powerLoss, torn: torn})
	c.storages[i].interrupt = true
}

// storageEventHandler returns the hook through which replica i's disk
// reports the storage events timed faults strike at.
func (c *Cluster) storageEventHandler(i int) func(storageEvent) {
	return func(ev storageEvent) {
		p := c.params
		switch ev {
		case eventSuperblockSubmit:
			c.timedCrash(i, timedBeforeSuperblock, p.CrashBeforeSuperblockPPM)
		case eventSuperblockDurable:
			c.timedCrash(i, timedAfterSuperblock, p.CrashAfterSuperblockPPM)
		case eventCheckpointSubmit, eventCheckpointLanded:
			c.timedCrash(i, timedMidCheckpoint, p.CrashMidCheckpointPPM)
		}
	}
}

// onReplicaSend checks a message replica i sends to a peer, counts the
// protocol events it stands for, and draws the faults timed to it.
func (c *Cluster) onReplicaSend(i int, m *vsr.Message) {
	if c.corruptStep == i+1 {
		c.failAs("corruption", fmt.Errorf("replica %d sent %s while handling a corrupted packet", i, m.Command))
	}
	c.sends.OnSend(i, m)
	p := c.params
	switch m.Command {
	case vsr.CommandPrepareOk:
		c.timedCrash(i, timedAfterPrepareOk, p.CrashAfterPrepareOkPPM)
	case vsr.CommandDoViewChange:
		c.timedCrash(i, timedAfterDoViewChange, p.CrashAfterDoViewChangePPM)
	case vsr.CommandStartView:
		if m.View <= c.lastStartView[i] {
			break // a copy of a broadcast, or an answer to RequestStartView
		}
		c.lastStartView[i] = m.View
		c.counters.ViewChanges++
		c.timedCrash(i, timedAfterStartView, p.CrashAfterStartViewPPM)
		if p.Durability == DurabilityPersisted && c.faultsEnabled && c.powerLossAllAt == 0 && c.timed.Chance(p.PowerLossAllAfterViewPPM) {
			c.powerLossAllAt = c.now + uint64(c.timed.Range(0, 2*p.IOLatencyTicksMax))
		}
	case vsr.CommandPrepare:
		c.flapToNewPrimary(i, m)
	case vsr.CommandRequestPrepare:
		c.counters.RepairRequests++
	case vsr.CommandCheckpoint:
		c.counters.CheckpointChunks++
	}
}

func (c *Cluster) deliver(from, to int, m *vsr.Message, corrupted bool) {
	b := c.scratch[:vsr.HeaderSize]
	m.Header.Encode(b)
	b = binary.LittleEndian.AppendUint64(b, c.now)
	b = binary.LittleEndian.AppendUint64(b, uint64(from)<<32|uint64(to))
	_, _ = c.trace.Write(b)
	if c.traceMessages && c.verbose != nil {
		fmt.Fprintf(c.verbose, "[%6d] %d->%d %s\n", c.now, from, to, m)
	}
	if corrupted {
		c.deliverCorrupted(to, m)
		return
	}
	if to < c.params.ReplicaCount {
		if r := c.replicas[to]; r != nil {
			c.sends.OnDeliver(to, r, m)
			r.Step(m)
			if m.Command == vsr.CommandCheckpoint {
				c.timedCrash(to, timedMidTransfer, c.params.CrashMidTransferPPM)
			}
			c.afterInput(to)
		}
		return
	}
	c.clients[to-c.params.ReplicaCount].receive(c, m)
}

// deliverCorrupted hands a packet the network corrupted to its node, which
// must reject it by its checksums: it may neither send, nor touch its
// disk, nor change its state while handling it.
func (c *Cluster) deliverCorrupted(to int, m *vsr.Message) {
	if m.Valid() {
		panic(fmt.Sprintf("sim: a corrupted %s still passes its checksums", m.Command))
	}
	c.counters.CorruptedRejected++
	if to >= c.params.ReplicaCount {
		cl := c.clients[to-c.params.ReplicaCount]
		before := *cl
		cl.receive(c, m)
		if cl.inflight != before.inflight || cl.session != before.session || cl.view != before.view || cl.evicted != before.evicted {
			c.failAs("corruption", fmt.Errorf("client %d acted on a corrupted %s", cl.index, m.Command))
		}
		return
	}
	r := c.replicas[to]
	if r == nil {
		return
	}
	type state struct {
		status                        vsr.Status
		view, logView, op, cmin, cmax uint64
		io                            StorageCounters
	}
	observe := func() state {
		return state{r.Status(), r.View(), r.LogView(), r.OpNumber(), r.CommitNumber(), r.CommitMax(), c.storages[to].Counters}
	}
	before := observe()
	c.corruptStep = to + 1
	r.Step(m)
	c.corruptStep = 0
	if after := observe(); after != before {
		c.failAs("corruption", fmt.Errorf("replica %d acted on a corrupted %s: status %s view %d log view %d op %d commit %d/%d became %s %d %d %d %d/%d (io %d/%d/%d reads/writes/syncs became %d/%d/%d)",
			to, m.Command, before.status, before.view, before.logView, before.op, before.cmin, before.cmax,
			after.status, after.view, after.logView, after.op, after.cmin, after.cmax,
			before.io.Reads, before.io.Writes, before.io.Syncs, after.io.Reads, after.io.Writes, after.io.Syncs))
	}
	c.afterInput(to)
}

// downCount returns how many replicas are crashed or not yet back to
// normal since their restart.
func (c *Cluster) downCount() int {
	n := 0
	for i := range c.replicas {
		if c.replicas[i] == nil || c.unhealthy[i] {
			n++
		}
	}
	return n
}

func (c *Cluster) randomProcessFaults() {
	p := c.params
	if p.PowerLossAllPPM > 0 && p.Durability == DurabilityPersisted && c.prng.Chance(p.PowerLossAllPPM) {
		c.counters.PowerLossesAll++
		c.logf("power loss of every replica")
		for i := range c.replicas {
			if c.replicas[i] != nil {
				c.Crash(i, true, false)
			}
		}
		return
	}
	if c.prng.Chance(p.CrashPPM) && c.downCount() < DownMax(p.ReplicaCount, p.Durability) {
		i := c.prng.IntN(p.ReplicaCount)
		if c.replicas[i] != nil {
			c.Crash(i, c.prng.Chance(p.PowerLossPPM), false)
		}
	}
	if c.prng.Chance(p.RestartPPM) {
		i := c.prng.IntN(p.ReplicaCount)
		if c.replicas[i] == nil {
			c.Restart(i)
		}
	}
}

// Crash stops replica i. With powerLoss its unsynced writes are lost; with
// torn every in-flight multi-sector write lands torn.
func (c *Cluster) Crash(i int, powerLoss, torn bool) {
	if c.replicas[i] == nil {
		return
	}
	c.logf("crash replica %d (power loss %v, torn %v) status=%s view=%d op=%d commit=%d",
		i, powerLoss, torn, c.replicas[i].Status(), c.replicas[i].View(), c.replicas[i].OpNumber(), c.replicas[i].CommitNumber())
	c.counters.Crashes++
	if powerLoss {
		c.counters.PowerLosses++
	}
	c.replicas[i] = nil
	c.logs[i] = nil
	c.unhealthy[i] = true
	c.opening[i] = false
	saved := c.params.TornWritePPM
	if torn {
		c.params.TornWritePPM = PPM
	}
	c.storages[i].Crash(powerLoss)
	c.params.TornWritePPM = saved
	c.network.DropTo(i)
	c.commits.OnReset(i)
	c.sends.OnCrash(i)
	if c.params.Durability == DurabilityReplicated && c.downCount() > DownMax(c.params.ReplicaCount, c.params.Durability) {
		c.durability.Waive(fmt.Sprintf("%d replicas down at tick %d under replicated durability", c.downCount(), c.now))
	}
}

// Restart starts crashed replica i again over its disk.
func (c *Cluster) Restart(i int) {
	if c.replicas[i] != nil {
		return
	}
	c.logf("restart replica %d", i)
	c.counters.Restarts++
	if err := c.start(i); err != nil {
		panic(err) // the config was valid at start-up; this is our bug
	}
}

// flapToNewPrimary is the partition timed to the protocol of
// PartitionIsolatePrimary: while the old primary is cut off, the new
// primary that the others elected is cut off in turn right after it
// prepared its first few ops of the new view (k, drawn per view), so that
// the old primary, with its stale log of uncommitted ops, comes back
// straight into a view change against logs of the newer view that hold
// other ops at the same places.
func (c *Cluster) flapToNewPrimary(i int, m *vsr.Message) {
	n := c.network
	if c.params.PartitionMode != PartitionIsolatePrimary || !c.faultsEnabled {
		return
	}
	old := n.IsolatedPrimary()
	r := c.replicas[i]
	if old < 0 || old == i || r == nil || !r.Primary() || m.Replica != uint8(i) || m.View != r.View() {
		return
	}
	if c.flapView != m.View {
		c.flapView, c.flapPrepares = m.View, 0
		c.flapAfter = 1 + c.timed.IntN(4)
		if !c.timed.Chance(PPM / 2) {
			c.flapAfter = 0 // not this view
		}
	}
	c.flapPrepares++
	if c.flapPrepares == c.flapAfter {
		c.logf("partition: cut off replica %d, the new primary of view %d, after %d prepares (replica %d rejoins)", i, m.View, c.flapPrepares, old)
		n.IsolatePrimary(i)
		c.counters.PrimaryFlaps++
	}
}

// holdIsolationTicksMax bounds how long holdIsolation keeps a primary cut
// off waiting for a new one.
const holdIsolationTicksMax = 2000

// holdIsolation keeps a PartitionIsolatePrimary partition from healing
// until the others have elected a new primary (so that the old one comes
// back with a stale log), for at most holdIsolationTicksMax ticks.
func (c *Cluster) holdIsolation() bool {
	iso := c.network.IsolatedPrimary()
	if iso < 0 || c.replicas[iso] == nil {
		return false
	}
	if c.holdFor != iso || c.holdSince == 0 {
		c.holdFor, c.holdSince = iso, c.now
	}
	if c.now-c.holdSince > holdIsolationTicksMax {
		return false
	}
	view := c.replicas[iso].View()
	for j, r := range c.replicas {
		if j != iso && r != nil && r.Primary() && r.View() > view {
			return false
		}
	}
	return true
}

// currentPrimary returns the replica that is primary, in normal status, of
// the highest view any such replica is in, or -1.
func (c *Cluster) currentPrimary() int {
	best, view := -1, uint64(0)
	for i, r := range c.replicas {
		if r != nil && r.Primary() && (best < 0 || r.View() > view) {
			best, view = i, r.View()
		}
	}
	return best
}

// Now returns the current tick.
func (c *Cluster) Now() uint64 { return c.now }

// Replica returns replica i, or nil while it is crashed.
func (c *Cluster) Replica(i int) *vsr.Replica { return c.replicas[i] }

// CommitMax returns the highest op any replica has applied.
func (c *Cluster) CommitMax() uint64 { return c.commits.CommitMax }

// completedCount returns the number of operations with a response.
func (c *Cluster) completedCount() int {
	return len(c.history.Entries) - c.history.Outstanding()
}
