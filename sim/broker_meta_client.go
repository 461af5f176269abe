package sim

// The broker workload's metadata clients: the bodies of their writes,
// what each client does next, and what it makes of an answer.

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/metadata"
)

// encodeMetaBody builds the body of a metadata write, its envelope naming
// the client and the request as the server's does.
func encodeMetaBody(client int, request uint64, op metaOp, topic int) []byte {
	env := metadata.Envelope{UserID: metadata.RootUserID, ClientLo: clientIDBase + uint64(client), ClientHi: simCluster, Request: request}
	switch op {
	case metaCreateStream:
		return metadata.EncodeOp(env, &metadata.CreateStream{Name: brokerStreamName})
	case metaDeleteTopic:
		return metadata.EncodeOp(env, &metadata.DeleteTopic{Stream: metadata.NamedID(brokerStreamName), Topic: metadata.NamedID(metaTopicName(topic))})
	}
	return metadata.EncodeOp(env, &metadata.CreateTopic{Stream: metadata.NamedID(brokerStreamName), PartitionsCount: 1, Name: metaTopicName(topic),
		Options: metadata.TopicOptions{MessageExpiryMicros: metadata.NeverExpires, CompressionAlgorithm: metadata.CompressionNone,
			MaxTopicSizeBytes: metadata.NeverExpires, SegmentSizeBytes: 1 << 30, MessagesRequiredToSave: 1024,
			SizeOfMessagesRequiredToSaveBytes: 1 << 20, Durability: metadata.DurabilityReplicated, ConsumerOffsetDurability: metadata.DurabilityReplicated}})
}

// clientTick drives client c's metadata call, or starts one; it reports
// whether the client is busy with the metadata plane this tick.
func (m *brokerMeta) clientTick(c *brokerClient) bool {
	w := m.w
	mc := m.clients[c.index]
	if call := mc.call; call != nil {
		switch {
		case call.retryAt != 0:
			if w.now >= call.retryAt {
				m.invoke(c)
			}
		case w.now-call.sentTick > call.timeout:
			call.timeout = min(2*call.timeout, brokerTimeoutBackoffMax*uint64(w.params.RequestTimeoutTicks))
			mc.target = (mc.target + 1) % w.n
			m.invoke(c)
		}
		return true
	}
	need := -1
	for g, n := range mc.needTopic {
		if n {
			need = g
			break
		}
	}
	needs := mc.needStream || need >= 0
	// A need (a partition request refused for its missing topic) runs
	// while that request waits to be retried, also in the liveness phase;
	// an operation of the client's own only when it is idle.
	//
	// In the liveness phase a need runs only for a partition request the
	// phase waits for: one to a group whose liveness it checks. A request
	// to an unchecked group (waived: its replicas recover forever) never
	// finishes and keeps being retried; a node that has not applied the
	// topic's create yet refuses it again, and the create-topic that
	// refusal started would be work begun after the phase found the
	// clients done (seed 11332: client 1's create-topic for group 2
	// committed at tick 2772, the phase converged, and a retry of its partition request
	// to the waived group 2, refused at 2778 by core node 2 that applied
	// the create a tick later, started create-topic request 2 during the
	// read probes, left waiting at the end-of-run check).
	waiting := c.call != nil && c.call.retryAt != 0
	if c.stopped {
		waiting = waiting && w.livenessChecked(c.call.group)
		needs = needs && waiting
	}
	idle := c.call == nil && !c.stopped && w.now >= c.nextTick
	if !(needs && (waiting || c.call == nil)) && !idle {
		return false
	}
	var op metaOp
	topic := -1
	switch {
	case !mc.registered:
		op = metaRegister
	case mc.needStream:
		op = metaCreateStream
	case need >= 0:
		op, topic = metaCreateTopic, need
	default:
		if c.started >= w.params.RequestsPerClient || !mc.prng.Chance(metaOpSharePPM) {
			return false
		}
		c.started++
		switch x := mc.prng.IntN(10); {
		case x < 4:
			op = metaCreateTopic
		case x < 7:
			op = metaDeleteTopic
		default:
			op = metaGetTopic
		}
		topic = brokerGroupsMax + mc.prng.IntN(brokerScratchTopics)
		if op == metaGetTopic && mc.prng.Chance(PPM/3) {
			topic = mc.prng.IntN(w.groups)
		}
	}
	req := metaRequest{op: op, topic: topic, session: mc.session}
	if op != metaRegister && op != metaGetTopic {
		mc.request++
		req.request = mc.request
		req.body = encodeMetaBody(c.index, req.request, op, topic)
	}
	w.events++
	m.history = append(m.history, metaEntry{client: c.index, op: op, topic: topic, request: req.request, call: w.events})
	mc.call = &metaCall{entry: len(m.history) - 1, req: req, timeout: uint64(w.params.RequestTimeoutTicks)}
	m.invoke(c)
	return true
}

