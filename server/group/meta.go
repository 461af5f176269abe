package group

import (
	"encoding/binary"
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

// MetaGroupID is the metadata group's id. A partition's group id is its
// metadata ConsensusGroup, below metadata.ConsensusGroupLimit (1<<63), so
// the top bit is never a partition's.
const MetaGroupID uint64 = 1 << 63

// The session operations of the metadata group, and its wrapper of the
// server's own operations.
//
// Sessions are vsr's client table (replicated, part of every checkpoint):
// a register opens a client's session (its number is the register's op),
// a metadata operation of a session is exactly-once by request number (a
// duplicate is answered from the cached reply, an older one as already
// applied, a client without a session with an eviction), and a logout
// ends the session. Iggy's Register (1) and Logout (3) are below
// vsr.OperationUserMin, which belongs to vsr itself: the host names them
// OperationRegister (committed as vsr's register, whose body names the
// session's owner, the user) and OperationLogout (a sessioned operation
// that ends its session, vsr.Config.EndsSession).
//
// OperationInternal carries the operations the server commits on its own
// behalf (the root user at the first boot, a password hash upgrade,
// consumer-group bookkeeping): sessionless (vsr.Config.Sessionless), so
// that they need no session and are never deduplicated, with the
// metadata operation in the first byte of the body.
//
// A sessioned metadata operation's body is prefixed with the client's
// request tag (Iggy's request checksum, MetaRequest.Tag), and its reply
// with the same tag, so that a duplicate's cached reply says which request
// it answers (Reply.Tag): a client that reuses a request number for
// another request is told apart from a retry.
const (
	OperationRegister uint8 = 16
	OperationLogout   uint8 = 17
	OperationInternal uint8 = 18
)

// metaTagSize is the size of the request tag before a sessioned body.
const metaTagSize = 16

// MetaEffects carries out what a committed metadata op asks for outside
// the machine (partition directories, the read view, counters). Calls run
// on the owning goroutine, in op order, during the input that applied the
// op: the storage completion (a sync) that committed it, or Open for the
// ops replayed from the journal.
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
	// to MetaGroupID when it is zero, makes OperationInternal sessionless
	// and OperationLogout end its session. ClientsMax bounds the sessions
	// (the least recently committed goes, with an eviction) and
	// ClientsPerOwnerMax one user's share.
	Replica vsr.Config
	// RequestTimeoutTicks is the request timeout, as Config's
	// (waiters.go); zero means RequestTimeoutHeartbeatsDefault normal
	// heartbeat timeouts.
	RequestTimeoutTicks uint64
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
	// submitting is set during a Submit; appliedBefore is the commit
	// number when it began: a committed reply delivered meanwhile for an
	// op at or below it is a duplicate's cached reply (Reply.Replayed).
	submitting    bool
	appliedBefore uint64
	// answering keeps the submitted requests not answered yet
	// (waiters.go); ticks counts Tick.
	answering
	ticks uint64
}

