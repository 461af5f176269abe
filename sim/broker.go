package sim

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime/debug"
	"sort"

	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
	"github.com/zeebo/xxh3"
)

// The broker workload (Params.Workload = WorkloadBroker) runs the real
// partition state machine (server/partition) through the real group host
// (server/group) in the seeded world of faults: every node hosts
// Params.Groups partition groups (group ids 0..Groups-1, so that their
// primaries spread over the nodes), each over its own simulated disk
// (superblock, journal, checkpoint zones with every storage fault) and its
// own simulated segment store; a crash or power loss of a node takes all
// its groups' storage together. Messages between replicas travel the
// simulated network and are demultiplexed by their header's group id.
// Clients send batches (net/wire's batch encoding inside
// partition.EncodeSendMessages) with unique message ids, poll from applied
// state, store and read consumer offsets, and retry on dispositions and
// timeouts; a retry is a new invocation (at-least-once). Checkers:
// broker_check.go.

// brokerPacket is what the broker world's network carries: a replica
// message between the replicas of a group, a client's request, or a
// node's answer to one.
type brokerPacket struct {
	msg *vsr.Message
	req *brokerRequest
	rep *brokerReply
}

// brokerOp names a client operation of the broker workload.
type brokerOp uint8

const (
	brokerSend brokerOp = iota
	brokerPoll
	brokerStore
	brokerReadOffset
	brokerOpCount
)

var brokerOpNames = [brokerOpCount]string{"send", "poll", "store-offset", "read-offset"}

// brokerRequest is one invocation: a partition operation for the group
// host (send, store) or a read of applied state (poll, read offset).
type brokerRequest struct {
	client  int
	request uint64 // unique per client and invocation
	group   int
	op      brokerOp
	body    []byte       // send, store: the operation body
	start   uint64       // poll
	count   uint32       // poll
	meta    *metaRequest // a metadata request (group brokerMetaGroup)
}

// brokerReply answers one invocation.
type brokerReply struct {
	client  int
	request uint64
	group   int
	op      brokerOp
	code    uint32 // 0, or the wire error code (57, 58, ...)
	base    uint64 // send: the base offset
	// poll: the offsets and message ids served, in order.
	offsets []uint64
	ids     []uint64
	// read offset.
	value uint64
	found bool
	// hint is the node that answered's idea of the group's primary (the
	// primary of its view), a redirect for the client; -1 if none.
	hint int
	// A metadata reply (broker_meta.go): the op that committed the
	// request, a created topic's or stream's id, a lookup's result.
	meta      bool
	metaOp    uint64
	metaID    uint32
	metaFound bool
}

func cloneBrokerPacket(p *brokerPacket) *brokerPacket {
	c := *p
	if p.msg != nil {
		c.msg = p.msg.Clone()
	}
	return &c
}

// corruptBrokerPacket corrupts a replica message as the kv network does;
// a client connection's frames are checksummed end to end, so a corrupted
// request or reply is dropped by its receiver (the flag is the network's).
func corruptBrokerPacket(p *brokerPacket, r *PRNG) *brokerPacket {
	if p.msg != nil {
		return &brokerPacket{msg: corruptMessage(p.msg, r)}
	}
	return cloneBrokerPacket(p)
}

// brokerNode is one simulated machine: a host per group (nil while the
// node is down), and the storage that survives it.
type brokerNode struct {
	index    int
	up       bool
	gen      uint64 // incarnation, for IO completions
	hosts    []*group.Host
	storages []*Storage
	segments []*simSegments
	clock    *Clock
	opened   []bool
	// lastRequest is, per client, the highest request number this node's
	// connection delivered: the client's connection is a TCP stream, so
	// the network's duplicates never reach the host twice.
	lastRequest []uint64
}

// brokerIO is a segment-store completion (a sync) due at a tick.
type brokerIO struct {
	due  uint64
	seq  uint64
	node int
	gen  uint64
	f    func()
}

