package group

import (
	"fmt"

	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/vsr"
)

// The metadata group's host.
//
// MetaHost composes one vsr.Replica with the metadata state machine
// (server/metadata) and the group's storage: the replica's WAL, checkpoint
// and superblock zones (production binds them to metadata/journal.wal,
// snapshot.bin and the superblock files). Like Host it is driven only by
// its inputs on the goroutine that owns it (shard 0 in production: the
// only shard that commits metadata) and acts only through MetaBinding; the
// purity lint covers it.
//
// Every metadata change is one committed op: the Iggy metadata operations
// (metadata.Operation*), and the session operations OperationRegister and
// OperationLogout that give a login its session number (the op that
// committed it). A restart restores the latest checkpoint and applies the
// journal's ops above it again, in order, through the same Apply.

// MetaGroupID is the metadata group's id. A partition's group id packs its
// stream, topic and partition ids into the low 60 bits (streams are fewer
// than 1<<20), so the top bit is never a partition's.
const MetaGroupID uint64 = 1 << 63

// The session operations of the metadata group. Iggy's Register (1) and
// Logout (3) are below vsr.OperationUserMin, which belongs to vsr itself,
// so the group commits them under these numbers; the metadata machine
// does not see them (sessions belong to connections).
const (
	OperationRegister uint8 = 16
	OperationLogout   uint8 = 17
)

// MetaEffects carries out what a committed metadata op asks for outside
// the machine (partition directories, the read view, counters). Calls run
// on the owning goroutine, in op order, during the input that applied the
// op: Submit, or Open for the ops replayed from the journal.
type MetaEffects interface {
	// Applied runs after op was applied to m; effects are the machine's
	// effects of op (none for a session op, which m never sees).
	Applied(m *metadata.Machine, op, timestamp uint64, operation uint8, body []byte, effects []metadata.Effect)
}

// MetaBinding is what a metadata host acts through.
type MetaBinding struct {
	// Storage is the group's consensus storage, sized with
	// MetaConfig.Replica.ZoneSize (persisted: all four zones).
	Storage vsr.Storage
	// Peers reaches the group's other replicas.
	Peers Peers
	// Clock gives the primary's prepare timestamps.
	Clock vsr.Clock
	// Effects carries out committed ops.
	Effects MetaEffects
	// Replies receives every answer.
	Replies Replies
}

// MetaConfig configures the metadata group's host.
type MetaConfig struct {
	// Replica is the group's replica configuration. The host sets Group
	// to MetaGroupID when it is zero and makes every operation
	// sessionless: the server's session table (register, request numbers,
	// cached replies) answers duplicates before a request reaches the
	// group.
	Replica vsr.Config
	// ClientTable keeps the metadata operations sessioned instead: the
	// group's own client table (vsr's, replicated and part of its
	// checkpoints) registers clients (vsr.OperationRegister, whose
	// committed op is the session), orders their request numbers and
	// answers a retry of a committed request from its cached reply, so a
	// request is applied once across primaries. Clients submit with
	// SubmitSession. The simulator's metadata plane runs so.
	ClientTable bool
}

// MetaHost is one replica of the metadata group. Only the goroutine that
// owns it may call its methods.
type MetaHost struct {
	cfg     MetaConfig
	b       MetaBinding
	replica *vsr.Replica
	machine *metadata.Machine
	sm      metaAdapter
	net     metaNetwork
}

// NewMeta checks cfg and returns a host that must be opened with Open.
func NewMeta(cfg MetaConfig, b MetaBinding) (*MetaHost, error) {
	if b.Storage == nil || b.Peers == nil || b.Clock == nil || b.Effects == nil || b.Replies == nil {
		return nil, fmt.Errorf("%w: nil binding", ErrConfig)
	}
	if cfg.Replica.Group == 0 {
		cfg.Replica.Group = MetaGroupID
	}
	for op := int(vsr.OperationUserMin); op < 256 && !cfg.ClientTable; op++ {
		cfg.Replica.Sessionless.Add(uint8(op))
	}
	h := &MetaHost{cfg: cfg, b: b, machine: metadata.New()}
	h.sm = metaAdapter{h: h}
	h.net = metaNetwork{h: h}
	r, err := vsr.NewReplica(cfg.Replica, b.Storage, &h.net, &h.sm, b.Clock)
	if err != nil {
		return nil, fmt.Errorf("metadata group: %w", err)
	}
	h.replica = r
	return h, nil
}

