package sim

import (
	"encoding/binary"

	"github.com/stratabroker/strata/vsr"
)

// clientIDBase offsets simulated client ids so that they never look like
// small numbers used elsewhere.
const clientIDBase = 1_000

// client is a simulated VSR client: it registers a session, then sends one
// request at a time (append or read), retransmitting to every replica when
// a request times out, and records each operation in the history. It
// speaks vsr.Message directly and is driven by the run's tick loop.
type client struct {
	index         int // 0..ClientCount-1
	node          int // network node number
	id            vsr.Uint128
	cluster       uint64
	prng          *PRNG
	params        *Params
	session       uint64
	requestNumber uint64
	// inflight is the sealed request awaiting its reply, or nil.
	inflight        *vsr.Message
	inflightHistory int    // history index, -1 for the register request
	sentTick        uint64 // last (re)transmission
	firstSentTick   uint64
	timeoutTicks    uint64
	nextRequestTick uint64
	view            uint64
	requestsSent    int
	appended        uint64 // appends this client made, for unique values
	positionMax     uint64 // highest position seen, for reads
	evicted         bool
	stopped         bool // no new requests (liveness phase)
	retries         uint64
}

func newClient(index, node int, cluster uint64, params *Params, prng *PRNG) *client {
	return &client{
		index:           index,
		node:            node,
		id:              vsr.Uint128{Lo: clientIDBase + uint64(index), Hi: cluster},
		cluster:         cluster,
		prng:            prng,
		params:          params,
		inflightHistory: -1,
		nextRequestTick: uint64(prng.Range(1, params.ThinkTicksMax)),
	}
}

// done reports whether the client has nothing in flight and will send no
// more.
func (c *client) done() bool {
	return c.inflight == nil && (c.stopped || c.evicted || c.requestsSent >= c.params.RequestsPerClient)
}

// outstanding reports whether a request awaits its reply.
func (c *client) outstanding() bool { return c.inflight != nil && !c.evicted }

// tick sends a new request or retransmits a timed-out one.
func (c *client) tick(cl *Cluster) {
	if c.evicted {
		return
	}
	now := cl.now
	if c.inflight != nil {
		if now-c.sentTick >= c.timeoutTicks {
			c.retries++
			c.sentTick = now
			for r := 0; r < c.params.ReplicaCount; r++ {
				cl.clientSend(c, r, c.inflight.Clone())
			}
		}
		return
	}
	if now < c.nextRequestTick {
		return
	}
	if c.session == 0 {
		c.send(cl, vsr.OperationRegister, nil, -1)
		return
	}
	if c.stopped || c.requestsSent >= c.params.RequestsPerClient {
		return
	}
	c.requestNumber++
	c.requestsSent++
	var kind HistoryKind
	var operation uint8
	var argument uint64
	if c.prng.Chance(c.params.ReadPPM) {
		kind, operation = HistoryRead, OperationRead
		argument = c.prng.Uint64N(c.positionMax + 3)
	} else {
		kind, operation = HistoryAppend, OperationAppend
		c.appended++
		argument = uint64(c.index+1)<<32 | c.appended
	}
	h := cl.history.Invoke(c.index, c.requestNumber, kind, argument, now)
	padding := 0
	if c.params.PaddingBytesMax > 0 {
		padding = c.prng.IntN(c.params.PaddingBytesMax + 1)
	}
	body := encodeRequestBodyPadded(make([]byte, 0, requestBodySize+padding), c.id.Lo, c.requestNumber, argument, padding)
	c.send(cl, operation, body, h)
}

func (c *client) send(cl *Cluster, operation uint8, body []byte, historyIndex int) {
	m := &vsr.Message{Body: body}
	m.Command = vsr.CommandRequest
	m.Cluster = c.cluster
	m.Client = c.id
	m.Request = c.requestNumber
	m.Session = c.session
	m.Operation = operation
	m.View = c.view
	primary := int(c.view % uint64(c.params.ReplicaCount))
	m.Replica = uint8(primary)
	m.Seal()
	c.inflight = m
	c.inflightHistory = historyIndex
	c.sentTick = cl.now
	c.firstSentTick = cl.now
	c.timeoutTicks = uint64(c.params.RequestTimeoutTicks + c.prng.IntN(c.params.RequestTimeoutTicks/4+1))
	cl.clientSend(c, primary, m.Clone())
}

// receive handles a reply or an eviction.
func (c *client) receive(cl *Cluster, m *vsr.Message) {
	if m.Client != c.id || c.inflight == nil || !m.Valid() {
		return
	}
	switch m.Command {
	case vsr.CommandEviction:
		c.evicted = true
		cl.counters.Evictions++
		return
	case vsr.CommandReply:
	default:
		return
	}
	if m.Request != c.inflight.Request || m.Operation != c.inflight.Operation {
		return
	}
	if m.View > c.view {
		c.view = m.View
	}
	c.inflight = nil
	c.nextRequestTick = cl.now + uint64(c.prng.Range(1, c.params.ThinkTicksMax))
	if c.inflightHistory < 0 {
		c.session = m.Session
		if c.session == 0 {
			c.session = m.Op
		}
		return
	}
	var position, value uint64
	var found bool
	switch m.Operation {
	case OperationAppend:
		if len(m.Body) == appendReplySize {
			position = binary.LittleEndian.Uint64(m.Body)
		} else {
			cl.malformedReply(c, m)
		}
		if position > c.positionMax {
			c.positionMax = position
		}
	case OperationRead:
		if len(m.Body) == readReplySize {
			found = m.Body[0] == 1
			value = binary.LittleEndian.Uint64(m.Body[1:])
		} else {
			cl.malformedReply(c, m)
		}
	}
	cl.history.Return(c.inflightHistory, cl.now, m.Op, position, found, value)
}
