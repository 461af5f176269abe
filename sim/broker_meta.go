package sim

import (
	"encoding/binary"
	"fmt"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/vsr"
)

// The broker workload's metadata plane (Params.Metadata): every node also
// hosts the metadata group (group id group.MetaGroupID, as in production)
// through the real group.MetaHost and the real server/metadata machine,
// over its own simulated disk (every storage fault; a crash or power loss
// of the node takes it with the partition groups' storage). The group is
// always persisted, as production's metadata is, and keeps its client
// table (MetaHost.SubmitRequest): a client registers once and repeats a
// request's number on every retry, so a retried request is applied once.
//
// Clients create the stream "broker" and the topic "p<g>" of partition
// group g when a partition operation is refused because its topic does not
// exist, and otherwise create, delete and look up the scratch topics
// "x0".."x2" while others send. Partition groups stay statically
// configured (one per topic "p<g>", never deleted); a node admits a
// partition operation only once its applied metadata holds the topic, as
// the server resolves a send's topic in its metadata view before it
// submits to the partition (metadata.ResolveSend), and answers 2010
// otherwise.
//
// Checkers: the metadata history is linearizable against a model of the
// stream's topics (names to ids, the lowest free id from 0, as the machine
// assigns them; create, delete, get by name); a request is applied at most
// once (the envelope's client and request, decoded from every applied op
// on every node, name one op) and its committed reply names that op;
// no partition op is applied on any node before the metadata group
// committed its topic's create; commit-prefix agreement of the group;
// liveness of the group and of every metadata call once faults stop.

// brokerMetaGroup is the group index of the metadata group in requests,
// replies and w.inputGroup.
const brokerMetaGroup = -1

const (
	brokerStreamName = "broker"
	// brokerScratchTopics is how many scratch topic names clients create
	// and delete.
	brokerScratchTopics = 3
	// metaOpSharePPM is the share of a client's operations that are
	// scratch metadata operations.
	metaOpSharePPM = PPM / 20
)

// metaTopicNames is the model's name index: p0..p5 then x0..x2.
const metaTopicNames = brokerGroupsMax + brokerScratchTopics

func metaTopicName(k int) string {
	if k < brokerGroupsMax {
		return fmt.Sprintf("p%d", k)
	}
	return fmt.Sprintf("x%d", k-brokerGroupsMax)
}

// metaOp names a metadata operation of a client.
type metaOp uint8

const (
	metaRegister metaOp = iota
	metaCreateStream
	metaCreateTopic
	metaDeleteTopic
	metaGetTopic
)

var metaOpNames = [...]string{"register", "create-stream", "create-topic", "delete-topic", "get-topic"}

// metaRequest is the metadata part of a brokerRequest.
type metaRequest struct {
	op      metaOp
	session uint64
	request uint64 // the session's request number (repeated on a retry)
	topic   int    // name index
	body    []byte
}

// metaEntry is one logical metadata operation of a client (every retry
// of it is the same request).
type metaEntry struct {
	client    int
	op        metaOp
	topic     int
	request   uint64
	call      uint64
	ret       uint64
	done      bool
	known     bool // the outcome is known (not 59 without a reply)
	code      uint32
	id        uint32
	found     bool
	appliedAt uint64 // the op the committed reply names
}

// metaCall is a client's metadata operation in progress.
type metaCall struct {
	entry    int
	req      metaRequest
	invoke   uint64 // the invocation (TCP) number in flight
	sentTick uint64
	retryAt  uint64
	timeout  uint64
}

// metaClient is a client's metadata session.
type metaClient struct {
	session    uint64
	registered bool
	request    uint64
	target     int
	call       *metaCall
	needStream bool
	needTopic  []bool
	prng       *PRNG
}

// metaNode is one node's replica of the metadata group.
type metaNode struct {
	host    *group.MetaHost
	storage *Storage
	opened  bool
	reads   []metaRead
	ticks   uint64
}

type metaRead struct {
	ticket vsr.ReadTicket
	since  uint64
	done   func(vsr.Disposition)
}

// metaCounters count the metadata plane's events (coverage).
type metaCounters struct {
	commits uint64 // ops applied by a primary's replica (every node counts its own)
	retried uint64 // requests sent again under the same number
	gated   uint64 // partition requests refused: no topic at the node
	deleted uint64 // topics deleted by a committed op
}