// brokerWorld is the broker workload's world, advanced by tick on one
// goroutine.
type brokerWorld struct {
	params  *Params
	bugs    vsr.BugSet
	prng    *PRNG // process faults and core choice
	timed   *PRNG
	ioPRNG  *PRNG
	now     uint64
	n       int
	groups  int
	nodes   []*brokerNode
	network *Network[*brokerPacket]
	clients []*brokerClient
	configs [][]group.Config // [node][group]

	commits []*CommitChecker // per group
	// unhealthy[g][i]: node i lost group g's memory (crash) and has not
	// caught up since.
	unhealthy [][]bool
	// lostMemory[g] says why group g's durability (replicated topic) and
	// liveness checks are waived: more than f of its replicas lost their
	// memory at once.
	lostMemory []string
	// lostAll[g] is set once every node lost group g's memory at once
	// (a replicated topic): the group restarts from the nodes'
	// checkpoints (vsr/restart.go) once every node is up.
	lostAll []bool
	lostAt  []uint64 // the tick lostMemory[g] was set
	history brokerHistory
	// events orders history calls and returns within a tick.
	events uint64

	ios   []brokerIO
	ioSeq uint64
	// observed[node][group] is the host's Effects wrapped by the apply
	// checks (broker_bugs.go).
	observed [][]*observedSegments
	// appliedIDs[g] maps each offset of group g some node applied a send
	// at to the message id it applied there (checkPollApplied).
	appliedIDs []map[uint64]uint64
	// segmentsDamaged[node][group]: a scenario damaged those segment
	// files (broker_segment_faults.go).
	segmentsDamaged map[[2]int]bool
	// ownCheckpoints holds {node, group, op} of every descriptor
	// checkpoint a node's host recorded of an op it applied itself
	// (checkCheckpointFrontier): only those are the node's promise when it
	// opens over them (a peer's, installed, is not: 117, 317).
	ownCheckpoints map[[3]uint64]bool

	faultsEnabled  bool
	powerLossAllAt uint64
	pendingCrashes []pendingCrash
	lastStartView  [][]uint64 // [g][node]
	fenced         []string   // per group: the first fence (Host.Err)

	violation     error
	violationKind string
	core          []int

	trace    *xxh3.Hasher
	scratch  [vsr.HeaderSize + 64]byte
	counters RunCounters
	verbose  io.Writer
	// traceMessages prints every delivered message to verbose.
	traceMessages bool
	// finalLogs[g] is the log the durability check read (ids by offset).
	finalLogs [][]uint64
	// inputNode and inputGroup name the host handling the current input
	// (for a panic's report).
	inputNode, inputGroup int
	// commitMax[g] is the highest op any replica of group g committed.
	commitMax []uint64
	// logicalByID maps a logical send's first message id to its index.
	logicalByID map[uint64]int
	// reads counts the reads' answers.
	reads readCounters
	// readProblem is why a read probe of the liveness phase at a core
	// primary was not served (probeReads), or "".
	readProblem string
	// readProbeRounds counts the liveness phase's read probes (a probe
	// refused because its view moved on is repeated).
	readProbeRounds int
	// meta is the metadata plane (Params.Metadata), or nil.
	meta *brokerMeta
	// answers checks that every request a host accepts is answered
	// exactly once within the host's bound (check_answers.go);
	// abandoned counts the hosts' own answers by reason (group.Abandon).
	answers   AnswerChecker
	abandoned [4]uint64
}

// runBroker runs one broker seed: the safety phase, the liveness phase and
// the checkers, or a scenario's script in their place.
func runBroker(opts Options, script func(w *brokerWorld) error) (res *Result) {
	params := opts.Params
	params.normalize()
	res = &Result{Params: params}
	var w *brokerWorld
	defer func() {
		if v := recover(); v != nil {
			where := ""
			if w != nil {
				where = fmt.Sprintf("node %d group %d: ", w.inputNode, w.inputGroup)
			}
			res.Outcome = Outcome{Kind: OutcomeCrash, Checker: "panic", Detail: fmt.Sprintf("%s%v\n%s", where, v, debug.Stack())}
			if w != nil {
				w.fill(res)
			}
		}
	}()
	var err error
	w, err = newBrokerWorld(&params, opts.Bugs, opts.Verbose)
	if err != nil {
		res.Outcome = Outcome{Kind: OutcomeCrash, Checker: "setup", Detail: err.Error()}
		return res
	}
	w.traceMessages = opts.TraceMessages
	if w.meta != nil {
		w.bootstrapMeta()
	}
	if script != nil {
		if err := script(w); err != nil {
			w.fill(res)
			res.Outcome = Outcome{Kind: OutcomeCrash, Checker: "scenario", Detail: err.Error()}
			return res
		}
	} else {
		w.logf("broker safety phase: %d ticks, %d groups (persisted: %s)", params.SafetyTicks, params.Groups, persistedGroupsString(&params))
		for t := 0; t < params.SafetyTicks && w.violation == nil; t++ {
			w.Tick()
		}
		w.Liveness()
	}
	w.finish(res)
	return res
}

