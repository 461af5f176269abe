package group

import "github.com/stratabroker/strata/vsr"

// Every request a host accepts gets exactly one answer (PROTOCOL.md 1.9:
// a reply, or 57, 58, 59 and the other codes; never silence).
//
// vsr answers a request it refuses, the queued requests and the prepares
// above its commit number that it abandons as it leaves its view, and
// every request it commits as the primary. It does not answer a request
// whose primary stays the normal primary of its view and cannot commit (a
// primary cut off from its backups keeps its view until it hears of the
// next one), an op it knew committed but had not applied when it left its
// view (a backup applies it and answers no client), nor anything once its
// storage failed (Replica.Err: it stops). And its answers name a client
// and a request number that another replica of the group may have used
// for another request: in production every node numbers its own
// submissions, so a new primary committing the old primary's prepares
// replied for them to whatever waited there under the same number.
//
// So the host keeps a waiter for every submitted request, and:
//
//   - takes vsr's answer for a waiter only when it names the waiter's
//     request: its client, its request number and its checksum (vsr's
//     Context on a reply or a disposition is the request message's
//     checksum, which covers the replica index, the number and the body,
//     so another node's request never matches). A sessioned request of the
//     metadata group is matched by client and number alone: its session
//     makes the number the request's identity, and a duplicate's cached
//     reply carries the checksum of the copy that committed. An answer no
//     waiter takes is dropped (Host.AnswerCounts.Unowed): answered
//     already, or not submitted here;
//   - answers 57 a waiter that waited the request timeout
//     (Config.RequestTimeoutTicks) counted from the later of its submission
//     and the replica's last commit (AbandonTimeout): its primary cannot
//     commit. A primary that commits, however slowly, keeps its waiters:
//     the queue ahead of them is bounded (pipeline and request queue) and
//     every commit moves it; a timeout from the submission alone livelocked
//     a slow group, its clients retrying into the back of the queue behind
//     the requests that had timed out and that vsr still prepared (broker
//     seed 339 of the first version of this rule). A committed
//     reply held for its sync ticket (a persisted topic) waits the request
//     timeout from the later of its commit and the binding's last
//     completed sync, whatever the replica does meanwhile;
//   - answers 57 every waiter whose reply is not held once the replica is
//     no longer the normal primary of the view it was submitted in
//     (AbandonLeftView): what vsr abandoned it answered already, and the
//     rest it never will here. A host whose partition is fenced in a group
//     of several replicas gets there at once (its replica abdicates, which
//     starts the next view);
//   - answers 57 every waiter whose reply is not held once the replica
//     failed (AbandonFailed).
//
// Each answer carries the waiter's ticket (Reply.Ticket), a number the host
// gives each submission, so that a binding pairs answers with submissions
// without trusting client ids and request numbers. A request submitted
// while WaitersMax wait is answered 58 (DispositionOverloaded) at once.

// Abandon says why a host answered a request vsr left unanswered
// (waiters.go); AbandonNone marks vsr's own answers.
type Abandon uint8

const (
	// AbandonNone: vsr answered (a reply or a disposition).
	AbandonNone Abandon = iota
	// AbandonTimeout: the request waited the request timeout while its
	// replica committed nothing, or its held reply waited it for a sync.
	// Disposition DispositionInFlight (57).
	AbandonTimeout
	// AbandonLeftView: the replica is no longer the normal primary of the
	// view the request was submitted in. DispositionViewChange (57).
	AbandonLeftView
	// AbandonFailed: the replica's storage failed (vsr.Replica.Err).
	// DispositionDropped (57).
	AbandonFailed
)

var abandonNames = [...]string{"none", "timeout", "left_view", "failed"}

// String returns the reason's name.
func (a Abandon) String() string {
	if int(a) < len(abandonNames) {
		return abandonNames[a]
	}
	return "abandon(?)"
}