// invoke sends the client's metadata call (again, under the same request
// number).
func (m *brokerMeta) invoke(c *brokerClient) {
	w := m.w
	mc := m.clients[c.index]
	call := mc.call
	if call.invoke != 0 {
		m.counters.retried++
		c.retries++
	}
	c.request++
	call.invoke, call.retryAt, call.sentTick = c.request, 0, w.now
	if call.req.op == metaGetTopic {
		// A read has no session request number: its answer is matched by
		// the invocation (never by 0, which a register's late reply has).
		call.req.request = 1<<62 | c.request
	}
	req := call.req
	w.network.Send(w.now, c.node, mc.target, &brokerPacket{req: &brokerRequest{client: c.index, request: c.request, group: brokerMetaGroup, meta: &req}})
}

// clientReceive handles an answer to a metadata call.
func (m *brokerMeta) clientReceive(c *brokerClient, rep *brokerReply) {
	w := m.w
	mc := m.clients[c.index]
	call := mc.call
	if call == nil || call.retryAt != 0 || rep.request != call.req.request {
		return
	}
	e := &m.history[call.entry]
	w.logf("client %d metadata %s request %d: code %d op %d hint %d", c.index, metaOpNames[call.req.op], call.req.request, rep.code, rep.metaOp, rep.hint)
	retry := func(other bool) {
		switch {
		case other && rep.hint >= 0 && rep.hint < w.n:
			mc.target = rep.hint
		case other:
			mc.target = (mc.target + 1) % w.n
		}
		call.retryAt = w.now + uint64(mc.prng.Range(1, 20))
	}
	code := wire.ErrorCode(rep.code)
	switch {
	case code == wire.ErrTransientNotAccepted:
		retry(true)
		return
	case code == wire.ErrTransientNotCommitted:
		retry(false)
		return
	case call.req.op == metaGetTopic && code != wire.ErrorCodeOK && uint32(code) != uint32(metadata.CodeStreamIDNotFound):
		retry(true)
		return
	}
	w.events++
	e.done, e.ret = true, w.events
	switch {
	case code == wire.ErrRequestAlreadyApplied:
		// Applied, but its reply is no longer cached: the outcome is not
		// known to the client.
	case call.req.op == metaGetTopic:
		e.known, e.code, e.found, e.id = true, rep.code, rep.metaFound, rep.metaID
	default:
		e.known, e.code, e.id, e.appliedAt = true, rep.code, rep.metaID, rep.metaOp
		if call.req.op != metaRegister {
			key := [2]uint64{clientIDBase + uint64(c.index), call.req.request}
			if at, ok := m.appliedAt[key]; !ok || at != rep.metaOp {
				w.failAs("exactly-once", fmt.Errorf("client %d: the committed reply to metadata request %d (%s) names op %d; the request was applied at op %d (applied: %v)",
					c.index, call.req.request, metaOpNames[call.req.op], rep.metaOp, at, ok))
			}
		}
	}
	mc.call = nil
	if c.call == nil {
		c.nextTick = w.now + uint64(c.prng.Range(1, w.params.ThinkTicksMax))
	}
	switch call.req.op {
	case metaRegister:
		if code == wire.ErrorCodeOK || code == wire.ErrRequestAlreadyApplied {
			mc.registered, mc.session = true, rep.metaOp
			if code == wire.ErrRequestAlreadyApplied || rep.metaOp == 0 {
				w.failAs("metadata", fmt.Errorf("client %d: register answered %d without its session", c.index, code))
			}
		}
	case metaCreateStream:
		mc.needStream = false
	case metaCreateTopic:
		if call.req.topic < w.groups {
			mc.needTopic[call.req.topic] = false
			if uint32(code) == uint32(metadata.CodeStreamIDNotFound) {
				mc.needStream, mc.needTopic[call.req.topic] = true, true
			}
		}
	}
}

// topicMissing notes a partition request refused because its topic does
// not exist at the node: the client creates the topic (and the stream)
// before it retries the request (which stays open: an earlier invocation
// may still commit).
func (m *brokerMeta) topicMissing(c *brokerClient, g int) {
	m.clients[c.index].needTopic[g] = true
}