func newBrokerWorld(params *Params, bugs vsr.BugSet, verbose io.Writer) (*brokerWorld, error) {
	root := NewPRNG(params.Seed)
	root.Fork(1) // the parameter stream (DrawParams)
	n := params.ReplicaCount
	w := &brokerWorld{
		params:        params,
		bugs:          bugs,
		prng:          root.Fork(2),
		timed:         root.Fork(7),
		ioPRNG:        root.Fork(9),
		n:             n,
		groups:        params.Groups,
		faultsEnabled: true,
		trace:         xxh3.New(),
		verbose:       verbose,
	}
	w.network = NewNetwork[*brokerPacket](n+params.ClientCount, n, params, root.Fork(3), cloneBrokerPacket, corruptBrokerPacket)
	w.network.primary = func() int { return w.primaryOf(0) }
	storageRoot := root.Fork(4)
	clockRoot := root.Fork(5)
	clientRoot := root.Fork(6)
	w.configs = make([][]group.Config, n)
	for g := 0; g < w.groups; g++ {
		w.commits = append(w.commits, NewCommitChecker(n))
		w.unhealthy = append(w.unhealthy, make([]bool, n))
		w.lastStartView = append(w.lastStartView, make([]uint64, n))
	}
	w.lostMemory = make([]string, w.groups)
	w.lostAll = make([]bool, w.groups)
	w.lostAt = make([]uint64, w.groups)
	w.commitMax = make([]uint64, w.groups)
	w.fenced = make([]string, w.groups)
	for i := 0; i < n; i++ {
		node := &brokerNode{index: i, clock: NewClock(&w.now, clockRoot.Fork(uint64(i))), lastRequest: make([]uint64, params.ClientCount)}
		for g := 0; g < w.groups; g++ {
			cfg := vsr.DefaultConfig(simCluster, uint8(n), uint8(i))
			cfg.Group = uint64(g)
			if params.groupPersisted(g) {
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
				return nil, fmt.Errorf("sim: node %d group %d: %w", i, g, err)
			}
			gc := group.Config{Replica: cfg, Partition: partition.Config{
				StreamID: 1, TopicID: uint32(g + 1), PartitionID: 1,
				MessagesRequiredToSave: uint32(params.FlushMessages),
			}}
			w.configs[i] = append(w.configs[i], gc)
			zones := map[vsr.Zone]uint64{}
			for _, z := range []vsr.Zone{vsr.ZoneSuperblock, vsr.ZoneWALHeaders, vsr.ZoneWALPrepares, vsr.ZoneCheckpoint} {
				zones[z] = cfg.ZoneSize(z)
			}
			s := NewStorage(i, params, storageRoot.Fork(uint64(i*brokerGroupsMax+g)), &w.now, zones)
			s.onEvent = w.storageEventHandler(i)
			node.storages = append(node.storages, s)
			node.segments = append(node.segments, &simSegments{w: w, node: i, group: g, persisted: params.groupPersisted(g)})
		}
		node.hosts = make([]*group.Host, w.groups)
		node.opened = make([]bool, w.groups)
		w.nodes = append(w.nodes, node)
	}
	for i := 0; i < params.ClientCount; i++ {
		w.clients = append(w.clients, newBrokerClient(w, i, clientRoot.Fork(uint64(i))))
	}
	if params.Metadata != 0 {
		m, err := newBrokerMeta(w, root.Fork(10))
		if err != nil {
			return nil, err
		}
		w.meta = m
	}
	for i := 0; i < n; i++ {
		if err := w.start(i); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// start creates node i's hosts over its surviving storage and opens them.
func (w *brokerWorld) start(i int) error {
	node := w.nodes[i]
	node.up = true
	node.gen++
	clear(node.lastRequest)
	w.loadSegments(i)
	if w.meta != nil {
		if err := w.meta.start(i); err != nil {
			return err
		}
	}
	for g := 0; g < w.groups; g++ {
		h, err := group.New(w.configs[i][g], group.Binding{
			Storage: node.storages[g],
			Peers:   brokerPeers{w: w, node: i, group: g},
			Clock:   node.clock,
			Effects: w.observe(i, g),
			Replies: brokerReplies{w: w, node: i, group: g},
		})
		if err != nil {
			return fmt.Errorf("sim: node %d group %d: %w", i, g, err)
		}
		node.hosts[g] = h
		w.observed[i][g].host = h
		node.opened[g] = false
		w.commits[g].OnReset(i)
		g := g
		h.Open(func(err error) {
			if node.hosts[g] != h {
				return
			}
			node.opened[g] = true
			if err != nil {
				w.logf("node %d group %d failed to open: %v", i, g, err)
				w.noteFence(g, fmt.Sprintf("node %d failed to open: %v", i, err))
			}
		})
	}
	return nil
}

// brokerPeers is one host's group.Peers: the node's messages to the
// group's other replicas, checked for timed faults on the way out.
type brokerPeers struct {
	w     *brokerWorld
	node  int
	group int
}

func (p brokerPeers) SendToReplica(replica uint8, m *vsr.Message) {
	w := p.w
	if int(replica) >= w.n {
		panic(fmt.Sprintf("sim: node %d group %d sent to replica %d of %d", p.node, p.group, replica, w.n))
	}
	w.onReplicaSend(p.node, p.group, m)
	w.network.Send(w.now, p.node, int(replica), &brokerPacket{msg: m})
}

// brokerReplies is one host's group.Replies: answers go back to the
// client over the network.
type brokerReplies struct {
	w     *brokerWorld
	node  int
	group int
}

func (r brokerReplies) Deliver(reply group.Reply) {
	w := r.w
	w.answers.OnAnswer(r.node, uint64(r.group), reply.Ticket, w.now)
	w.countAbandon(reply.Abandon)
	i := reply.Client.Lo - clientIDBase
	if reply.Client.Hi != simCluster || reply.Client.Lo < clientIDBase || i >= uint64(len(w.clients)) {
		return
	}
	w.checkReplyBarrier(r.node, r.group, reply)
	rep := &brokerReply{client: int(i), request: reply.Request, group: r.group, code: uint32(reply.Code), hint: w.primaryHint(r.node, r.group)}
	switch reply.Operation {
	case partition.OperationSendMessages:
		rep.op = brokerSend
		if base, ok := reply.BaseOffset(); ok {
			rep.base = base
		}
	case partition.OperationStoreConsumerOffset:
		rep.op = brokerStore
	default:
		return
	}
	if reply.Disposition != vsr.DispositionNone {
		w.counters.Dispositions++
	} else if reply.Op > 0 {
		// A committed reply: the core must reach this op again even if
		// the replica that committed it crashed before the next scan.
		w.commitMax[r.group] = max(w.commitMax[r.group], reply.Op)
	}
	w.network.Send(w.now, r.node, w.n+int(i), &brokerPacket{rep: rep})
}

func (w *brokerWorld) logf(format string, a ...any) {
	if w.verbose != nil {
		fmt.Fprintf(w.verbose, "[%6d] %s\n", w.now, fmt.Sprintf(format, a...))
	}
}

func (w *brokerWorld) failAs(checker string, err error) {
	if w.violation == nil {
		w.violation = err
		w.violationKind = checker
		w.logf("violation (%s): %v", checker, err)
	}
}

// noteFence records a host's failure to carry out a committed op's
// effects (or to reset storage): the partition is fenced on that node.
func (w *brokerWorld) noteFence(g int, why string) {
	if w.fenced[g] == "" {
		w.fenced[g] = fmt.Sprintf("tick %d: %s", w.now, why)
		w.logf("group %d fenced: %s", g, why)
	}
}

// countAbandon counts a host's own answer (a 57 for a request vsr left).
func (w *brokerWorld) countAbandon(a group.Abandon) {
	if int(a) < len(w.abandoned) {
		w.abandoned[a]++
	}
}

// describeHost says what node i's host of group g is doing, for the
// answers checker's failure.
func (w *brokerWorld) describeHost(i int, g uint64) string {
	var r *vsr.Replica
	var hostErr error
	waiting := 0
	if g == group.MetaGroupID {
		h := w.meta.host(i)
		if h == nil {
			return "; the node is down"
		}
		r, hostErr, waiting = h.Replica(), h.Err(), h.Waiting()
	} else {
		h := w.host(i, int(g))
		if h == nil {
			return "; the node is down"
		}
		r, hostErr, waiting = h.Replica(), h.Err(), h.Waiting()
	}
	return fmt.Sprintf("; the host: %s view %d primary %v op %d commit %d/%d, %d waiting, replica error %v, host error %v, primary of its view %d",
		r.Status(), r.View(), r.Primary(), r.OpNumber(), r.CommitNumber(), r.CommitMax(), waiting, r.Err(), hostErr,
		vsr.PrimaryIndex(r.View(), g, uint8(w.n)))
}

// groupName names group id g in a failure.
func groupName(g uint64) string {
	if g == group.MetaGroupID {
		return "the metadata group"
	}
	return fmt.Sprintf("group %d", g)
}

// host returns node i's host of group g, or nil while the node is down.
func (w *brokerWorld) host(i, g int) *group.Host {
	if !w.nodes[i].up {
		return nil
	}
	return w.nodes[i].hosts[g]
}

// primaryOf returns the node that is group g's primary (normal status) in
// the highest view, or -1.
func (w *brokerWorld) primaryOf(g int) int {
	best, view := -1, uint64(0)
	for i := range w.nodes {
		h := w.host(i, g)
		if h != nil && h.Replica().Primary() && (best < 0 || h.Replica().View() > view) {
			best, view = i, h.Replica().View()
		}
	}
	return best
}

// Tick advances the broker world by one tick: random faults, storage
// completions, message delivery, host timers, then clients.
func (w *brokerWorld) Tick() {
	w.now++
	if w.faultsEnabled {
		w.network.Tick(w.now)
		w.randomProcessFaults()
		if w.powerLossAllAt != 0 && w.now >= w.powerLossAllAt {
			w.powerLossAllAt = 0
			w.counters.Timed[timedPowerLossAllAfterView]++
			w.logf("power loss of every node (after a view change)")
			for i := range w.nodes {
				w.Crash(i, true)
			}
		}
	}
	for i, node := range w.nodes {
		for g := 0; g < w.groups && node.up; g++ {
			w.inputNode, w.inputGroup = i, g
			node.storages[g].Tick(w.now)
			w.afterInput()
			w.checkCheckpointFrontier(i, g)
		}
		_ = i
	}
	if w.meta != nil {
		w.meta.tickStorage()
	}
	w.runIOs()
	w.network.DeliverDue(w.now, w.deliver)
	for i, node := range w.nodes {
		for g := 0; g < w.groups && node.up; g++ {
			h := node.hosts[g]
			w.inputNode, w.inputGroup = i, g
			h.Tick()
			w.afterInput()
			if !node.up {
				break
			}
			r := h.Replica()
			w.answers.OnProgress(i, uint64(g), r.CommitNumber(), h.DurableTicket(), w.now)
			w.commits[g].Scan(i, r)
			w.commitMax[g] = max(w.commitMax[g], r.CommitNumber())
			if err := h.Err(); err != nil {
				w.noteFence(g, fmt.Sprintf("node %d: %v", i, err))
			}
			if w.unhealthy[g][i] && r.Status() == vsr.StatusNormal && r.CommitNumber() >= r.CommitMax() &&
				(w.params.groupPersisted(g) || r.HoldsLog()) {
				w.unhealthy[g][i] = false
			}
		}
	}
	if w.meta != nil {
		w.meta.tickHosts()
	}
	w.checkCheckpoints()
	if err := w.answers.Check(w.now, w.describeHost); err != nil {
		w.failAs("answers", err)
	}
	for _, cl := range w.clients {
		if w.meta != nil && w.meta.booting {
			break // the operator's bootstrap runs first
		}
		cl.tick()
	}
	for g, cc := range w.commits {
		if err := cc.Check(); err != nil {
			w.failAs("commits", fmt.Errorf("group %d: %w", g, err))
		}
	}
}

// runIOs completes the segment-store IOs due by now, in submission order.
func (w *brokerWorld) runIOs() {
	if len(w.ios) == 0 {
		return
	}
	sort.SliceStable(w.ios, func(a, b int) bool {
		if w.ios[a].due != w.ios[b].due {
			return w.ios[a].due < w.ios[b].due
		}
		return w.ios[a].seq < w.ios[b].seq
	})
	k := 0
	for k < len(w.ios) && w.ios[k].due <= w.now {
		k++
	}
	due := append([]brokerIO(nil), w.ios[:k]...)
	w.ios = append(w.ios[:0], w.ios[k:]...)
	for _, io := range due {
		if node := w.nodes[io.node]; node.up && node.gen == io.gen {
			io.f()
			w.afterInput()
		}
	}
}

// submitIO schedules f on node after a drawn IO latency.
func (w *brokerWorld) submitIO(node int, f func()) {
	latency := uint64(w.ioPRNG.Range(1, w.params.IOLatencyTicksMax))
	if w.faultsEnabled && w.params.IsSlowDisk(node) && w.params.SlowDiskTicksMax > 0 && w.ioPRNG.Chance(w.params.SlowDiskPPM) {
		latency = uint64(w.ioPRNG.Range(1, w.params.SlowDiskTicksMax))
	}
	w.ioSeq++
	w.ios = append(w.ios, brokerIO{due: w.now + latency, seq: w.ioSeq, node: node, gen: w.nodes[node].gen, f: f})
}

// afterInput strikes the faults timed to the protocol that the last input
// triggered.
func (w *brokerWorld) afterInput() {
	for len(w.pendingCrashes) > 0 {
		pc := w.pendingCrashes[0]
		w.pendingCrashes = w.pendingCrashes[1:]
		if !w.nodes[pc.replica].up {
			continue
		}
		w.counters.Timed[pc.kind]++
		w.logf("timed crash of node %d %s", pc.replica, timedKindNames[pc.kind])
		w.Crash(pc.replica, pc.powerLoss)
	}
}

// downCount returns, for the group where it is highest, how many nodes
// are down or have not caught up since they lost its memory.
func (w *brokerWorld) downCount() int {
	worst := 0
	for g := 0; g < w.groups; g++ {
		n := 0
		for i := range w.nodes {
			if !w.nodes[i].up || w.unhealthy[g][i] {
				n++
			}
		}
		worst = max(worst, n)
	}
	if w.meta != nil {
		worst = max(worst, w.meta.downCount())
	}
	return worst
}

func (w *brokerWorld) timedCrash(i int, kind timedKind, ppm uint32) {
	if !w.faultsEnabled || ppm == 0 || !w.nodes[i].up || !w.timed.Chance(ppm) {
		return
	}
	for _, pc := range w.pendingCrashes {
		if pc.replica == i {
			return
		}
	}
	if w.downCount()+len(w.pendingCrashes) >= DownMax(w.n, w.params.Durability) {
		return
	}
	powerLoss := w.params.Durability == DurabilityPersisted && w.timed.Chance(w.params.PowerLossPPM)
	w.pendingCrashes = append(w.pendingCrashes, pendingCrash{replica: i, kind: kind, powerLoss: powerLoss})
	for _, s := range w.nodes[i].storages {
		s.interrupt = true
	}
	if w.meta != nil {
		w.meta.nodes[i].storage.interrupt = true
	}
}

func (w *brokerWorld) storageEventHandler(i int) func(storageEvent) {
	return func(ev storageEvent) {
		p := w.params
		switch ev {
		case eventSuperblockSubmit:
			w.timedCrash(i, timedBeforeSuperblock, p.CrashBeforeSuperblockPPM)
		case eventSuperblockDurable:
			w.timedCrash(i, timedAfterSuperblock, p.CrashAfterSuperblockPPM)
		case eventCheckpointSubmit, eventCheckpointLanded:
			w.timedCrash(i, timedMidCheckpoint, p.CrashMidCheckpointPPM)
		}
	}
}

// onReplicaSend counts the protocol events a message stands for and draws
// the faults timed to it.
func (w *brokerWorld) onReplicaSend(i, g int, m *vsr.Message) {
	p := w.params
	switch m.Command {
	case vsr.CommandPrepareOk:
		w.timedCrash(i, timedAfterPrepareOk, p.CrashAfterPrepareOkPPM)
	case vsr.CommandDoViewChange:
		w.timedCrash(i, timedAfterDoViewChange, p.CrashAfterDoViewChangePPM)
	case vsr.CommandStartView:
		if m.View <= w.lastStartView[g][i] {
			break
		}
		w.lastStartView[g][i] = m.View
		w.counters.ViewChanges++
		w.timedCrash(i, timedAfterStartView, p.CrashAfterStartViewPPM)
		if p.Durability == DurabilityPersisted && w.faultsEnabled && w.powerLossAllAt == 0 && w.timed.Chance(p.PowerLossAllAfterViewPPM) {
			w.powerLossAllAt = w.now + uint64(w.timed.Range(0, 2*p.IOLatencyTicksMax))
		}
	case vsr.CommandRequestPrepare:
		w.counters.RepairRequests++
	case vsr.CommandCheckpoint:
		w.counters.CheckpointChunks++
	}
}

// deliver hands a packet to its node: a replica message to the host of
// its header's group, a client request to the node's request handler, a
// reply to its client.
func (w *brokerWorld) deliver(from, to int, p *brokerPacket, corrupted bool) {
	b := w.scratch[:0]
	b = binary.LittleEndian.AppendUint64(b, w.now)
	b = binary.LittleEndian.AppendUint64(b, uint64(from)<<32|uint64(to))
	switch {
	case p.msg != nil:
		b = b[:16+vsr.HeaderSize]
		p.msg.Header.Encode(b[16:])
	case p.req != nil:
		b = binary.LittleEndian.AppendUint64(b, p.req.request<<8|uint64(p.req.op))
	case p.rep != nil:
		b = binary.LittleEndian.AppendUint64(b, p.rep.request<<8|uint64(p.rep.op))
		b = binary.LittleEndian.AppendUint64(b, uint64(p.rep.code)<<32|uint64(len(p.rep.ids)))
		b = binary.LittleEndian.AppendUint64(b, p.rep.base^p.rep.value)
	}
	_, _ = w.trace.Write(b)
	if w.traceMessages && w.verbose != nil && p.msg != nil {
		fmt.Fprintf(w.verbose, "[%6d] %d->%d g%d %s\n", w.now, from, to, p.msg.Group, p.msg)
	}
	if to >= w.n {
		if corrupted {
			w.counters.CorruptedRejected++
			return
		}
		w.clients[to-w.n].receive(p.rep)
		return
	}
	node := w.nodes[to]
	if !node.up {
		return
	}
	if p.msg == nil {
		if corrupted {
			w.counters.CorruptedRejected++
			return
		}
		w.handleRequest(to, p.req)
		return
	}
	if p.msg.Group == group.MetaGroupID && w.meta != nil {
		w.meta.step(to, p.msg, corrupted)
		return
	}
	g := int(p.msg.Group)
	if p.msg.Group >= uint64(w.groups) {
		if corrupted {
			w.counters.CorruptedRejected++
		}
		return // a corrupted group id: no host of it here
	}
	h := node.hosts[g]
	w.inputNode, w.inputGroup = to, g
	if corrupted {
		w.deliverCorrupted(to, g, h, p.msg)
		return
	}
	h.Step(p.msg)
	if p.msg.Command == vsr.CommandCheckpoint {
		w.timedCrash(to, timedMidTransfer, w.params.CrashMidTransferPPM)
	}
	w.afterInput()
}

// deliverCorrupted hands a corrupted replica message to its host, which
// must reject it by its checksums without changing state.
func (w *brokerWorld) deliverCorrupted(to, g int, h *group.Host, m *vsr.Message) {
	if m.Valid() {
		panic(fmt.Sprintf("sim: a corrupted %s still passes its checksums", m.Command))
	}
	w.counters.CorruptedRejected++
	r := h.Replica()
	type state struct {
		status                        vsr.Status
		view, logView, op, cmin, cmax uint64
	}
	before := state{r.Status(), r.View(), r.LogView(), r.OpNumber(), r.CommitNumber(), r.CommitMax()}
	sent := w.network.Counters.Sent
	h.Step(m)
	after := state{r.Status(), r.View(), r.LogView(), r.OpNumber(), r.CommitNumber(), r.CommitMax()}
	if after != before || w.network.Counters.Sent != sent {
		w.failAs("corruption", fmt.Errorf("node %d group %d acted on a corrupted %s", to, g, m.Command))
	}
	w.afterInput()
}
