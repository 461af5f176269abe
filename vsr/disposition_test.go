package vsr

import (
	"errors"
	"testing"
)

// request builds a sealed request of client id.
func (c *testCluster) request(id uint64, to int, operation uint8, session, request uint64, body []byte) *Message {
	m := &Message{Header: Header{Command: CommandRequest, Cluster: c.cfg.Cluster, Group: c.cfg.Group, Client: Uint128{Lo: id},
		Operation: operation, Session: session, Request: request, Replica: uint8(to)}, Body: body}
	m.Seal()
	return m
}

// takeClientMessages removes and returns the queued messages for clients.
func (c *testCluster) takeClientMessages() []*Message {
	var out []*Message
	kept := c.queue[:0]
	for _, e := range c.queue {
		if e.to < 0 {
			out = append(out, e.m)
		} else {
			kept = append(kept, e)
		}
	}
	c.queue = kept
	return out
}

// expectAnswer steps m into replica to and checks that the replica answers
// exactly once, with disposition d, naming the request.
func (c *testCluster) expectAnswer(t *testing.T, to int, m *Message, d Disposition) {
	t.Helper()
	c.nodes[to].replica.Step(m)
	c.expectAnswers(t, []*Message{m}, d)
}

func (c *testCluster) expectAnswers(t *testing.T, requests []*Message, d Disposition) {
	t.Helper()
	got := c.takeClientMessages()
	if len(got) != len(requests) {
		t.Fatalf("%d answers to %d requests, want %s: %v", len(got), len(requests), d, got)
	}
	for i, a := range got {
		m := requests[i]
		if a.Command != CommandReply || a.Disposition != d || a.Client != m.Client || a.Request != m.Request ||
			a.Operation != m.Operation || a.Context != m.Checksum || a.Group != c.cfg.Group || len(a.Body) != 0 || !a.Valid() {
			t.Fatalf("answer %d: %s (disposition %s), want %s to client %d request %d", i, a, a.Disposition, d, m.Client.Lo, m.Request)
		}
	}
}

func (c *testCluster) primaryIndex() int {
	for i, n := range c.nodes {
		if !n.down && n.replica.Primary() {
			return i
		}
	}
	c.t.Fatalf("no primary:\n%s", c.status())
	return -1
}

// register opens a session for client id and returns its session number.
func (c *testCluster) register(t *testing.T, id uint64) uint64 {
	t.Helper()
	p := c.primaryIndex()
	c.nodes[p].replica.Step(c.request(id, p, OperationRegister, 0, 0, nil))
	replies := c.deliverCollect(id)
	if len(replies) != 1 || replies[0].Disposition != DispositionNone {
		t.Fatalf("register: %v", replies)
	}
	return replies[0].Session
}

func TestDispositionNotPrimary(t *testing.T) {
	c := newTestCluster(t, groupTestConfig(3, 0))
	c.expectAnswer(t, 1, c.request(9, 1, OperationUserMin, 1, 1, []byte("x")), DispositionNotPrimary)
	// A fenced replica (storage failed) admits nothing either.
	c.nodes[0].replica.fail(errors.New("disk gone"))
	c.expectAnswer(t, 0, c.request(9, 0, OperationUserMin, 1, 1, []byte("x")), DispositionNotPrimary)
}

func TestDispositionViewChangeAndRecovery(t *testing.T) {
	c := newTestCluster(t, groupTestConfig(3, 0))
	c.nodes[1].replica.startViewChange(1)
	c.takeClientMessages()
	c.expectAnswer(t, 1, c.request(9, 1, OperationUserMin, 1, 1, []byte("x")), DispositionViewChange)
	// A replicated replica restarted after a crash recovers before serving.
	c = newTestCluster(t, groupTestConfig(3, 0))
	c.crash(2)
	c.start(2)
	if c.nodes[2].replica.Status() != StatusRecovering {
		t.Fatalf("restarted replica: %s", c.nodes[2].replica.Status())
	}
	c.expectAnswer(t, 2, c.request(9, 2, OperationUserMin, 1, 1, []byte("x")), DispositionViewChange)
}