// brokerMeta is the metadata plane of a broker world.
type brokerMeta struct {
	w             *brokerWorld
	cfgs          []group.MetaConfig
	nodes         []*metaNode
	commits       *CommitChecker
	unhealthy     []bool
	lastStartView []uint64
	commitMax     uint64
	clients       []*metaClient
	// appliedAt maps a request {client, request} to the op that applied it.
	appliedAt map[[2]uint64]uint64
	// topicCommitted[g] is set once a node applied the create of group g's
	// topic (a committed op).
	topicCommitted []bool
	history        []metaEntry
	counters       metaCounters
	// booting is set during the operator's bootstrap (clients wait);
	// operatorReply is the answer to its request in flight.
	booting       bool
	operatorReply *group.Reply
	// operatorRequest is the number of the operator's request in flight
	// (0: its register).
	operatorRequest uint64
}

func newBrokerMeta(w *brokerWorld, root *PRNG) (*brokerMeta, error) {
	p := w.params
	m := &brokerMeta{w: w, commits: NewCommitChecker(w.n), unhealthy: make([]bool, w.n), lastStartView: make([]uint64, w.n),
		appliedAt: map[[2]uint64]uint64{}, topicCommitted: make([]bool, w.groups)}
	storageRoot, clientRoot := root.Fork(1), root.Fork(2)
	for i := 0; i < w.n; i++ {
		cfg := vsr.DefaultConfig(simCluster, uint8(w.n), uint8(i))
		cfg.Group = group.MetaGroupID
		cfg.Durability = vsr.Persisted
		cfg.JournalSlots = p.JournalSlots
		cfg.MessageSizeMax = p.MessageSizeMax
		cfg.WALBytesMax = p.WALBytesMax
		cfg.PipelinePrepareMax = p.PipelinePrepareMax
		cfg.RequestQueueMax = p.RequestQueueMax
		cfg.CheckpointIntervalOps = p.CheckpointIntervalOps
		cfg.ClientsMax = uint32(p.ClientCount + 1)
		cfg.Bugs = w.bugs
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("sim: node %d metadata group: %w", i, err)
		}
		m.cfgs = append(m.cfgs, group.MetaConfig{Replica: cfg})
		zones := map[vsr.Zone]uint64{}
		for _, z := range []vsr.Zone{vsr.ZoneSuperblock, vsr.ZoneWALHeaders, vsr.ZoneWALPrepares, vsr.ZoneCheckpoint} {
			zones[z] = cfg.ZoneSize(z)
		}
		s := NewStorage(i, p, storageRoot.Fork(uint64(i)), &w.now, zones)
		s.onEvent = w.storageEventHandler(i)
		m.nodes = append(m.nodes, &metaNode{storage: s})
	}
	for c := 0; c < p.ClientCount; c++ {
		m.clients = append(m.clients, &metaClient{needTopic: make([]bool, w.groups), prng: clientRoot.Fork(uint64(c)),
			target: int(vsr.PrimaryIndex(0, group.MetaGroupID, uint8(w.n)))})
	}
	return m, nil
}

// start creates node i's metadata host over its surviving storage.
func (m *brokerMeta) start(i int) error {
	w := m.w
	node := w.nodes[i]
	mn := m.nodes[i]
	h, err := group.NewMeta(m.cfgs[i], group.MetaBinding{
		Storage: mn.storage,
		Peers:   metaPeers{m: m, node: i},
		Clock:   node.clock,
		Effects: metaEffects{m: m, node: i},
		Replies: metaReplies{m: m, node: i},
	})
	if err != nil {
		return fmt.Errorf("sim: node %d metadata group: %w", i, err)
	}
	mn.host, mn.opened, mn.reads = h, false, nil
	m.commits.OnReset(i)
	w.inputNode, w.inputGroup = i, brokerMetaGroup
	h.Open(func(err error) {
		if mn.host != h {
			return
		}
		mn.opened = true
		if err != nil {
			w.failAs("metadata", fmt.Errorf("node %d: the metadata group failed to open: %v", i, err))
		}
	})
	return nil
}

func (m *brokerMeta) crash(i int, powerLoss bool) {
	mn := m.nodes[i]
	mn.host, mn.opened = nil, false
	for _, r := range mn.reads {
		r.done(vsr.DispositionNotPrimary) // the connection is gone: nobody hears it
	}
	mn.reads = nil
	mn.storage.Crash(powerLoss)
	m.unhealthy[i] = true
	m.commits.OnReset(i)
}