// NewMeta checks cfg and returns a host that must be opened with Open.
func NewMeta(cfg MetaConfig, b MetaBinding) (*MetaHost, error) {
	if b.Storage == nil || b.Peers == nil || b.Clock == nil || b.Effects == nil || b.Replies == nil {
		return nil, fmt.Errorf("%w: nil binding", ErrConfig)
	}
	if cfg.Replica.Group == 0 {
		cfg.Replica.Group = MetaGroupID
	}
	cfg.Replica.Sessionless.Add(OperationInternal)
	cfg.Replica.EndsSession.Add(OperationLogout)
	if cfg.RequestTimeoutTicks == 0 {
		cfg.RequestTimeoutTicks = max(RequestTimeoutHeartbeatsDefault*cfg.Replica.NormalHeartbeatTimeoutTicks, 1)
	}
	h := &MetaHost{cfg: cfg, b: b, machine: metadata.New()}
	h.sm = metaAdapter{h: h}
	h.net = metaNetwork{h: h}
	r, err := vsr.NewReplica(cfg.Replica, newInputStorage(b.Storage, h.answerWaiters), &h.net, &h.sm, b.Clock)
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

// Tick advances the replica's timeouts by one tick, and the host's
// request timeout (waiters.go). A binding that never ticks the host (the
// server's metadata group of one) gets no timeouts: a group of one
// answers every request it prepares, or fails (and then the host answers
// its waiters).
func (h *MetaHost) Tick() {
	h.ticks++
	h.replica.Tick()
	h.answerWaiters()
}

// Step hands the replica a message from a peer of the group.
func (h *MetaHost) Step(m *vsr.Message) {
	h.replica.Step(m)
	h.answerWaiters()
}

// answerWaiters answers the waiters vsr will not, on Host's rules
// (waiters.go; no reply is ever held). It runs after every input.
func (h *MetaHost) answerWaiters() {
	h.answerAbandoned(h.replica, h.cfg.Replica.Bugs, h.ticks, h.cfg.RequestTimeoutTicks, 0, h.b.Replies)
}

// NextTicket returns the ticket the next submission (SubmitRequest,
// SubmitInternal, Submit) gives, for a binding that must know it before an
// answer given inside that call.
func (h *MetaHost) NextTicket() uint64 { return h.waiters.next() }

// Waiting returns how many submitted requests wait for their answers.
func (h *MetaHost) Waiting() int { return h.waiters.len() }

// RequestTimeoutTicks returns the request timeout (MetaConfig's, or its
// default), counted in Tick from the later of a request's submission and
// the replica's last commit.
func (h *MetaHost) RequestTimeoutTicks() uint64 { return h.cfg.RequestTimeoutTicks }

// AnswerCounts returns the host's counts of the answers vsr did not give.
func (h *MetaHost) AnswerCounts() AnswerCounts { return h.answers }

// MetaRequest is one client request to the metadata group.
type MetaRequest struct {
	// Client is the client id; Session its session (the op of its
	// register); Request its request number (0 for a register).
	Client  vsr.Uint128
	Session uint64
	Request uint64
	// Tag identifies the request's content (Iggy's request checksum),
	// returned with a duplicate's cached reply (Reply.Tag); zero: none.
	Tag vsr.Uint128
	// Operation is a metadata.Operation*, OperationRegister or
	// OperationLogout.
	Operation uint8
	// Owner is a register's owner (the user), whose sessions
	// vsr.Config.ClientsPerOwnerMax bounds.
	Owner uint64
	// Body is the operation's body (none for a register or a logout); it
	// is copied.
	Body []byte
}

// SubmitRequest hands the replica a client's request, exactly-once by its
// session's request numbers, and returns its ticket. The answer, exactly
// one, comes through MetaBinding.Replies with that ticket, during this
// call or a later input: the committed reply once the op is applied and
// durable (Replayed when it is a duplicate's cached reply), a disposition,
// an eviction (Reply.Evicted: the client has no session), or the host's
// 57 (waiters.go). A register's reply carries the session in
// Reply.Session.
func (h *MetaHost) SubmitRequest(req MetaRequest) (ticket uint64) {
	operation, body := req.Operation, req.Body
	switch operation {
	case OperationRegister:
		operation, body = vsr.OperationRegister, nil
		if req.Owner != 0 {
			body = vsr.RegisterBody(req.Owner)
		}
		req.Request, req.Session = 0, 0
	case OperationInternal:
		// Only SubmitInternal wraps a body.
		ticket = h.waiters.issue()
		h.b.Replies.Deliver(Reply{Ticket: ticket, Client: req.Client, Request: req.Request, Operation: operation,
			Disposition: vsr.DispositionInvalid, Code: Code(vsr.DispositionInvalid)})
		return ticket
	default:
		tagged := make([]byte, metaTagSize+len(body))
		binary.LittleEndian.PutUint64(tagged[0:], req.Tag.Lo)
		binary.LittleEndian.PutUint64(tagged[8:], req.Tag.Hi)
		copy(tagged[metaTagSize:], body)
		body = tagged
	}
	return h.request(req.Client, req.Session, req.Request, operation, body)
}

// SubmitInternal hands the replica an operation the server commits on its
// own behalf: sessionless (no register, never deduplicated), answered to
// client with request and the ticket it returns, as SubmitRequest's.
func (h *MetaHost) SubmitInternal(client vsr.Uint128, request uint64, operation uint8, body []byte) (ticket uint64) {
	wrapped := make([]byte, 1+len(body))
	wrapped[0] = operation
	copy(wrapped[1:], body)
	return h.request(client, 0, request, OperationInternal, wrapped)
}

// Submit hands the replica a metadata operation. OperationRegister opens
// client's session (with no owner) and OperationLogout ends it (with the
// session's next request number); any other operation is committed as
// SubmitInternal does, sessionless. Clients that want exactly-once use
// SubmitRequest. body is copied. It returns the submission's ticket.
func (h *MetaHost) Submit(client vsr.Uint128, request uint64, operation uint8, body []byte) (ticket uint64) {
	switch operation {
	case OperationRegister:
		return h.SubmitRequest(MetaRequest{Client: client, Operation: operation})
	case OperationLogout:
		s, _ := h.replica.ClientSession(client)
		return h.SubmitRequest(MetaRequest{Client: client, Session: s.Session, Request: max(request, s.Request+1), Operation: operation})
	default:
		return h.SubmitInternal(client, request, operation, body)
	}
}

// request seals and hands one request to the replica, with a waiter for
// its answer, and returns the waiter's ticket.
func (h *MetaHost) request(client vsr.Uint128, session, request uint64, operation uint8, body []byte) uint64 {
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
	visible := operation
	if visible == vsr.OperationRegister {
		visible = OperationRegister
	}
	// The waiter goes in before the replica sees the request: vsr may
	// answer inside Request. A sessioned request is matched by its
	// client and number (a duplicate's cached reply carries the checksum
	// of the copy that committed); a sessionless one by its checksum too.
	ticket, ok := h.waiters.add(waiter{client: client, request: request, operation: visible, checksum: m.Checksum,
		sessioned: operation != OperationInternal, view: h.replica.View(), since: h.ticks})
	if !ok {
		h.answers.Overflow++
		h.b.Replies.Deliver(Reply{Ticket: ticket, Client: client, Request: request, Operation: visible,
			Disposition: vsr.DispositionOverloaded, Code: Code(vsr.DispositionOverloaded)})
		return ticket
	}
	wasSubmitting, outer := h.submitting, h.waiters.submitting
	if !wasSubmitting {
		h.submitting, h.appliedBefore = true, h.replica.CommitNumber()
	}
	h.waiters.submitting = ticket
	h.replica.Request(m)
	h.submitting, h.waiters.submitting = wasSubmitting, outer
	h.answerWaiters()
	return ticket
}

// SyncSeals makes the seals written lazily durable (vsr.Config.SealLazily:
// a prepare is committed once durable, and its seal rides the next sync):
// the binding calls it when the group is idle.
func (h *MetaHost) SyncSeals() { h.replica.SyncSeals() }

// Session returns client's session in the group's client table (applied
// state: what a restart restores too).
func (h *MetaHost) Session(client vsr.Uint128) (vsr.ClientSession, bool) {
	return h.replica.ClientSession(client)
}

// Admits reports whether a register of a new client of owner would find
// room in the client table without ending another owner's session.
func (h *MetaHost) Admits(owner uint64) bool { return h.replica.ClientTableAdmits(owner) }

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
	var tag []byte
	switch operation {
	case OperationInternal:
		if len(body) == 0 {
			// Never prepared by SubmitInternal; the journal's checksum
			// vouches for what reaches here, so this is a bug, answered
			// as the machine answers an unknown operation.
			operation, body = 0, nil
		} else {
			operation, body = body[0], body[1:]
		}
	default:
		if len(body) >= metaTagSize {
			tag, body = body[:metaTagSize], body[metaTagSize:]
		} else {
			tag, body = make([]byte, metaTagSize), nil
		}
	}
	var reply []byte
	var effects []metadata.Effect
	switch operation {
	case OperationLogout:
		// A session op: vsr ends the session; the machine never sees it.
	default:
		reply = h.machine.Apply(op, timestamp, operation, body)
		effects = h.machine.TakeEffects()
	}
	h.b.Effects.Applied(h.machine, op, timestamp, operation, body, effects)
	if tag != nil {
		return append(append(make([]byte, 0, len(tag)+len(reply)), tag...), reply...)
	}
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
	h := n.h
	if m.Command == vsr.CommandEviction {
		// The client has no session (never had, logged out, or its
		// session was the table's least recent and a register ended it).
		// Met by the request being submitted, it is that request's
		// answer; otherwise a notice (Ticket 0).
		r := Reply{Client: client, Evicted: true}
		if i := h.waiters.matchSubmitting(client); i >= 0 {
			w := h.waiters.take(i)
			r.Ticket, r.Request, r.Operation = w.ticket, w.request, w.operation
		}
		h.b.Replies.Deliver(r)
		return
	}
	if m.Command != vsr.CommandReply {
		return
	}
	r := Reply{Client: client, Request: m.Request, Operation: m.Operation, Disposition: m.Disposition}
	if r.Operation == vsr.OperationRegister {
		r.Operation = OperationRegister
	}
	i := h.waiters.match(client, m.Request, m.Context)
	if i < 0 {
		h.answers.Unowed++
		return // answered already (the request timed out), or not submitted here
	}
	r.Ticket = h.waiters.take(i).ticket
	if m.Disposition != vsr.DispositionNone {
		r.Code = Code(m.Disposition)
		h.b.Replies.Deliver(r)
		return
	}
	r.Op = m.Op
	r.Replayed = h.submitting && m.Op <= h.appliedBefore
	switch {
	case r.Operation == OperationRegister:
		r.Session = m.Session
	case r.Operation == OperationInternal || len(m.Body) < metaTagSize:
		r.Body = m.Body
	default:
		r.Tag = vsr.Uint128{Lo: binary.LittleEndian.Uint64(m.Body[0:]), Hi: binary.LittleEndian.Uint64(m.Body[8:])}
		r.Body = m.Body[metaTagSize:]
		r.Session = m.Session
	}
	h.b.Replies.Deliver(r)
}