func TestDispositionBehindAndInvalidSession(t *testing.T) {
	c := newTestCluster(t, groupTestConfig(3, 0))
	// A session this primary has not applied (its register may be in a
	// pipeline it has not caught up with).
	c.expectAnswer(t, 0, c.request(9, 0, OperationUserMin, 99, 1, []byte("x")), DispositionBehind)
	session := c.register(t, 9)
	// A caught-up primary and a session newer than the client's.
	c.register(t, 10)
	c.expectAnswer(t, 0, c.request(9, 0, OperationUserMin, session+1, 1, []byte("x")), DispositionInvalid)
	c.expectAnswer(t, 0, c.request(9, 0, 3, session, 1, nil), DispositionInvalid)
}

func TestDispositionInFlightAndAlreadyApplied(t *testing.T) {
	c := newTestCluster(t, groupTestConfig(3, 0))
	session := c.register(t, 9)
	first := c.request(9, 0, OperationUserMin, session, 1, []byte("a"))
	c.nodes[0].replica.Step(first)
	again := c.request(9, 0, OperationUserMin, session, 1, []byte("a"))
	c.expectAnswer(t, 0, again, DispositionInFlight)
	c.deliverCollect(9)
	c.nodes[0].replica.Step(c.request(9, 0, OperationUserMin, session, 2, []byte("b")))
	c.deliverCollect(9)
	// Request 1 is below the session's latest and its reply is gone.
	c.expectAnswer(t, 0, c.request(9, 0, OperationUserMin, session, 1, []byte("a")), DispositionAlreadyApplied)
}

func TestDispositionTooLarge(t *testing.T) {
	cfg := groupTestConfig(3, 0)
	cfg.Sessionless.Add(OperationUserMin)
	c := newTestCluster(t, cfg)
	c.expectAnswer(t, 0, c.request(9, 0, OperationUserMin, 0, 1, make([]byte, cfg.MessageSizeMax)), DispositionTooLarge)
}

// TestDispositionOverloadedAndDropped fills the pipeline and the request
// queue, overflows them, then makes the primary leave its view: the
// overflow is told it was not accepted, the queued and the uncommitted
// prepared requests that their outcome is unknown.
func TestDispositionOverloadedAndDropped(t *testing.T) {
	cfg := groupTestConfig(3, 0)
	cfg.Sessionless.Add(OperationUserMin)
	cfg.RequestQueueMax = 2
	c := newTestCluster(t, cfg)
	primary := c.nodes[0].replica
	var admitted []*Message
	for i := range int(cfg.PipelinePrepareMax) + int(cfg.RequestQueueMax) {
		m := c.request(uint64(20+i), 0, OperationUserMin, 0, 1, []byte{byte(i)})
		primary.Step(m)
		admitted = append(admitted, m)
	}
	if got := c.takeClientMessages(); len(got) != 0 {
		t.Fatalf("admitted requests answered: %v", got)
	}
	c.expectAnswer(t, 0, c.request(30, 0, OperationUserMin, 0, 1, []byte("over")), DispositionOverloaded)
	primary.startViewChange(1)
	// The queued ones first, then the pipeline in op order.
	queued := admitted[cfg.PipelinePrepareMax:]
	prepared := admitted[:cfg.PipelinePrepareMax]
	c.expectAnswers(t, append(append([]*Message(nil), queued...), prepared...), DispositionDropped)
}