func (m *brokerMeta) host(i int) *group.MetaHost {
	if !m.w.nodes[i].up {
		return nil
	}
	return m.nodes[i].host
}

func (m *brokerMeta) tickStorage() {
	w := m.w
	for i, node := range w.nodes {
		if node.up {
			w.inputNode, w.inputGroup = i, brokerMetaGroup
			m.nodes[i].storage.Tick(w.now)
			w.afterInput()
		}
	}
}

func (m *brokerMeta) tickHosts() {
	w := m.w
	for i, node := range w.nodes {
		h := m.host(i)
		if h == nil {
			continue
		}
		w.inputNode, w.inputGroup = i, brokerMetaGroup
		m.nodes[i].ticks++
		h.Tick()
		w.afterInput()
		if !node.up {
			continue
		}
		m.serveReads(i)
		r := h.Replica()
		w.answers.OnProgress(i, group.MetaGroupID, r.CommitNumber(), 0, w.now)
		m.commits.Scan(i, r)
		m.commitMax = max(m.commitMax, r.CommitNumber())
		if err := h.Err(); err != nil {
			w.failAs("metadata", fmt.Errorf("node %d: the metadata group's storage failed: %v", i, err))
		}
		if m.unhealthy[i] && r.Status() == vsr.StatusNormal && r.CommitNumber() >= r.CommitMax() {
			m.unhealthy[i] = false
		}
	}
	if err := m.commits.Check(); err != nil {
		w.failAs("commits", fmt.Errorf("metadata group: %w", err))
	}
}

func (m *brokerMeta) downCount() int {
	n := 0
	for i := range m.w.nodes {
		if !m.w.nodes[i].up || m.unhealthy[i] {
			n++
		}
	}
	return n
}

// step hands a replica message of the metadata group to node i.
func (m *brokerMeta) step(i int, msg *vsr.Message, corrupted bool) {
	w := m.w
	h := m.host(i)
	if h == nil {
		return
	}
	w.inputNode, w.inputGroup = i, brokerMetaGroup
	if corrupted {
		if msg.Valid() {
			panic(fmt.Sprintf("sim: a corrupted %s still passes its checksums", msg.Command))
		}
		w.counters.CorruptedRejected++
		r := h.Replica()
		before := [6]uint64{uint64(r.Status()), r.View(), r.LogView(), r.OpNumber(), r.CommitNumber(), r.CommitMax()}
		sent := w.network.Counters.Sent
		h.Step(msg)
		after := [6]uint64{uint64(r.Status()), r.View(), r.LogView(), r.OpNumber(), r.CommitNumber(), r.CommitMax()}
		if after != before || w.network.Counters.Sent != sent {
			w.failAs("corruption", fmt.Errorf("node %d metadata group acted on a corrupted %s", i, msg.Command))
		}
		w.afterInput()
		return
	}
	h.Step(msg)
	if msg.Command == vsr.CommandCheckpoint {
		w.timedCrash(i, timedMidTransfer, w.params.CrashMidTransferPPM)
	}
	w.afterInput()
	if w.nodes[i].up {
		m.serveReads(i)
	}
}

// metaPeers is a metadata host's group.Peers.
type metaPeers struct {
	m    *brokerMeta
	node int
}

func (p metaPeers) SendToReplica(replica uint8, msg *vsr.Message) {
	m, w := p.m, p.m.w
	if int(replica) >= w.n {
		panic(fmt.Sprintf("sim: node %d metadata group sent to replica %d of %d", p.node, replica, w.n))
	}
	switch msg.Command {
	case vsr.CommandPrepareOk:
		w.timedCrash(p.node, timedAfterPrepareOk, w.params.CrashAfterPrepareOkPPM)
	case vsr.CommandStartView:
		if msg.View > m.lastStartView[p.node] {
			m.lastStartView[p.node] = msg.View
			w.counters.ViewChanges++
		}
	case vsr.CommandRequestPrepare:
		w.counters.RepairRequests++
	case vsr.CommandCheckpoint:
		w.counters.CheckpointChunks++
	}
	w.network.Send(w.now, p.node, int(replica), &brokerPacket{msg: msg})
}

