package sim

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// sendOutcome is what a client learned of one invocation of a partition
// operation.
type sendOutcome uint8

const (
	// outcomePending: no answer (yet): it may have taken effect or not.
	outcomePending sendOutcome = iota
	// outcomeOK: committed (a send's base offset is known).
	outcomeOK
	// outcomeUnknown: answered 57 (not committed yet, outcome unknown):
	// it may still take effect.
	outcomeUnknown
	// outcomeNotApplied: answered 58 (never admitted): it took no effect.
	outcomeNotApplied
	// outcomeRejected: committed with the machine's error (a store of an
	// offset beyond the partition's current offset, 4100).
	outcomeRejected
)

// brokerEntry is one invocation in the broker history.
type brokerEntry struct {
	op       brokerOp
	client   int
	group    int
	request  uint64
	call     uint64 // event order of the invocation
	ret      uint64 // event order of the answer (when done)
	callTick uint64
	retTick  uint64
	done     bool // answered
	outcome  sendOutcome
	code     uint32
	// send
	logical int
	firstID uint64
	count   int
	base    uint64
	// poll
	start   uint64
	max     uint32
	offsets []uint64
	ids     []uint64
	// store (value), read offset (value, found)
	value uint64
	found bool
}

// brokerLogical is one logical send: the batch a client sends until one
// invocation of it is acknowledged; each retry is a new invocation of the
// same batch (the same message ids).
type brokerLogical struct {
	client   int
	group    int
	firstID  uint64
	count    int
	attempts []int // history indexes
}

// brokerHistory is every invocation of a broker run, in invocation order.
type brokerHistory struct {
	entries  []brokerEntry
	logicals []brokerLogical
}

// brokerCall is a client's operation in progress.
type brokerCall struct {
	op        brokerOp
	group     int
	request   uint64
	entry     int
	logical   int
	body      []byte
	start     uint64
	count     uint32
	value     uint64
	sentTick  uint64
	firstTick uint64
	retryAt   uint64 // waiting to retry (0: in flight)
	// timeout is how long this invocation waits for an answer: it doubles
	// with every timeout of the call (up to brokerTimeoutBackoffMax times
	// the drawn timeout), so that retries of an at-least-once send do not
	// pile up in a slow primary's queue faster than it commits them.
	timeout uint64
	// busySince is when the node asked first answered 58 naming itself
	// the primary (overloaded: its pipeline and request queue are full)
	// in the current run of such answers (0: none): the client keeps
	// asking that node for up to its timeout, then tries another (a
	// primary cut off from its backups stays overloaded).
	busySince uint64
}

// brokerTimeoutBackoffMax bounds a call's timeout backoff.
const brokerTimeoutBackoffMax = 4

// brokerClient is a simulated broker client: one operation at a time on
// a drawn group, sent to the node it believes is the group's primary,
// retried (as a new invocation) on 57/58 and on timeout.
type brokerClient struct {
	w        *brokerWorld
	index    int
	node     int
	prng     *PRNG
	stopped  bool
	started  int // logical operations started
	request  uint64
	nextID   uint64
	call     *brokerCall
	nextTick uint64
	target   []int    // per group: the node to ask
	pos      []uint64 // per group: the next offset to poll
	polled   []bool   // per group: pos is an offset this client polled
	retries  uint64
}

func newBrokerClient(w *brokerWorld, index int, prng *PRNG) *brokerClient {
	c := &brokerClient{w: w, index: index, node: w.n + index, prng: prng,
		target: make([]int, w.groups), pos: make([]uint64, w.groups), polled: make([]bool, w.groups)}
	for g := range c.target {
		c.target[g] = int(vsr.PrimaryIndex(0, uint64(g), uint8(w.n)))
	}
	c.nextTick = uint64(prng.Range(1, w.params.ThinkTicksMax))
	return c
}

// brokerMessageID returns client c's k-th message id (k from 1): unique in
// the run.
func brokerMessageID(c int, k uint64) uint64 { return uint64(c+1)<<40 | k }

func (c *brokerClient) tick() {
	w := c.w
	if w.meta != nil && w.meta.clientTick(c) {
		return
	}
	if call := c.call; call != nil {
		switch {
		case call.retryAt != 0:
			if w.now >= call.retryAt {
				c.invoke()
			}
		case w.now-call.sentTick > call.timeout:
			// The outcome stays unknown (the entry stays open); ask
			// another node, and wait longer.
			call.timeout = min(2*call.timeout, brokerTimeoutBackoffMax*uint64(w.params.RequestTimeoutTicks))
			c.retries++
			c.target[call.group] = (c.target[call.group] + 1) % w.n
			c.invoke()
		}
		return
	}
	if c.stopped || c.started >= w.params.RequestsPerClient || w.now < c.nextTick {
		return
	}
	c.started++
	g := c.prng.IntN(w.groups)
	call := &brokerCall{group: g, firstTick: w.now, timeout: uint64(w.params.RequestTimeoutTicks)}
	switch x := c.prng.IntN(100); {
	case x < 50:
		call.op = brokerSend
		n := c.prng.Range(1, w.params.BatchMessagesMax)
		var bb wire.BatchBuilder
		first := c.nextID + 1
		for k := 0; k < n; k++ {
			c.nextID++
			id := brokerMessageID(c.index, c.nextID)
			payload := fmt.Appendf(nil, "c%d-%d", c.index, c.nextID)
			if err := bb.Add(wire.MessageID{Low: id}, payload, nil, w.now*tickMicros+uint64(k)); err != nil {
				panic(fmt.Sprintf("sim: batch: %v", err))
			}
		}
		batch, err := bb.Finish()
		if err != nil {
			panic(fmt.Sprintf("sim: batch: %v", err))
		}
		call.body = partition.EncodeSendMessages(partition.Envelope{UserID: 1}, batch)
		w.history.logicals = append(w.history.logicals, brokerLogical{client: c.index, group: g, firstID: brokerMessageID(c.index, first), count: n})
		call.logical = len(w.history.logicals) - 1
	case x < 80:
		call.op = brokerPoll
		call.start = c.pos[g]
		call.count = uint32(c.prng.Range(1, brokerPollMessagesMax))
	case x < 92 && c.polled[g]:
		call.op = brokerStore
		call.value = c.pos[g] - 1
		call.body = partition.StoreConsumerOffset{Consumer: consumerKey(c.index), Offset: call.value}.Encode(partition.Envelope{UserID: 1})
	default:
		call.op = brokerReadOffset
	}
	c.call = call
	c.invoke()
}