// disposition is the vsr disposition a host's answer for reason a carries.
func (a Abandon) disposition() vsr.Disposition {
	switch a {
	case AbandonTimeout:
		return vsr.DispositionInFlight
	case AbandonLeftView:
		return vsr.DispositionViewChange
	}
	return vsr.DispositionDropped
}

// WaitersMax bounds the requests a host keeps waiting for their answers;
// a request beyond it is answered 58 (DispositionOverloaded) at once. vsr
// admits at most the pipeline and the request queue (whose limits fit
// below it), and every waiter is answered within the request
// timeout of the replica's last commit, so only committed replies held for
// a slow sync, or a binding that submits to a stalled primary faster than
// the timeout answers, reach it.
const WaitersMax = 1 << 13

// WaitersMax holds every request vsr may admit: a negative array length
// fails the build otherwise.
var _ [WaitersMax - vsr.PipelinePrepareMaxLimit - vsr.RequestQueueMaxLimit - 1]struct{}

// RequestTimeoutHeartbeatsDefault is the request timeout of a Config that
// sets none, in the replica's normal heartbeat timeouts (the time after
// which the backups of a silent primary start electing another): by then
// a primary that committed nothing is most likely cut off, and its client
// had better retry (the same request: 57), elsewhere if it is redirected.
const RequestTimeoutHeartbeatsDefault = 2

// AnswerCounts counts a host's answers to requests that vsr did not give
// (or gave and no waiter took).
type AnswerCounts struct {
	// TimedOut, LeftView and Failed count the waiters answered 57 for
	// each Abandon reason.
	TimedOut, LeftView, Failed uint64
	// Overflow counts the requests answered 58 because WaitersMax waited.
	Overflow uint64
	// Unowed counts vsr's answers no waiter took (dropped).
	Unowed uint64
}

// The host's side of the waiters.

// NextTicket returns the ticket the next Submit gives, for a binding that
// must know it before an answer given inside that call.
func (h *Host) NextTicket() uint64 { return h.waiters.next() }

// deliver hands the binding r, vsr's answer to the request checksum
// names, if that request waits here (r then carries its ticket), and
// forgets the waiter; an answer no waiter takes is dropped (waiters.go).
func (h *Host) deliver(checksum vsr.Uint128, r Reply) {
	i := h.waiters.match(r.Client, r.Request, checksum)
	if i < 0 {
		h.answers.Unowed++
		return
	}
	r.Ticket = h.waiters.take(i).ticket
	h.b.Replies.Deliver(r)
}

// deliverHeld hands the binding a held reply whose sync ended (or
// failed), if its waiter still waits (it may have timed out).
func (h *Host) deliverHeld(r Reply) {
	i := h.waiters.find(r.Ticket)
	if i < 0 {
		h.answers.Unowed++
		return
	}
	h.waiters.take(i)
	h.b.Replies.Deliver(r)
}

// answering is what both hosts keep to answer every request: the
// waiters, the replica's commit number after the last input (commitSeen)
// and the tick count when it last changed (commitAt), and the counts of
// the answers vsr did not give.
type answering struct {
	waiters              waiterTable
	commitSeen, commitAt uint64
	answers              AnswerCounts
}

// answerAbandoned notes r's progress at tick now and answers through
// replies every waiter abandonReason gives up (timeout from the later of
// its submission and the last commit, or of durableAt for a held reply;
// left view; failed). It reports whether a held reply's waiter was among
// them.
func (a *answering) answerAbandoned(r *vsr.Replica, bugs vsr.BugSet, now, timeout, durableAt uint64, replies Replies) (heldAbandoned bool) {
	if c := r.CommitNumber(); c != a.commitSeen {
		a.commitSeen, a.commitAt = c, now
	}
	if a.waiters.len() == 0 || bugs.Has(vsr.BugRequestLeftUnanswered) {
		return false
	}
	a.waiters.abandon(func(w *waiter) Abandon {
		return abandonReason(w, r, now, timeout, a.commitAt, durableAt)
	}, func(w waiter, why Abandon) {
		heldAbandoned = heldAbandoned || w.held
		a.answers.count(why)
		replies.Deliver(answerOf(w, why))
	})
	return heldAbandoned
}