// metaEffects is a metadata host's group.MetaEffects: the checks of every
// applied op.
type metaEffects struct {
	m    *brokerMeta
	node int
}

func (e metaEffects) Applied(mach *metadata.Machine, op, _ uint64, operation uint8, body []byte, effects []metadata.Effect) {
	m, w := e.m, e.m.w
	env, _, err := metadata.DecodeOp(operation, body)
	if err != nil {
		w.failAs("metadata", fmt.Errorf("node %d applied metadata op %d that does not decode: %v", e.node, op, err))
		return
	}
	key := [2]uint64{env.ClientLo, env.Request}
	if prev, ok := m.appliedAt[key]; ok && prev != op {
		w.failAs("exactly-once", fmt.Errorf("node %d applied client %d's metadata request %d at op %d; it was applied at op %d already",
			e.node, env.ClientLo-clientIDBase, env.Request, op, prev))
		return
	}
	m.appliedAt[key] = op
	if h := m.nodes[e.node].host; h != nil && h.Replica().Primary() {
		m.counters.commits++
		for _, ef := range effects {
			if ef.Kind == metadata.EffectTopicDeleted {
				m.counters.deleted++
			}
		}
	}
	if s := mach.Stream(metadata.NamedID(brokerStreamName)); s != nil {
		for g := range m.topicCommitted {
			if s.Topic(metadata.NamedID(metaTopicName(g))) != nil {
				m.topicCommitted[g] = true
			}
		}
	}
}

// topicVisible reports whether node i's applied metadata holds partition
// group g's topic (the server's lookup before it submits to a partition).
func (m *brokerMeta) topicVisible(i, g int) bool {
	mn := m.nodes[i]
	if mn.host == nil || !mn.opened {
		return false
	}
	s := mn.host.Machine().Stream(metadata.NamedID(brokerStreamName))
	return s != nil && s.Topic(metadata.NamedID(metaTopicName(g))) != nil
}

// checkTopicGate is called before node i applies op of partition group g:
// the metadata group must have committed the topic's create.
func (m *brokerMeta) checkTopicGate(i, g int, op uint64) {
	if !m.topicCommitted[g] {
		m.w.failAs("topic-gate", fmt.Errorf("node %d applied op %d of partition group %d (topic %s) before the metadata group committed the topic's create",
			i, op, g, metaTopicName(g)))
	}
}

// metaReplies is a metadata host's group.Replies.
type metaReplies struct {
	m    *brokerMeta
	node int
}

func (r metaReplies) Deliver(reply group.Reply) {
	w := r.m.w
	if reply.Ticket != 0 { // not a notice
		w.answers.OnAnswer(r.node, group.MetaGroupID, reply.Ticket, w.now)
	}
	w.countAbandon(reply.Abandon)
	if reply.Client == r.m.operatorID() {
		// Only an answer to the operator's request in flight: a node
		// also delivers a reply to an earlier one (a new primary that
		// commits its predecessor's op again, a cached reply), which
		// taken for the current request's made a step that never
		// committed look done, with the earlier op's id (broker seeds
		// 20307, 23398 and 11371; bootstrapMeta also resubmits after a
		// request timeout with no answer).
		if r.m.booting && reply.Request == r.m.operatorRequest {
			r.m.operatorReply = &reply
		}
		return
	}
	c := reply.Client.Lo - clientIDBase
	if reply.Client.Hi != simCluster || reply.Client.Lo < clientIDBase || c >= uint64(len(w.clients)) {
		return
	}
	if reply.Evicted {
		// The broker's clients keep their sessions (the client table
		// holds them all); an eviction is no reply to forward.
		return
	}
	rep := &brokerReply{client: int(c), request: reply.Request, group: brokerMetaGroup, meta: true, code: uint32(reply.Code),
		metaOp: reply.Op, hint: r.m.primaryHint(r.node)}
	if reply.Disposition != vsr.DispositionNone {
		w.counters.Dispositions++
	} else if len(reply.Body) > 0 {
		code, ok := metadata.ReplyCode(reply.Body)
		if !ok {
			w.failAs("metadata", fmt.Errorf("node %d: a malformed metadata reply to client %d request %d", r.node, c, reply.Request))
			return
		}
		rep.code = uint32(code)
		if code == metadata.CodeOK && len(reply.Body) >= wire.ResultOKSize+4 {
			rep.metaID = binary.LittleEndian.Uint32(reply.Body[wire.ResultOKSize:])
		}
	}
	w.network.Send(w.now, r.node, w.n+int(c), &brokerPacket{rep: rep})
}