// TestDispositionDroppedOnStartView isolates the primary with uncommitted
// prepares; the others elect a new primary; once healed, the old primary
// learns of the new view from a StartView and answers its clients.
func TestDispositionDroppedOnStartView(t *testing.T) {
	cfg := groupTestConfig(3, 0)
	cfg.Sessionless.Add(OperationUserMin)
	c := newTestCluster(t, cfg)
	c.group = []int{1, 2, 2}
	m := c.request(9, 0, OperationUserMin, 0, 1, []byte("lost?"))
	c.nodes[0].replica.Step(m)
	c.deliver(false, 1000)
	for ticks := 0; !c.nodes[1].replica.Primary() && ticks < 1000; ticks++ {
		for _, i := range []int{1, 2} {
			c.nodes[i].replica.Tick()
		}
		c.deliver(false, 1000)
	}
	if !c.nodes[1].replica.Primary() {
		t.Fatalf("no new primary:\n%s", c.status())
	}
	c.takeClientMessages()
	c.group = []int{0, 0, 0}
	// The new primary's StartView reaches the old one (a backup asking
	// for it, or the new primary's broadcast).
	sv := &Message{Header: Header{Command: CommandStartView, View: c.nodes[1].replica.View(), LogView: c.nodes[1].replica.LogView(),
		Op: c.nodes[1].replica.OpNumber(), Commit: c.nodes[1].replica.CommitMax(), CheckpointOp: c.nodes[1].replica.CheckpointOp()},
		Body: c.nodes[1].replica.chainBody()}
	c.nodes[1].replica.stamp(sv)
	sv.Seal()
	c.nodes[0].replica.Step(sv)
	c.expectAnswers(t, []*Message{m}, DispositionDropped)
}

// TestDispositionOverloadedAtWALBytesMax: WALBytesMax bounds the prepares
// above the checkpoint and the requests queued behind a full pipeline
// together. Large requests fill the pipeline and then the queue until
// their bytes would pass the bound: the next is answered Overloaded while
// the request queue still has room, and the replica's WALBytes never
// exceeds the bound.
func TestDispositionOverloadedAtWALBytesMax(t *testing.T) {
	cfg := groupTestConfig(3, 0)
	cfg.Sessionless.Add(OperationUserMin)
	cfg.RequestQueueMax = 64
	cfg.WALBytesMax = 2 * uint64(cfg.MessageSizeMax)
	c := newTestCluster(t, cfg)
	primary := c.nodes[0].replica
	large := make([]byte, cfg.MessageSizeMax/5)
	var held []*Message
	for i := 0; ; i++ {
		if i > int(cfg.PipelinePrepareMax+cfg.RequestQueueMax) {
			t.Fatalf("%d requests of %d bytes held without an answer, WAL bytes %d, bound %d", i, len(large), primary.WALBytes(), cfg.WALBytesMax)
		}
		m := c.request(uint64(20+i), 0, OperationUserMin, 0, 1, large)
		primary.Step(m)
		if got := primary.WALBytes(); got > cfg.WALBytesMax {
			t.Fatalf("WAL bytes %d beyond the bound %d", got, cfg.WALBytesMax)
		}
		answers := c.takeClientMessages()
		if len(answers) == 0 {
			held = append(held, m)
			continue
		}
		if len(answers) != 1 || answers[0].Disposition != DispositionOverloaded || answers[0].Request != m.Request || answers[0].Client != m.Client {
			t.Fatalf("request %d answered %v, want overloaded", i, answers)
		}
		break
	}
	queued := len(primary.requestQueue)
	if queued == 0 || queued >= int(cfg.RequestQueueMax) || len(held) != int(cfg.PipelinePrepareMax)+queued {
		t.Fatalf("%d requests held, %d of them queued (queue of %d): the bytes bound did not push back", len(held), queued, cfg.RequestQueueMax)
	}
	t.Logf("%d requests of %d bytes held (%d queued) under a bound of %d: WAL bytes %d", len(held), len(large), queued, cfg.WALBytesMax, primary.WALBytes())
	primary.startViewChange(1)
	c.expectAnswers(t, append(append([]*Message(nil), held[cfg.PipelinePrepareMax:]...), held[:cfg.PipelinePrepareMax]...), DispositionDropped)
	if primary.queuedBytes != 0 {
		t.Fatalf("queued bytes %d after the queue was dropped", primary.queuedBytes)
	}
}