// answerWaiters answers the waiters vsr will not (waiters.go). It runs
// after every input.
func (h *Host) answerWaiters() {
	if h.answerAbandoned(h.replica, h.cfg.Replica.Bugs, h.ticks, h.cfg.RequestTimeoutTicks, h.durableAt, h.b.Replies) {
		h.dropUnwaitedHeld()
	}
}

// dropUnwaitedHeld forgets the held replies whose waiters timed out.
func (h *Host) dropUnwaitedHeld() {
	kept := h.held[:0]
	for _, r := range h.held {
		if h.waiters.find(r.reply.Ticket) >= 0 {
			kept = append(kept, r)
		}
	}
	clear(h.held[len(kept):])
	h.held = kept
}

// Waiting returns how many submitted requests wait for their answers.
func (h *Host) Waiting() int { return h.waiters.len() }

// RequestTimeoutTicks returns the request timeout (Config.RequestTimeoutTicks
// or its default): every submitted request is answered within that many
// ticks of the later of its Submit and the replica's last commit (a
// committed reply held for its sync: of its hold and the last completed
// sync), unless the host is dropped (a crash, a close).
func (h *Host) RequestTimeoutTicks() uint64 { return h.cfg.RequestTimeoutTicks }

// DurableTicket returns the highest sync ticket the binding reported
// durable (EffectsDurable).
func (h *Host) DurableTicket() uint64 { return h.durable }

// AnswerCounts returns the host's counts of the answers vsr did not give.
func (h *Host) AnswerCounts() AnswerCounts { return h.answers }

// waiter is a submitted request the host has not answered yet.
type waiter struct {
	ticket    uint64
	client    vsr.Uint128
	request   uint64
	operation uint8
	// checksum is the request message's: vsr's answers carry it as
	// Context. sessioned: matched by client and request number alone
	// (the metadata group's sessions).
	checksum  vsr.Uint128
	sessioned bool
	// view is the replica's view when the request was submitted.
	view uint64
	// since is the host's tick count then.
	since uint64
	// held: the committed reply waits for its sync ticket (Host.held),
	// since heldAt.
	held   bool
	heldAt uint64
}

// waiterTable is a host's waiters, in submission order (so in ticket
// order: tickets only grow).
type waiterTable struct {
	// Invariant: len(list) <= WaitersMax; tickets strictly increase.
	list []waiter
	// last is the last ticket given; submitting the ticket of the request
	// being handed to the replica (0: none), whose answers given inside
	// that call are its own, before an older waiter of the same request's.
	last, submitting uint64
}

// add appends w with the next ticket and returns it, or returns false
// when WaitersMax wait (w still gets a ticket, for its 58).
func (t *waiterTable) add(w waiter) (uint64, bool) {
	if len(t.list) >= WaitersMax {
		return t.issue(), false
	}
	w.ticket = t.issue()
	t.list = append(t.list, w)
	return w.ticket, true
}

// issue gives a ticket to a request answered at once, with no waiter.
func (t *waiterTable) issue() uint64 {
	t.last++
	return t.last
}

// next returns the ticket add (or issue) gives next.
func (t *waiterTable) next() uint64 { return t.last + 1 }

func (t *waiterTable) len() int { return len(t.list) }

// match returns the index of the waiter an answer of vsr for client's
// request with checksum belongs to, or -1: the waiter being submitted if
// it is that request's, else the oldest that is. A waiter whose reply is
// held has its answer already.
func (t *waiterTable) match(client vsr.Uint128, request uint64, checksum vsr.Uint128) int {
	found := -1
	for i := range t.list {
		w := &t.list[i]
		if w.held || w.client != client || w.request != request || (!w.sessioned && w.checksum != checksum) {
			continue
		}
		if w.ticket == t.submitting {
			return i
		}
		if found < 0 {
			found = i
		}
	}
	return found
}