func (m *brokerMeta) primaryHint(i int) int {
	h := m.host(i)
	if h == nil {
		return -1
	}
	p := int(vsr.PrimaryIndex(h.Replica().View(), group.MetaGroupID, uint8(m.w.n)))
	if p == i && !h.Replica().Primary() {
		return -1
	}
	return p
}

// handle is node i's connection handler for a metadata request.
func (m *brokerMeta) handle(i int, req *brokerRequest) {
	w := m.w
	h := m.host(i)
	mr := req.meta
	reply := func(code uint32, found bool, id uint32) {
		w.network.Send(w.now, i, w.n+req.client, &brokerPacket{rep: &brokerReply{client: req.client, request: mr.request,
			group: brokerMetaGroup, meta: true, code: code, metaFound: found, metaID: id, hint: m.primaryHint(i)}})
	}
	if h == nil || !m.nodes[i].opened {
		reply(uint32(wire.ErrTransientNotAccepted), false, 0)
		return
	}
	w.inputNode, w.inputGroup = i, brokerMetaGroup
	id := vsr.Uint128{Lo: clientIDBase + uint64(req.client), Hi: simCluster}
	if mr.op != metaGetTopic {
		// Before the call: the host may answer inside it.
		w.answers.OnSubmit(i, group.MetaGroupID, h.NextTicket(), fmt.Sprintf("client %d's metadata %s request %d", req.client, metaOpNames[mr.op], mr.request),
			w.now, h.RequestTimeoutTicks())
	}
	switch mr.op {
	case metaRegister:
		h.SubmitRequest(group.MetaRequest{Client: id, Operation: group.OperationRegister})
	case metaGetTopic:
		m.read(i, func(d vsr.Disposition) {
			if d != vsr.DispositionNone {
				reply(uint32(group.Code(d)), false, 0)
				return
			}
			s := h.Machine().Stream(metadata.NamedID(brokerStreamName))
			if s == nil {
				reply(uint32(metadata.CodeStreamIDNotFound), false, 0)
				return
			}
			if t := s.Topic(metadata.NamedID(metaTopicName(mr.topic))); t != nil {
				reply(0, true, t.ID)
				return
			}
			reply(0, false, 0)
		})
	default:
		operation := metadata.OperationCreateTopic
		switch mr.op {
		case metaCreateStream:
			operation = metadata.OperationCreateStream
		case metaDeleteTopic:
			operation = metadata.OperationDeleteTopic
		}
		h.SubmitRequest(group.MetaRequest{Client: id, Session: mr.session, Request: mr.request, Operation: operation, Body: mr.body})
	}
	w.afterInput()
}

// read runs done once node i's metadata replica may serve a read from
// applied state (vsr's read index: it still leads its view), or with the
// disposition that refuses it.
func (m *brokerMeta) read(i int, done func(vsr.Disposition)) {
	r := m.nodes[i].host.Replica()
	t, d := r.ReadIndex()
	if d == vsr.DispositionNone {
		if ready, why := r.ReadReady(t); ready || why != vsr.DispositionNone {
			done(why)
			return
		}
		m.nodes[i].reads = append(m.nodes[i].reads, metaRead{ticket: t, since: m.nodes[i].ticks, done: done})
		return
	}
	done(d)
}

func (m *brokerMeta) serveReads(i int) {
	mn := m.nodes[i]
	if mn.host == nil || len(mn.reads) == 0 {
		return
	}
	r := mn.host.Replica()
	timeout := max(m.cfgs[i].Replica.NormalHeartbeatTimeoutTicks, 1)
	kept := mn.reads[:0]
	var answered []metaRead
	var why []vsr.Disposition
	for _, pr := range mn.reads {
		ready, d := r.ReadReady(pr.ticket)
		if !ready && d == vsr.DispositionNone && mn.ticks-pr.since >= timeout {
			d = vsr.DispositionViewChange
		}
		if ready || d != vsr.DispositionNone {
			answered, why = append(answered, pr), append(why, d)
		} else {
			kept = append(kept, pr)
		}
	}
	mn.reads = kept
	for k, pr := range answered {
		pr.done(why[k])
	}
}

