package sim

import "fmt"

// AnswerChecker checks the group hosts' promise that every request they
// accept gets exactly one answer (server/group/waiters.go; PROTOCOL.md:
// a reply, or 57, 58, 59 and the other codes, never silence) within the
// host's own bound of ticks plus answerSlackTicks:
//
//   - a request submitted to a host (Host.Submit, MetaHost.SubmitRequest)
//     within the host's request timeout (RequestTimeoutTicks) of the later
//     of its submission and the last tick at which the checker saw that
//     host's replica change its commit number or its binding complete a
//     sync ticket (Host.DurableTicket: a committed reply held for its sync
//     waits from the last completed sync). A primary that commits keeps
//     its waiters; one that commits nothing, cut off or failed, answers;
//   - a read handed to a host's read index (Host.Read) within the normal
//     heartbeat timeout of its call.
//
// Requests are keyed by node, group id and the host's ticket (a read by a
// number of the checker's), so that several groups, and groups created or
// deleted during a run, keep apart; an answer to a request the checker
// does not hold pending (a second answer, or one to a request never
// submitted there) is a failure too. A request whose host stopped (its
// node crashed, or the group went away there: Forget) is forgotten: it
// went with the process, and so did the client's connection.
//
// The answer is taken where the host gives it (group.Replies.Deliver, the
// read's done), not where the client receives it: the network may lose
// it, and the client's own timeout covers that. The checker keeps its
// requests in submission order and looks hosts up, never iterating a map,
// so a failure names the oldest first and a run stays deterministic.
type AnswerChecker struct {
	pending []pendingAnswer
	// hosts is, per host, what the checker saw of its progress.
	hosts map[answerHost]*hostProgress
	// reads numbers the reads handed to hosts.
	reads uint64
	// failure is the first answer the checker held nothing pending for.
	failure error
	// Answered counts the requests answered, Forgotten those whose host
	// stopped before it answered them; WaitedMax is the longest wait of
	// an answered request, in ticks.
	Answered, Forgotten, WaitedMax uint64
}

// answerHost names one host: a node's replica of a group.
type answerHost struct {
	node  int
	group uint64
}

// hostProgress is a host's commit number and durable sync ticket as the
// checker last saw them, and the tick either last changed.
type hostProgress struct {
	commit, durable, at uint64
}

// answerSlackTicks is the checker's slack over a host's bound: a request
// submitted during tick t waits from the host's tick count before its
// Tick of t, and the checker sees a commit only after that Tick.
const answerSlackTicks = 1

// answerKind tells submitted requests from reads.
type answerKind uint8

const (
	answerSubmitted answerKind = iota
	answerRead
)

// pendingAnswer is a request a host owes an answer.
type pendingAnswer struct {
	host   answerHost
	kind   answerKind
	ticket uint64 // the host's (a submission), or the checker's (a read)
	// what names the request in a failure.
	what string
	tick uint64 // the world tick it was handed to the host in
	// bound is the host's bound, slack included; with progress it runs
	// from the host's last progress too (a submission).
	bound    uint64
	progress bool
}

func (k *AnswerChecker) progressOf(h answerHost) *hostProgress {
	if k.hosts == nil {
		k.hosts = make(map[answerHost]*hostProgress)
	}
	p := k.hosts[h]
	if p == nil {
		p = &hostProgress{}
		k.hosts[h] = p
	}
	return p
}

// OnProgress notes node's host of group at commit number commit and sync
// ticket durable (0 for a host without syncs) after its tick at now.
func (k *AnswerChecker) OnProgress(node int, group, commit, durable, now uint64) {
	p := k.progressOf(answerHost{node, group})
	if p.commit != commit || p.durable != durable {
		p.commit, p.durable, p.at = commit, durable, now
	}
}

// OnSubmit notes a request handed to node's host of group at tick now,
// which the host answers with ticket within timeout ticks of the later of
// now and its last progress. what names the request.
func (k *AnswerChecker) OnSubmit(node int, group, ticket uint64, what string, now, timeout uint64) {
	k.pending = append(k.pending, pendingAnswer{host: answerHost{node, group}, kind: answerSubmitted, ticket: ticket,
		what: what, tick: now, bound: timeout + answerSlackTicks, progress: true})
}