// matchSubmitting returns the index of the waiter being submitted if it
// is client's, or -1 (an eviction answers the request that met it).
func (t *waiterTable) matchSubmitting(client vsr.Uint128) int {
	if t.submitting == 0 {
		return -1
	}
	for i := len(t.list) - 1; i >= 0; i-- {
		if w := &t.list[i]; w.ticket == t.submitting {
			if w.client == client {
				return i
			}
			return -1
		}
	}
	return -1
}

// find returns the index of the waiter with ticket, or -1.
func (t *waiterTable) find(ticket uint64) int {
	// Binary search: tickets increase along the list.
	lo, hi := 0, len(t.list)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t.list[mid].ticket < ticket {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(t.list) && t.list[lo].ticket == ticket {
		return lo
	}
	return -1
}

// take removes and returns the waiter at i, keeping the others' order.
func (t *waiterTable) take(i int) waiter {
	w := t.list[i]
	copy(t.list[i:], t.list[i+1:])
	t.list[len(t.list)-1] = waiter{}
	t.list = t.list[:len(t.list)-1]
	return w
}

// abandon removes every waiter why returns a reason for (in order) and
// calls answer with each; answer must not change t.
func (t *waiterTable) abandon(why func(w *waiter) Abandon, answer func(w waiter, a Abandon)) {
	kept := t.list[:0]
	for i := range t.list {
		w := t.list[i]
		if a := why(&w); a != AbandonNone {
			answer(w, a)
			continue
		}
		kept = append(kept, w)
	}
	clear(t.list[len(kept):])
	t.list = kept
}

// deadline returns the tick count at which w times out: timeout ticks
// after the later of its submission and commitAt (the replica's last
// commit), or, held, of its hold and durableAt (the last completed sync).
func (w *waiter) deadline(timeout, commitAt, durableAt uint64) uint64 {
	if w.held {
		return max(w.heldAt, durableAt) + timeout
	}
	return max(w.since, commitAt) + timeout
}

// nextDeadline returns the earliest deadline of any waiter, if any.
func (t *waiterTable) nextDeadline(timeout, commitAt, durableAt uint64) (uint64, bool) {
	if len(t.list) == 0 {
		return 0, false
	}
	first := ^uint64(0)
	for i := range t.list {
		first = min(first, t.list[i].deadline(timeout, commitAt, durableAt))
	}
	return first, true
}

// answerOf is the answer the host gives w for reason a.
func answerOf(w waiter, a Abandon) Reply {
	d := a.disposition()
	return Reply{Ticket: w.ticket, Client: w.client, Request: w.request, Operation: w.operation, Disposition: d, Code: Code(d), Abandon: a}
}

// count adds one answer for reason a to c.
func (c *AnswerCounts) count(a Abandon) {
	switch a {
	case AbandonTimeout:
		c.TimedOut++
	case AbandonLeftView:
		c.LeftView++
	case AbandonFailed:
		c.Failed++
	}
}

// abandonReason is the rule every host applies to a waiter after an
// input (waiters.go): a replica that failed, or that is no longer the
// normal primary of the waiter's view, abandons a waiter whose reply is
// not held; a waiter past its deadline times out.
func abandonReason(w *waiter, r *vsr.Replica, ticks, timeout, commitAt, durableAt uint64) Abandon {
	switch {
	case !w.held && r.Err() != nil:
		return AbandonFailed
	case !w.held && (!r.Primary() || r.View() != w.view):
		return AbandonLeftView
	case ticks >= w.deadline(timeout, commitAt, durableAt):
		return AbandonTimeout
	}
	return AbandonNone
}