// Open loads the checkpoint and the journal and starts the replica: a
// group of one applies every op its journal holds above the checkpoint
// (each through MetaEffects.Applied) before done runs. done runs once,
// from a storage completion.
func (h *MetaHost) Open(done func(error)) {
	h.replica.Open(func(err error) {
		if err != nil {
			err = fmt.Errorf("metadata group replica %d: open: %w", h.cfg.Replica.ReplicaIndex, err)
		}
		done(err)
	})
}

// Tick advances the replica's timeouts by one tick.
func (h *MetaHost) Tick() { h.replica.Tick() }

// Step hands the replica a message from a peer of the group.
func (h *MetaHost) Step(m *vsr.Message) { h.replica.Step(m) }

// Submit hands the replica a metadata operation (a metadata.Operation* or
// OperationRegister / OperationLogout). The answer comes through
// MetaBinding.Replies, during this call or a later input: the committed
// reply once the op is applied and durable, or a disposition. body is
// copied.
func (h *MetaHost) Submit(client vsr.Uint128, request uint64, operation uint8, body []byte) {
	h.SubmitSession(client, 0, request, operation, body)
}

// SubmitSession is Submit for a host with MetaConfig.ClientTable: session
// is the client's session (the op of its committed vsr.OperationRegister;
// 0 for the register itself), request its request number (a retry repeats
// it).
func (h *MetaHost) SubmitSession(client vsr.Uint128, session, request uint64, operation uint8, body []byte) {
	m := &vsr.Message{Header: vsr.Header{
		Command:   vsr.CommandRequest,
		Cluster:   h.cfg.Replica.Cluster,
		Group:     h.cfg.Replica.Group,
		Replica:   h.cfg.Replica.ReplicaIndex,
		Client:    client,
		Session:   session,
		Request:   request,
		Operation: operation,
	}, Body: body}
	m.Seal()
	h.replica.Request(m)
}

// Machine returns the metadata machine, for reads on the owning goroutine
// (or under the binding's lock). Only Apply may change it.
func (h *MetaHost) Machine() *metadata.Machine { return h.machine }

// Replica returns the group's replica, for its status and counters.
func (h *MetaHost) Replica() *vsr.Replica { return h.replica }

// Err returns the replica's storage failure, if any: from then on the
// replica commits nothing more.
func (h *MetaHost) Err() error { return h.replica.Err() }

// metaAdapter is the metadata machine as vsr.StateMachine.
type metaAdapter struct{ h *MetaHost }

func (a *metaAdapter) Apply(op, timestamp uint64, operation uint8, body []byte) []byte {
	h := a.h
	var reply []byte
	var effects []metadata.Effect
	switch operation {
	case OperationRegister, OperationLogout:
		// A session op: numbered and durable, but not the machine's.
	default:
		reply = h.machine.Apply(op, timestamp, operation, body)
		effects = h.machine.TakeEffects()
	}
	h.b.Effects.Applied(h.machine, op, timestamp, operation, body, effects)
	return reply
}

func (a *metaAdapter) Checkpoint() []byte { return a.h.machine.Checkpoint() }

func (a *metaAdapter) Restore(data []byte) error { return a.h.machine.Restore(data) }

// metaNetwork is the replica's vsr.Network.
type metaNetwork struct{ h *MetaHost }

func (n *metaNetwork) SendToReplica(replica uint8, m *vsr.Message) {
	n.h.b.Peers.SendToReplica(replica, m)
}

func (n *metaNetwork) SendToClient(client vsr.Uint128, m *vsr.Message) {
	if m.Command != vsr.CommandReply {
		return // sessionless: no evictions (with ClientTable, ClientsMax bounds the clients)
	}
	r := Reply{Client: client, Request: m.Request, Operation: m.Operation, Disposition: m.Disposition}
	if m.Disposition != vsr.DispositionNone {
		r.Code = Code(m.Disposition)
	} else {
		r.Op = m.Op
		r.Body = m.Body
	}
	n.h.b.Replies.Deliver(r)
}