// invoke sends a new invocation of the current call.
func (c *brokerClient) invoke() {
	w := c.w
	call := c.call
	c.request++
	call.request = c.request
	call.retryAt = 0
	call.sentTick = w.now
	w.events++
	e := brokerEntry{op: call.op, client: c.index, group: call.group, request: call.request, call: w.events, callTick: w.now,
		start: call.start, max: call.count, value: call.value, logical: -1}
	if call.op == brokerSend {
		l := &w.history.logicals[call.logical]
		e.logical, e.firstID, e.count = call.logical, l.firstID, l.count
		l.attempts = append(l.attempts, len(w.history.entries))
	}
	w.history.entries = append(w.history.entries, e)
	call.entry = len(w.history.entries) - 1
	req := &brokerRequest{client: c.index, request: call.request, group: call.group, op: call.op, body: call.body, start: call.start, count: call.count}
	w.network.Send(w.now, c.node, c.target[call.group], &brokerPacket{req: req})
}

// retry schedules a new invocation after a short pause; other moves on
// first (the answer said "not here"): to the node the answer named as
// primary, or else to the next node. An answer naming the node asked as
// the primary (58 overloaded: "not now", not "not here") keeps the
// client on that node for up to the call's timeout: moving on would send
// it to a backup, which redirects it back, or to a node it cannot reach,
// where it waits out a whole timeout while the primary admits the
// clients that stayed.
func (c *brokerClient) retry(other bool, hint int) {
	w := c.w
	c.retries++
	call := c.call
	g := call.group
	busy := other && hint == c.target[g]
	if !busy {
		call.busySince = 0
	} else if call.busySince == 0 {
		call.busySince = w.now
	}
	switch {
	case busy && w.now-call.busySince <= call.timeout:
		// Stay: the primary admits the request once its pipeline drains.
	case busy:
		call.busySince = 0
		c.target[g] = (c.target[g] + 1) % w.n
	case other && hint >= 0 && hint < w.n:
		c.target[g] = hint
	case other:
		c.target[g] = (c.target[g] + 1) % w.n
	}
	call.retryAt = w.now + uint64(c.prng.Range(1, 20))
}

func (c *brokerClient) receive(rep *brokerReply) {
	w := c.w
	call := c.call
	if rep != nil && rep.meta {
		if w.meta != nil {
			w.meta.clientReceive(c, rep)
		}
		return
	}
	if rep == nil || call == nil || call.retryAt != 0 || rep.request != call.request {
		return // an answer to an invocation given up on
	}
	e := &w.history.entries[call.entry]
	answer := func(o sendOutcome) {
		w.events++
		e.done, e.ret, e.retTick, e.outcome, e.code = true, w.events, w.now, o, rep.code
	}
	code := wire.ErrorCode(rep.code)
	if w.meta != nil && uint32(code) == uint32(metadata.CodeTopicIDNotFound) {
		// The node's metadata holds no topic for the group: nothing was
		// submitted; the client creates the topic, then retries.
		if call.op == brokerSend || call.op == brokerStore {
			answer(outcomeNotApplied)
		}
		w.meta.topicMissing(c, call.group)
		c.retry(true, rep.hint)
		return
	}
	switch call.op {
	case brokerSend, brokerStore:
		switch {
		case code == wire.ErrorCodeOK:
			answer(outcomeOK)
			e.base = rep.base
		case code == wire.ErrTransientNotAccepted:
			answer(outcomeNotApplied)
			c.retry(true, rep.hint)
			return
		case call.op == brokerStore && uint32(code) == partition.CodeInvalidOffset:
			answer(outcomeRejected)
		default:
			// 57, or a committed op whose effects failed (a fenced
			// partition): the outcome is unknown; the entry stays open.
			c.retry(code != wire.ErrTransientNotCommitted, rep.hint)
			return
		}
	case brokerPoll, brokerReadOffset:
		if code != wire.ErrorCodeOK {
			c.retry(true, rep.hint) // the read changed nothing: its entry is left out
			return
		}
		answer(outcomeOK)
		e.offsets, e.ids, e.value, e.found = rep.offsets, rep.ids, rep.value, rep.found
		if call.op == brokerPoll && len(rep.offsets) > 0 {
			last := rep.offsets[len(rep.offsets)-1]
			if last+1 > c.pos[call.group] {
				c.pos[call.group] = last + 1
				c.polled[call.group] = true
			}
		}
	}
	c.call = nil
	c.nextTick = w.now + uint64(c.prng.Range(1, w.params.ThinkTicksMax))
}