// onLiveness prepares the clients for the liveness phase: reads need not
// finish; writes must, without backoff; no new needs start.
func (m *brokerMeta) onLiveness() {
	for _, mc := range m.clients {
		if mc.call != nil && mc.call.req.op == metaGetTopic {
			mc.call = nil
		}
		if mc.call != nil {
			mc.call.timeout = uint64(m.w.params.RequestTimeoutTicks)
		}
	}
}

// livenessProblem says what keeps the metadata group or its clients from
// having converged in the core.
func (m *brokerMeta) livenessProblem() string {
	w := m.w
	var view, commit uint64
	primaries := 0
	for k, i := range w.core {
		h := m.host(i)
		if h == nil {
			return fmt.Sprintf("metadata group: core node %d is down", i)
		}
		r := h.Replica()
		if r.Status() != vsr.StatusNormal {
			return fmt.Sprintf("metadata group: core node %d is %s (view %d op %d commit %d/%d)", i, r.Status(), r.View(), r.OpNumber(), r.CommitNumber(), r.CommitMax())
		}
		if r.Behind() {
			// Its state is not its commit's yet (as for a partition
			// group's core replica: livenessProblem, seed 79396).
			return fmt.Sprintf("metadata group: core node %d is behind (state missing %v): it waits for a peer's checkpoint (commit %d, checkpoint %d)",
				i, r.StateMissing(), r.CommitNumber(), r.CheckpointOp())
		}
		if k == 0 {
			view, commit = r.View(), r.CommitNumber()
		}
		// An op in the log above the commit is still in flight: the core
		// has not converged until it commits (seed 83327: the core looked
		// converged at commit 5 with op 6 prepared on both nodes; op 6
		// committed on the primary during the read probe, and the check
		// after it found the backup a commit behind).
		if r.View() != view || r.CommitNumber() != commit || r.CommitNumber() != r.CommitMax() || r.OpNumber() != r.CommitNumber() {
			return fmt.Sprintf("metadata group: core node %d at view %d op %d commit %d/%d, node %d at view %d commit %d", i, r.View(), r.OpNumber(), r.CommitNumber(), r.CommitMax(), w.core[0], view, commit)
		}
		if r.Primary() {
			primaries++
		}
	}
	if primaries != 1 {
		return fmt.Sprintf("metadata group: %d primaries in the core", primaries)
	}
	if commit < m.commitMax {
		return fmt.Sprintf("metadata group: core commit %d below op %d, which a replica committed before", commit, m.commitMax)
	}
	for c, mc := range m.clients {
		if mc.call != nil {
			return fmt.Sprintf("client %d still waits for its metadata %s (request %d)", c, metaOpNames[mc.call.req.op], mc.call.req.request)
		}
	}
	return ""
}

// The last group's topic is left to the clients: they create it when a
// partition request for it is refused, so the topic gate is exercised
// through the run. With one partition group the operator only registers:
// the clients create the stream (its create topic answered 1009) and the
// topic. The bootstrap changes
// nothing of the safety phase's timeline of partition traffic and faults
// (the planted partition-level bugs are found early in a run).

// operatorID is the operator's client id.
func (m *brokerMeta) operatorID() vsr.Uint128 {
	return vsr.Uint128{Lo: clientIDBase + uint64(m.w.params.ClientCount), Hi: simCluster}
}

// bootTopics is how many partition topics the operator creates.
func (m *brokerMeta) bootTopics() int {
	if m.w.groups == 1 {
		return 0
	}
	return m.w.groups - 1
}

// bootstrapTicksMax bounds the bootstrap (faults off: a few commits).
const bootstrapTicksMax = 5_000

