package group_test

import (
	"errors"
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// Every submitted request gets exactly one answer from the host it was
// submitted to (waiters.go); these tests take the paths on which vsr gives
// none.

// submitSend hands node a send of n fresh messages and returns its request
// number, without delivering anything.
func (w *workload) submitSend(node, n int) uint64 {
	w.t.Helper()
	b, _ := batch(w.t, w.next+1, n)
	w.next += uint64(n)
	w.req++
	w.c.Nodes[node].Host.Submit(w.client, w.req, partition.OperationSendMessages, partition.EncodeSendMessages(partition.Envelope{UserID: 1}, b))
	return w.req
}

// TestCutOffPrimaryAnswers57: a primary cut off from its backups stays the
// primary of its view (it hears of no other) and can never commit. Its
// send waited forever, unanswered (the broker simulator's answers checker
// failed 118 of seeds 1..300 so); it is answered 57 (TransientNotCommitted)
// once it waited the request timeout with nothing committed, exactly once,
// and the host is due at that tick (a binding that ticks only due groups
// gets there).
func TestCutOffPrimaryAnswers57(t *testing.T) {
	c := newCluster(t, testConfig(3, 0, vsr.Replicated), false)
	w := newWorkload(t, c)
	w.sendCommitted(4)
	p := c.Primary()
	h := c.Nodes[p].Host
	c.Isolate(p, true)
	req := w.submitSend(p, 3)
	c.Deliver(1_000_000)
	if a := w.answers(req); len(a) != 0 || h.Waiting() != 1 {
		t.Fatalf("answered at once: %v (waiting %d)", a, h.Waiting())
	}
	timeout := h.RequestTimeoutTicks()
	if due := h.TicksUntilDue(); due > timeout {
		t.Fatalf("the host is due in %d ticks, after its request timeout of %d", due, timeout)
	}
	c.Tick(int(timeout) - 1)
	if a := w.answers(req); len(a) != 0 {
		t.Fatalf("answered before the timeout: %v", a)
	}
	c.Tick(1)
	a := w.answers(req)
	if len(a) != 1 || a[0].Code != wire.ErrTransientNotCommitted || a[0].Disposition != vsr.DispositionInFlight || a[0].Node != p {
		t.Fatalf("after the timeout: %v, want one 57\n%s", a, c.Status())
	}
	if !h.Replica().Primary() || h.Replica().View() != 0 || h.Waiting() != 0 {
		t.Fatalf("the cut-off primary should still lead view 0 and wait for nothing (waiting %d):\n%s", h.Waiting(), c.Status())
	}
	if timedOut, _, _ := h.AnswerCounters(); timedOut != 1 {
		t.Fatalf("timed out %d, want 1", timedOut)
	}
	// Healed, the old primary joins the new view; whatever becomes of its
	// prepare, the request is not answered a second time.
	c.Isolate(p, false)
	c.Tick(500)
	if a := w.answers(req); len(a) != 0 {
		t.Fatalf("a second answer after the heal: %v", a)
	}
	w.sendCommitted(2)
}

// TestCommittingPrimaryKeepsItsWaiters: the request timeout runs from the
// replica's last commit too. A request queued behind a slow one waits past
// the timeout of its own submission, but its primary commits meanwhile: it
// is answered when it commits, not 57 (the simulator's seed 339 livelocked
// under a timeout from the request alone: eight clients retried into the
// back of a slow queue, behind the timed-out requests vsr still prepared).
// The backups' disks are slow (held IO): they ack nothing, and keep
// hearing the primary's heartbeats, so the view stays.
func TestCommittingPrimaryKeepsItsWaiters(t *testing.T) {
	cfg := testConfig(3, 0, vsr.Persisted)
	cfg.Replica.PipelinePrepareMax = 1 // the second send queues behind the first
	cfg.RequestTimeoutTicks = 40
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	w.sendCommitted(4)
	p := c.Primary()
	backups := []int{(p + 1) % 3, (p + 2) % 3}
	hold := func(on bool) {
		for _, b := range backups {
			c.HoldIO(b, on)
		}
	}
	hold(true)
	first := w.submitSend(p, 1)
	c.Deliver(1_000_000)
	c.Tick(30)
	second := w.submitSend(p, 1)
	c.Tick(9)
	// One backup's disk catches up: its ack commits the first send,
	// and the second is prepared, on disks that are slow again.
	c.HoldIO(backups[0], false)
	c.PumpIO()
	c.HoldIO(backups[0], true)
	c.Deliver(1_000_000)
	if a := w.answers(first); len(a) != 1 || a[0].Code != wire.ErrorCodeOK {
		t.Fatalf("the first send: %v, want committed\n%s", a, c.Status())
	}
	c.Tick(38) // 47 ticks after the second's submission, 38 after the commit
	if a := w.answers(second); len(a) != 0 {
		t.Fatalf("the second send, queued behind a primary that commits: %v, want no answer yet\n%s", a, c.Status())
	}
	hold(false)
	c.Tick(1)
	if a := w.answers(second); len(a) != 1 || a[0].Code != wire.ErrorCodeOK {
		t.Fatalf("the second send: %v, want committed\n%s", a, c.Status())
	}
	if timedOut, _, _ := c.Nodes[p].Host.AnswerCounters(); timedOut != 0 || c.Primary() != p {
		t.Fatalf("timed out %d, primary %d (want 0, %d)", timedOut, c.Primary(), p)
	}
}

// TestFailedReplicaAnswersItsWaiters: a primary whose storage fails stops
// (vsr.Replica.Err) and never answers the requests in its pipeline; the
// host answers each 57 from the input that failed it, and a request
// submitted later is refused at once.
func TestFailedReplicaAnswersItsWaiters(t *testing.T) {
	c := newCluster(t, testConfig(3, 0, vsr.Persisted), false)
	w := newWorkload(t, c)
	w.sendCommitted(4)
	p := c.Primary()
	h := c.Nodes[p].Host
	c.Nodes[p].Storage.FailWrites = errors.New("grouptest: the disk died")
	req := w.submitSend(p, 3)
	c.Deliver(1_000_000)
	if h.Replica().Err() == nil {
		t.Fatalf("the replica did not fail:\n%s", c.Status())
	}
	a := w.answers(req)
	if len(a) != 1 || a[0].Code != wire.ErrTransientNotCommitted || a[0].Disposition != vsr.DispositionDropped {
		t.Fatalf("the failed primary's send: %v, want one 57", a)
	}
	if _, failed, _ := h.AnswerCounters(); failed != 1 || h.Waiting() != 0 {
		t.Fatalf("answered for the failure %d, waiting %d", failed, h.Waiting())
	}
	later := w.submitSend(p, 1)
	if a := w.answers(later); len(a) != 1 || a[0].Code != wire.ErrTransientNotAccepted {
		t.Fatalf("a send to the failed replica: %v, want 58 at once", a)
	}
	c.Tick(int(h.RequestTimeoutTicks()) + 10)
	if a := w.answers(req); len(a) != 0 {
		t.Fatalf("a second answer: %v", a)
	}
}

// TestHeldReplyAnsweredAtTheTimeout: a committed reply waiting for its
// segment sync (a persisted topic) whose sync does not complete within
// the request timeout is answered 57 (it committed, but is not durable
// here yet), and the reply the sync releases later is not delivered again.
func TestHeldReplyAnsweredAtTheTimeout(t *testing.T) {
	c := newCluster(t, testConfig(1, 0, vsr.Replicated), true)
	w := newWorkload(t, c)
	w.sendCommitted(8) // a flush: its reply waits for the sync
	h := c.Nodes[0].Host
	c.HoldIO(0, true)
	req := w.submitSend(0, 8)
	c.Deliver(1_000_000)
	if a := w.answers(req); len(a) != 0 || h.Waiting() != 1 {
		t.Fatalf("answered before the sync: %v (waiting %d)", a, h.Waiting())
	}
	timeout := int(h.RequestTimeoutTicks())
	c.Tick(timeout)
	a := w.answers(req)
	if len(a) != 1 || a[0].Code != wire.ErrTransientNotCommitted {
		t.Fatalf("the held send after the timeout: %v, want one 57", a)
	}
	c.HoldIO(0, false)
	c.Tick(5)
	if a := w.answers(req); len(a) != 0 {
		t.Fatalf("the sync released a second answer: %v", a)
	}
	// The group goes on.
	if base := w.sendCommitted(1); base != 16 {
		t.Fatalf("next send at %d, want 16", base)
	}
}

// TestCutOffMetaPrimaryAnswers57: the metadata group's host keeps waiters
// too. The primary of view 0 of a three-replica metadata group that hears
// from no peer (cut off) prepares a register it can never commit; it is
// answered 57 once it waited the request timeout, exactly once.
func TestCutOffMetaPrimaryAnswers57(t *testing.T) {
	primary := vsr.PrimaryIndex(0, group.MetaGroupID, 3)
	cfg := vsr.DefaultConfig(0, 3, primary)
	cfg.Durability = vsr.Persisted
	cfg.JournalSlots = 32
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	loop := &[]func(){}
	n := openMetaNode(t, cfg, newMemStorage(&cfg, loop), loop)
	h := n.host
	if !h.Replica().Primary() {
		t.Fatalf("replica %d is not the primary of view 0: %s", primary, h.Replica().Status())
	}
	client := vsr.Uint128{Lo: 7}
	h.SubmitRequest(group.MetaRequest{Client: client, Operation: group.OperationRegister})
	n.run()
	if len(n.replies) != 0 || h.Waiting() != 1 {
		t.Fatalf("answered at once: %v (waiting %d)", n.replies, h.Waiting())
	}
	timeout := int(h.RequestTimeoutTicks())
	for range timeout - 1 {
		h.Tick()
		n.run()
	}
	if len(n.replies) != 0 {
		t.Fatalf("answered before the timeout: %v", n.replies)
	}
	h.Tick()
	n.run()
	r, ok := n.replies[0]
	if !ok || len(n.replies) != 1 || r.Code != wire.ErrTransientNotCommitted || r.Operation != group.OperationRegister || r.Client != client {
		t.Fatalf("after the timeout: %v, want one 57 to the register", n.replies)
	}
	if timedOut, _ := h.AnswerCounters(); timedOut != 1 || h.Waiting() != 0 {
		t.Fatalf("timed out %d, waiting %d", timedOut, h.Waiting())
	}
}
