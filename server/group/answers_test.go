package group_test

import (
	"errors"
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/group/grouptest"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// Every submitted request gets exactly one answer from the host it was
// submitted to (waiters.go); these tests take the paths on which vsr gives
// none, or gives one that is not the waiter's.

// submitSend hands node a send of n fresh messages under the workload's
// next request number and returns the number and the host's ticket,
// delivering nothing.
func (w *workload) submitSend(node, n int) (request, ticket uint64) {
	w.t.Helper()
	b, _ := batch(w.t, w.next+1, n)
	w.next += uint64(n)
	w.req++
	ticket = w.c.Nodes[node].Host.Submit(w.client, w.req, partition.OperationSendMessages, partition.EncodeSendMessages(partition.Envelope{UserID: 1}, b))
	return w.req, ticket
}

// oneAnswer fails unless answers is one answer from node with ticket and
// code, for reason.
func oneAnswer(t *testing.T, answers []grouptest.Answer, node int, ticket uint64, code wire.ErrorCode, reason group.Abandon, status string) {
	t.Helper()
	if len(answers) != 1 {
		t.Fatalf("%d answers, want one: %v\n%s", len(answers), answers, status)
	}
	a := answers[0]
	if a.Node != node || a.Ticket != ticket || a.Code != code || a.Abandon != reason {
		t.Fatalf("answer %+v, want node %d ticket %d code %d abandon %s\n%s", a, node, ticket, code, reason, status)
	}
}

// TestCutOffPrimaryAnswers57: a primary cut off from its backups stays the
// primary of its view (it hears of no other) and can never commit; vsr
// never answers the send in its pipeline. The host answers it 57
// (TransientNotCommitted) once it waited the request timeout with nothing
// committed, exactly once, and the host is due at that tick (a binding
// that ticks only due groups gets there).
func TestCutOffPrimaryAnswers57(t *testing.T) {
	c := newCluster(t, testConfig(3, 0, vsr.Replicated), false)
	w := newWorkload(t, c)
	w.sendCommitted(4)
	p := c.Primary()
	h := c.Nodes[p].Host
	c.Isolate(p, true)
	req, ticket := w.submitSend(p, 3)
	c.Deliver(1_000_000)
	if a := w.answers(req); len(a) != 0 || h.Waiting() != 1 {
		t.Fatalf("answered at once: %v (waiting %d)", a, h.Waiting())
	}
	timeout := h.RequestTimeoutTicks()
	if want := group.RequestTimeoutHeartbeatsDefault * c.Config.Replica.NormalHeartbeatTimeoutTicks; timeout != want {
		t.Fatalf("the default request timeout is %d ticks, want %d", timeout, want)
	}
	if due := h.TicksUntilDue(); due > timeout {
		t.Fatalf("the host is due in %d ticks, after its request timeout of %d", due, timeout)
	}
	c.Tick(int(timeout) - 1)
	if a := w.answers(req); len(a) != 0 {
		t.Fatalf("answered before the timeout: %v", a)
	}
	c.Tick(1)
	oneAnswer(t, w.answers(req), p, ticket, wire.ErrTransientNotCommitted, group.AbandonTimeout, c.Status())
	if !h.Replica().Primary() || h.Replica().View() != 0 || h.Waiting() != 0 || h.AnswerCounts().TimedOut != 1 {
		t.Fatalf("the cut-off primary should still lead view 0, wait for nothing and count one timeout (waiting %d, %+v):\n%s",
			h.Waiting(), h.AnswerCounts(), c.Status())
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
// the timeout counted from its own submission, but its primary commits
// meanwhile: it is answered when it commits, not 57 (a timeout from the
// submission alone livelocked a slow group: its clients retried into the
// back of the queue, behind the timed-out requests vsr still prepared).
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
	first, firstTicket := w.submitSend(p, 1)
	c.Deliver(1_000_000)
	c.Tick(30)
	second, secondTicket := w.submitSend(p, 1)
	c.Tick(9)
	// One backup's disk catches up: its ack commits the first send, and
	// the second is prepared, on disks that are slow again.
	c.HoldIO(backups[0], false)
	c.PumpIO()
	c.HoldIO(backups[0], true)
	c.Deliver(1_000_000)
	oneAnswer(t, w.answers(first), p, firstTicket, wire.ErrorCodeOK, group.AbandonNone, c.Status())
	c.Tick(38) // 47 ticks after the second's submission, 38 after the commit
	if a := w.answers(second); len(a) != 0 {
		t.Fatalf("the second send, queued behind a primary that commits: %v, want no answer yet\n%s", a, c.Status())
	}
	hold(false)
	c.Tick(1)
	oneAnswer(t, w.answers(second), p, secondTicket, wire.ErrorCodeOK, group.AbandonNone, c.Status())
	if n := c.Nodes[p].Host.AnswerCounts().TimedOut; n != 0 || c.Primary() != p {
		t.Fatalf("timed out %d, primary %d (want 0, %d)", n, c.Primary(), p)
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
	req, ticket := w.submitSend(p, 3)
	c.Deliver(1_000_000)
	if h.Replica().Err() == nil {
		t.Fatalf("the replica did not fail:\n%s", c.Status())
	}
	oneAnswer(t, w.answers(req), p, ticket, wire.ErrTransientNotCommitted, group.AbandonFailed, c.Status())
	if n := h.AnswerCounts().Failed; n != 1 || h.Waiting() != 0 {
		t.Fatalf("answered for the failure %d, waiting %d", n, h.Waiting())
	}
	later, laterTicket := w.submitSend(p, 1)
	if a := w.answers(later); len(a) != 1 || a[0].Ticket != laterTicket || a[0].Code != wire.ErrTransientNotAccepted {
		t.Fatalf("a send to the failed replica: %v, want 58 at once", a)
	}
	c.Tick(int(h.RequestTimeoutTicks()) + 10)
	if a := w.answers(req); len(a) != 0 {
		t.Fatalf("a second answer: %v", a)
	}
}

// TestHeldReplyAnsweredAtTheTimeout: a committed reply waiting for its
// segment sync (a persisted topic) whose sync does not complete within the
// request timeout is answered 57 (it committed, but is not durable here
// yet) at the timeout counted from its commit, although the group goes on
// committing meanwhile, and forgotten: the sync that completes later
// delivers nothing.
func TestHeldReplyAnsweredAtTheTimeout(t *testing.T) {
	cfg := testConfig(1, 0, vsr.Replicated)
	cfg.RequestTimeoutTicks = 30
	c := newCluster(t, cfg, true)
	w := newWorkload(t, c)
	w.sendCommitted(8) // a flush: its reply waits for the sync
	h := c.Nodes[0].Host
	c.HoldIO(0, true)
	req, ticket := w.submitSend(0, 8)
	c.Deliver(1_000_000)
	if a := w.answers(req); len(a) != 0 || h.Waiting() != 1 || h.Replica().CommitNumber() != 2 {
		t.Fatalf("answered before the sync: %v (waiting %d)\n%s", a, h.Waiting(), c.Status())
	}
	c.Tick(20)
	// A commit meanwhile (an offset store, whose reply waits for no sync)
	// does not move the held reply's timeout: its sync is what it waits
	// for.
	if a := w.storeOffset(0, 1, 3); a.Code != wire.ErrorCodeOK {
		t.Fatalf("an offset store: %+v", a)
	}
	c.Tick(9)
	if a := w.answers(req); len(a) != 0 {
		t.Fatalf("the held send answered before the timeout: %v", a)
	}
	c.Tick(1)
	oneAnswer(t, w.answers(req), 0, ticket, wire.ErrTransientNotCommitted, group.AbandonTimeout, c.Status())
	c.HoldIO(0, false)
	c.Tick(5)
	if a := w.answers(req); len(a) != 0 {
		t.Fatalf("the sync released a second answer: %v", a)
	}
	if n := h.AnswerCounts(); n.TimedOut != 1 {
		t.Fatalf("counts %+v, want one timeout", n)
	}
	// The group goes on.
	if base := w.sendCommitted(1); base != 16 {
		t.Fatalf("next send at %d, want 16", base)
	}
}

// TestForeignReplyIsDropped: the production misdelivery. Every node
// numbers its own requests under one client id, so a new primary that
// commits the old primary's prepare replies for a client and request
// number that may name another request there. The old primary's send
// (request 1, prepared on the backups) is committed by the new primary
// after that primary admitted its own request 1: the reply for the old
// primary's op must not complete it (it carries the other request's
// checksum, and is dropped); the new primary's request gets its own op's
// reply, at the offsets after the old one's messages.
func TestForeignReplyIsDropped(t *testing.T) {
	c := newCluster(t, testConfig(3, 2, vsr.Replicated), false)
	w := newWorkload(t, c)
	old := c.Primary()
	req, _ := w.submitSend(old, 5)
	c.Deliver(2) // the prepare reaches the backups, their acks do not come back
	c.Crash(old)
	// Step the view change one message at a time, until a new primary
	// leads it, before its backup acks the old op in the new view.
	p := -1
	for step := 0; step < 100_000 && p < 0; step++ {
		if q := c.Primary(); q >= 0 && q != old {
			p = q
			break
		}
		if !c.DeliverOne() {
			c.TickHosts()
		}
	}
	if p < 0 {
		t.Fatalf("no new primary:\n%s", c.Status())
	}
	h := c.Nodes[p].Host
	if h.Replica().CommitNumber() != 0 || h.Replica().OpNumber() != 1 {
		t.Fatalf("the new primary should hold the old op uncommitted:\n%s", c.Status())
	}
	b, _ := batch(t, 100, 2)
	ticket := h.Submit(w.client, req, partition.OperationSendMessages, partition.EncodeSendMessages(partition.Envelope{UserID: 1}, b))
	c.Tick(20)
	a := w.answers(req)
	oneAnswer(t, a, p, ticket, wire.ErrorCodeOK, group.AbandonNone, c.Status())
	if a[0].Op != 2 {
		t.Fatalf("the new primary's request answered with op %d's reply, want its own op 2", a[0].Op)
	}
	if base, ok := a[0].BaseOffset(); !ok || base != 5 {
		t.Fatalf("the new primary's send answered at base offset %d (%v), want 5, after the old primary's 5 messages", base, ok)
	}
	if n := h.AnswerCounts().Unowed; n != 1 {
		t.Fatalf("%d replies of vsr dropped, want the old primary's op's", n)
	}
}

// TestCutOffMetaPrimaryAnswers57: the metadata group's host keeps waiters
// too. The primary of view 0 of a three-replica metadata group that hears
// from no peer (cut off) prepares a register it can never commit; it is
// answered 57 once it waited the request timeout, exactly once, with its
// ticket.
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
	ticket := h.SubmitRequest(group.MetaRequest{Client: client, Operation: group.OperationRegister})
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
	if !ok || len(n.replies) != 1 || r.Ticket != ticket || r.Code != wire.ErrTransientNotCommitted || r.Abandon != group.AbandonTimeout ||
		r.Operation != group.OperationRegister || r.Client != client {
		t.Fatalf("after the timeout: %v, want one 57 to the register (ticket %d)", n.replies, ticket)
	}
	if c := h.AnswerCounts(); c.TimedOut != 1 || h.Waiting() != 0 {
		t.Fatalf("counts %+v, waiting %d", c, h.Waiting())
	}
	// Ticks go on: nothing more is answered.
	for range 3 * timeout {
		h.Tick()
		n.run()
	}
	if len(n.replies) != 1 {
		t.Fatalf("answered again: %v", n.replies)
	}
}

// TestDeposedPrimaryAnswersItsCommittedUnappliedOp: vsr answers, as its
// primary leaves its view, the requests it queued and the prepares above
// its commit number, not an op it knew committed and had not applied
// (the broker simulator's seed 674, and 388: a new primary still
// repairing the ops below its commit number admitted a send, which its
// backup acked). The new primary of view 1 here cannot repair the old
// view's ops (their prepares from its backup are lost), admits a send
// that its backup acks, and then abdicates (its partition is fenced,
// which starts the next view): the host answers the send 57 at once,
// exactly once, and the new view commits it later without a second
// answer.
func TestDeposedPrimaryAnswersItsCommittedUnappliedOp(t *testing.T) {
	c := newCluster(t, testConfig(3, 0, vsr.Replicated), false)
	w := newWorkload(t, c)
	w.sendCommitted(2)
	old := c.Primary()
	next := int(vsr.PrimaryIndex(1, 0, 3))
	third := 3 - old - next
	if old < 0 || next == old {
		t.Fatalf("primary %d, next %d:\n%s", old, next, c.Status())
	}
	c.Isolate(next, true)
	for range 3 {
		w.sendCommitted(2) // the next primary misses these ops
	}
	c.Tick(int(c.Config.Replica.CommitHeartbeatTicks) + 1) // the third replica learns the last one committed
	c.Crash(old)
	c.Isolate(next, false)
	c.Drop = func(from, to int, m *vsr.Message) bool {
		return from == third && to == next && m.Command == vsr.CommandPrepare
	}
	for step := 0; step < 200_000 && c.Primary() != next; step++ {
		if !c.DeliverOne() {
			c.TickHosts()
		}
	}
	h := c.Nodes[next].Host
	r := h.Replica()
	if c.Primary() != next || r.CommitNumber() >= r.CommitMax() {
		t.Fatalf("replica %d should lead view 1 with ops below its commit number unapplied:\n%s", next, c.Status())
	}
	req, ticket := w.submitSend(next, 1)
	op := r.OpNumber()
	c.Deliver(1_000_000) // no tick: the backup acks, nobody times out
	if r.CommitMax() < op || r.CommitNumber() >= op || !r.Primary() {
		t.Fatalf("the send (op %d) should be committed and unapplied at the primary:\n%s", op, c.Status())
	}
	if a := w.answers(req); len(a) != 0 || h.Waiting() != 1 {
		t.Fatalf("answered before the primary left its view: %v (waiting %d)", a, h.Waiting())
	}
	h.SetFenced(true)
	if r.Primary() {
		t.Fatalf("the fenced primary did not leave its view:\n%s", c.Status())
	}
	oneAnswer(t, w.answers(req), next, ticket, wire.ErrTransientNotCommitted, group.AbandonLeftView, c.Status())
	if n := h.AnswerCounts().LeftView; n != 1 {
		t.Fatalf("%d answered as the view was left, want 1", n)
	}
	h.SetFenced(false)
	c.Drop = nil
	c.Tick(500)
	if a := w.answers(req); len(a) != 0 {
		t.Fatalf("a second answer: %v", a)
	}
	w.sendCommitted(1)
}
