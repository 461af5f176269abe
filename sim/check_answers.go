package sim

import "fmt"

// AnswerChecker checks the group host's promise that every request it
// accepts gets an answer (PROTOCOL.md: a reply, or 57, 58, 59 and the
// other codes; never a silent drop): every send or offset store a client's
// connection submits to a node's host (Host.Submit) and every read it
// hands the host's read index (Host.Read) is answered, a reply or an error
// code, within the host's own bound of ticks, plus answerSlackTicks:
//
//   - a read within the normal heartbeat timeout of its call (Host.Read's);
//   - a submitted request within the request timeout
//     (Host.RequestTimeoutTicks) of the later of its call and the last
//     tick the host's replica changed its commit number, as the checker
//     sees it after each host tick (a primary that commits keeps its
//     waiters: the queue ahead of them is bounded and each commit moves
//     it; one that commits nothing, cut off or failed, answers).
//
// A request whose node crashed meanwhile is forgotten: it went with the
// process, and so did the client's connection.
//
// The answer is taken where the host gives it (group.Replies.Deliver, the
// read's done), not where the client receives it: the network may lose
// it, and the client's own timeout covers that. The checker keeps its
// requests in submission order, so a failure names the oldest first and a
// run stays deterministic.
type AnswerChecker struct {
	pending []pendingAnswer
	// answered counts the requests answered, forgotten those whose node
	// crashed before it answered them.
	answered, forgotten uint64
	// waitedMax is the longest wait of an answered request, in ticks.
	waitedMax uint64
	// commits[node][group] is the commit number the checker last saw
	// there, progressAt the tick it changed.
	commits, progressAt [][]uint64
}

// init sizes the checker for nodes nodes of groups partition groups and
// the metadata group (brokerMetaGroup).
func (k *AnswerChecker) init(nodes, groups int) {
	k.commits = make([][]uint64, nodes)
	k.progressAt = make([][]uint64, nodes)
	for i := range k.commits {
		k.commits[i] = make([]uint64, groups+1)
		k.progressAt[i] = make([]uint64, groups+1)
	}
}

// slot is group's index in commits and progressAt: the metadata group
// (brokerMetaGroup) is the last.
func (k *AnswerChecker) slot(node, group int) int {
	if group == brokerMetaGroup {
		return len(k.commits[node]) - 1
	}
	return group
}

// OnCommitNumber notes node's host of group at commit number commit after
// its tick at now.
func (k *AnswerChecker) OnCommitNumber(node, group int, commit, now uint64) {
	g := k.slot(node, group)
	if k.commits[node][g] != commit {
		k.commits[node][g], k.progressAt[node][g] = commit, now
	}
}

// answerSlackTicks is the checker's slack over a host's bound: a request
// submitted during tick t waits from the host's tick count then, and the
// host ticks once per world tick.
const answerSlackTicks = 1

// pendingAnswer is a request a host owes an answer.
type pendingAnswer struct {
	node, group, client int
	request             uint64
	op                  brokerOp
	tick                uint64 // the world tick it was submitted in
	bound               uint64 // the host's bound, in ticks
	// progress: the bound runs from the host's last commit too (a
	// submitted request, not a read).
	progress bool
}

// OnSubmit notes a request handed to node's host of group at tick now,
// which owes an answer within bound ticks (of the host's last commit too,
// with progress).
func (k *AnswerChecker) OnSubmit(node, group, client int, request uint64, op brokerOp, now, bound uint64, progress bool) {
	k.pending = append(k.pending, pendingAnswer{node: node, group: group, client: client, request: request, op: op, tick: now,
		bound: bound + answerSlackTicks, progress: progress})
}

// OnAnswer notes node's host of group answering client's request at tick
// now. An answer nobody waits for (a duplicate the host should not give)
// is not this checker's concern.
func (k *AnswerChecker) OnAnswer(node, group, client int, request uint64, now uint64) {
	for i, p := range k.pending {
		if p.node == node && p.group == group && p.client == client && p.request == request {
			k.answered++
			k.waitedMax = max(k.waitedMax, now-p.tick)
			k.pending = append(k.pending[:i], k.pending[i+1:]...)
			return
		}
	}
}

// OnEvicted notes node's host of group evicting client (Iggy's Eviction
// NoSession): it answers whatever request of the client is in flight.
func (k *AnswerChecker) OnEvicted(node, group, client int, now uint64) {
	kept := k.pending[:0]
	for _, p := range k.pending {
		if p.node == node && p.group == group && p.client == client {
			k.answered++
			k.waitedMax = max(k.waitedMax, now-p.tick)
			continue
		}
		kept = append(kept, p)
	}
	clear(k.pending[len(kept):])
	k.pending = kept
}

// OnCrash forgets node's requests: they went with its process.
func (k *AnswerChecker) OnCrash(node int) {
	clear(k.commits[node])
	kept := k.pending[:0]
	for _, p := range k.pending {
		if p.node == node {
			k.forgotten++
			continue
		}
		kept = append(kept, p)
	}
	clear(k.pending[len(kept):])
	k.pending = kept
}

// Check returns an error naming the first request (in submission order)
// that has waited past its bound at tick now; describe, if not nil, adds
// the state of the host that owes the answer.
func (k *AnswerChecker) Check(now uint64, describe func(node, group int) string) error {
	for _, p := range k.pending {
		from, since := p.tick, ""
		if at := k.progressAt[p.node][k.slot(p.node, p.group)]; p.progress && at > from {
			from = at
			since = fmt.Sprintf(", its last commit at tick %d", from)
		}
		if now-from > p.bound {
			state := ""
			if describe != nil {
				state = describe(p.node, p.group)
			}
			group, op := fmt.Sprintf("group %d", p.group), brokerOpNames[p.op]
			if p.group == brokerMetaGroup {
				group, op = "the metadata group", "metadata"
			}
			return fmt.Errorf("node %d %s never answered client %d's %s request %d: submitted at tick %d%s, unanswered after %d ticks (the host's bound %d ticks, slack included)%s",
				p.node, group, p.client, op, p.request, p.tick, since, now-p.tick, p.bound, state)
		}
	}
	return nil
}