// OnAnswer notes node's host of group answering the submission of ticket
// at tick now.
func (k *AnswerChecker) OnAnswer(node int, group, ticket, now uint64) {
	k.answer(answerHost{node, group}, answerSubmitted, ticket, now)
}

// OnRead notes a read handed to node's host of group at tick now, which it
// answers within timeout ticks; it returns the number to give OnReadDone.
func (k *AnswerChecker) OnRead(node int, group uint64, what string, now, timeout uint64) uint64 {
	k.reads++
	k.pending = append(k.pending, pendingAnswer{host: answerHost{node, group}, kind: answerRead, ticket: k.reads,
		what: what, tick: now, bound: timeout + answerSlackTicks})
	return k.reads
}

// OnReadDone notes node's host of group answering read number read.
func (k *AnswerChecker) OnReadDone(node int, group, read, now uint64) {
	k.answer(answerHost{node, group}, answerRead, read, now)
}

func (k *AnswerChecker) answer(h answerHost, kind answerKind, ticket, now uint64) {
	for i := range k.pending {
		p := &k.pending[i]
		if p.host == h && p.kind == kind && p.ticket == ticket {
			k.Answered++
			k.WaitedMax = max(k.WaitedMax, now-p.tick)
			k.pending = append(k.pending[:i], k.pending[i+1:]...)
			return
		}
	}
	if k.failure == nil {
		what := "submission with ticket"
		if kind == answerRead {
			what = "read"
		}
		k.failure = fmt.Errorf("node %d %s answered its %s %d at tick %d, which it owed no answer: answered already, or never handed to it",
			h.node, groupName(h.group), what, ticket, now)
	}
}

// ForgetNode forgets the requests of node's hosts and their progress: the
// node stopped, and they went with its process.
func (k *AnswerChecker) ForgetNode(node int) {
	k.forget(func(h answerHost) bool { return h.node == node })
}

// Forget forgets the requests of node's host of group and its progress:
// the host stopped (the group went away there).
func (k *AnswerChecker) Forget(node int, group uint64) {
	k.forget(func(h answerHost) bool { return h == answerHost{node, group} })
}

func (k *AnswerChecker) forget(gone func(answerHost) bool) {
	kept := k.pending[:0]
	for _, p := range k.pending {
		if gone(p.host) {
			k.Forgotten++
			continue
		}
		kept = append(kept, p)
	}
	clear(k.pending[len(kept):])
	k.pending = kept
	for h := range k.hosts {
		if gone(h) {
			delete(k.hosts, h) // deletions only: the order reaches nothing
		}
	}
}

// Check returns the first answer given that was not owed, or an error
// naming the first request (in submission order) that has waited past its
// bound at tick now; describe, if not nil, adds the state of the host that
// owes the answer.
func (k *AnswerChecker) Check(now uint64, describe func(node int, group uint64) string) error {
	if k.failure != nil {
		return k.failure
	}
	for _, p := range k.pending {
		from, since := p.tick, ""
		if hp := k.hosts[p.host]; p.progress && hp != nil && hp.at > from {
			from = hp.at
			since = fmt.Sprintf(", its host's last progress (commit %d, sync ticket %d) at tick %d", hp.commit, hp.durable, hp.at)
		}
		if now-from <= p.bound {
			continue
		}
		state := ""
		if describe != nil {
			state = describe(p.host.node, p.host.group)
		}
		return fmt.Errorf("node %d %s never answered %s: handed to it at tick %d%s, unanswered after %d ticks (the host's bound %d ticks, slack included)%s",
			p.host.node, groupName(p.host.group), p.what, p.tick, since, now-p.tick, p.bound, state)
	}
	return nil
}

// Pending returns how many requests wait for their answers.
func (k *AnswerChecker) Pending() int { return len(k.pending) }