// bootstrap runs the operator's bootstrap; it fails the run if the group
// does not commit it in bootstrapTicksMax ticks.
func (w *brokerWorld) bootstrapMeta() {
	m := w.meta
	w.faultsEnabled = false
	w.network.SetFaults(false)
	for _, node := range w.nodes {
		for _, s := range node.storages {
			s.SetFaults(false)
		}
	}
	for _, mn := range m.nodes {
		mn.storage.SetFaults(false)
	}
	m.booting = true
	// The operator's steps: register, the stream, the topics.
	steps := []metaRequest{{op: metaRegister, topic: -1}}
	if m.bootTopics() > 0 {
		// With one partition group the clients create the stream too.
		steps = append(steps, metaRequest{op: metaCreateStream, topic: -1})
	}
	for g := 0; g < m.bootTopics(); g++ {
		steps = append(steps, metaRequest{op: metaCreateTopic, topic: g})
	}
	client := m.w.params.ClientCount
	var session, request uint64
	t := 0
	for k := 0; k < len(steps) && w.violation == nil; k++ {
		req := steps[k]
		if req.op != metaRegister {
			request++
			req.session, req.request = session, request
			req.body = encodeMetaBody(client, request, req.op, req.topic)
		}
		w.events++
		m.history = append(m.history, metaEntry{client: client, op: req.op, topic: req.topic, request: req.request, call: w.events})
		e := &m.history[len(m.history)-1]
		m.operatorReply, m.operatorRequest = nil, req.request
		submitted := false
		var submittedAt uint64
		for ; t < bootstrapTicksMax && w.violation == nil; t++ {
			if r := m.operatorReply; r != nil {
				m.operatorReply = nil
				if r.Disposition == vsr.DispositionNone {
					code := metadata.CodeOK
					if len(r.Body) > 0 {
						code, _ = metadata.ReplyCode(r.Body)
					}
					w.events++
					e.done, e.ret, e.known, e.code, e.appliedAt = true, w.events, true, uint32(code), r.Op
					if code == metadata.CodeOK && len(r.Body) >= wire.ResultOKSize+4 {
						e.id = binary.LittleEndian.Uint32(r.Body[wire.ResultOKSize:])
					}
					if req.op == metaRegister {
						session = r.Op
					} else if at, ok := m.appliedAt[[2]uint64{m.operatorID().Lo, req.request}]; !ok || at != r.Op {
						w.failAs("exactly-once", fmt.Errorf("the operator: the committed reply to metadata request %d (%s) names op %d; the request was applied at op %d (applied: %v)",
							req.request, metaOpNames[req.op], r.Op, at, ok))
					}
					break
				}
				submitted = false // refused: submit again
			}
			if submitted && w.now-submittedAt > uint64(w.params.RequestTimeoutTicks) {
				// No answer: the node it was submitted at left its view
				// before the op committed (a view change may drop an
				// uncommitted op); as any client, the operator submits
				// again under the same request number.
				submitted = false
			}
			if !submitted {
				if p := m.primary(); p >= 0 && m.nodes[p].opened {
					w.inputNode, w.inputGroup = p, brokerMetaGroup
					operation := group.OperationRegister
					switch req.op {
					case metaCreateStream:
						operation = metadata.OperationCreateStream
					case metaCreateTopic:
						operation = metadata.OperationCreateTopic
					}
					submitted, submittedAt = true, w.now
					w.answers.OnSubmit(p, group.MetaGroupID, m.nodes[p].host.NextTicket(), fmt.Sprintf("the operator's metadata %s request %d", metaOpNames[req.op], req.request),
						w.now, m.nodes[p].host.RequestTimeoutTicks())
					m.nodes[p].host.SubmitRequest(group.MetaRequest{Client: m.operatorID(), Session: req.session, Request: req.request, Operation: operation, Body: req.body})
					w.afterInput()
				}
			}
			w.Tick()
		}
		if !e.done && w.violation == nil {
			what := metaOpNames[req.op]
			if req.topic >= 0 {
				what += " " + metaTopicName(req.topic)
			}
			w.failAs("metadata", fmt.Errorf("the operator's bootstrap (%s) did not commit in %d ticks with every fault off", what, bootstrapTicksMax))
		}
	}
	m.booting = false
	w.logf("metadata bootstrap: stream %q and %d topics by tick %d", brokerStreamName, m.bootTopics(), w.now)
	w.faultsEnabled = true
	w.network.SetFaults(true)
	for _, node := range w.nodes {
		for _, s := range node.storages {
			s.SetFaults(true)
		}
	}
	for _, mn := range m.nodes {
		mn.storage.SetFaults(true)
	}
}

// primary returns the node that is the metadata group's primary in the
// highest view, or -1.
func (m *brokerMeta) primary() int {
	best, view := -1, uint64(0)
	for i := range m.nodes {
		h := m.host(i)
		if h != nil && h.Replica().Primary() && (best < 0 || h.Replica().View() > view) {
			best, view = i, h.Replica().View()
		}
	}
	return best
}
