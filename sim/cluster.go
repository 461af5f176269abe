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

// Journal and message sizes of simulated replicas: small, so that short
// runs wrap the journal, checkpoint and transfer state.
const (
	simMessageSizeMax = 64 << 10
	simWALBytesMax    = 4 << 20
)

// simJournalSlotChoices are the journal sizes the swarm draws from.
var simJournalSlotChoices = [...]uint64{32, 64, 128}

// RunCounters counts the process-level faults and client events of a run.
type RunCounters struct {
	Crashes          uint64
	PowerLosses      uint64
	PowerLossesAll   uint64
	Restarts         uint64
	Evictions        uint64
	ClientRetries    uint64
	MalformedReplies uint64
	Restores         uint64 // checkpoints restored into a state machine
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
	violation   error // first violation seen during the run
	core        []int // the liveness core, once chosen

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
	}
	nodes := params.ReplicaCount + params.ClientCount
	c.network = NewNetwork[*vsr.Message](nodes, params.ReplicaCount, params, root.Fork(3), (*vsr.Message).Clone)
	storageRoot := root.Fork(4)
	clockRoot := root.Fork(5)
	clientRoot := root.Fork(6)
	for i := 0; i < params.ReplicaCount; i++ {
		cfg := vsr.DefaultConfig(simCluster, uint8(params.ReplicaCount), uint8(i))
		if params.Durability == DurabilityPersisted {
			cfg.Durability = vsr.Persisted
		}
		cfg.JournalSlots = params.JournalSlots
		cfg.MessageSizeMax = simMessageSizeMax
		cfg.WALBytesMax = simWALBytesMax
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

// SendToReplica implements vsr.Network.
func (n replicaNetwork) SendToReplica(replica uint8, m *vsr.Message) {
	c := n.cluster
	if int(replica) >= c.params.ReplicaCount {
		panic(fmt.Sprintf("sim: replica %d sent to replica %d of %d", n.index, replica, c.params.ReplicaCount))
	}
	c.network.Send(c.now, n.index, int(replica), m)
}

// SendToClient implements vsr.Network. Messages to unknown clients vanish.
func (n replicaNetwork) SendToClient(client vsr.Uint128, m *vsr.Message) {
	c := n.cluster
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
	c.commits.OnReset(i)
	c.openReplica(i, r)
	return nil
}

// observeApply implements applyObserver: every applied op feeds the trace
// hash and the commit and exactly-once checkers.
func (c *Cluster) observeApply(replica int, op, timestamp uint64, operation uint8, body, reply []byte) {
	d := digestOf(operation, timestamp, body)
	c.commits.OnApply(replica, op, d)
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
	c.logf("replica %d restored a checkpoint of %d values", replica, valueCount)
}

// Tick advances the world by one tick: random faults, storage completions,
// message delivery, replica timers, then clients.
func (c *Cluster) Tick() {
	c.now++
	if c.faultsEnabled {
		c.network.Tick(c.now)
		c.randomProcessFaults()
	}
	for i, s := range c.storages {
		if c.replicas[i] != nil {
			s.Tick(c.now)
		}
	}
	c.network.DeliverDue(c.now, c.deliver)
	for i, r := range c.replicas {
		if r == nil {
			continue
		}
		r.Tick()
		c.commits.Scan(i, r)
		if c.unhealthy[i] && r.Status() == vsr.StatusNormal && r.CommitNumber() >= r.CommitMax() &&
			(c.params.Durability == DurabilityPersisted || r.HoldsLog()) {
			c.unhealthy[i] = false
		}
	}
	for _, cl := range c.clients {
		cl.tick(c)
	}
	if err := c.commits.Check(); err != nil {
		c.fail(err)
	}
	if err := c.exactlyOnce.Check(); err != nil {
		c.fail(err)
	}
}

func (c *Cluster) deliver(from, to int, m *vsr.Message) {
	b := c.scratch[:vsr.HeaderSize]
	m.Header.Encode(b)
	b = binary.LittleEndian.AppendUint64(b, c.now)
	b = binary.LittleEndian.AppendUint64(b, uint64(from)<<32|uint64(to))
	_, _ = c.trace.Write(b)
	if c.traceMessages && c.verbose != nil {
		fmt.Fprintf(c.verbose, "[%6d] %d->%d %s\n", c.now, from, to, m)
	}
	if to < c.params.ReplicaCount {
		if r := c.replicas[to]; r != nil {
			r.Step(m)
		}
		return
	}
	c.clients[to-c.params.ReplicaCount].receive(c, m)
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
	saved := c.params.TornWritePPM
	if torn {
		c.params.TornWritePPM = PPM
	}
	c.storages[i].Crash(powerLoss)
	c.params.TornWritePPM = saved
	c.network.DropTo(i)
	c.commits.OnReset(i)
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
