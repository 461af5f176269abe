package sim

import (
	"fmt"
	"math"

	"github.com/anishathalye/porcupine"
)

// The broker workload's end-of-run checkers. Commit-prefix agreement per
// group runs during the run (CommitChecker.Scan per group, every tick);
// liveness per group at the end of the liveness phase
// (brokerWorld.livenessProblem). What follows runs after the run, on the
// history and the final logs the core serves:
//
//   - porcupine, partitioned by group and by (group, consumer): the
//     partition log model (partitionLogModel) and a register per consumer
//     offset (offsetRegisterModel), with the final log and final stored
//     offsets the core serves as the last reads;
//   - the Jepsen Kafka checker's classes as named rules (brokerRules):
//     lost-write, duplicate, inconsistent-offsets, poll-skip,
//     nonmonotonic-poll, nonmonotonic-send, and torn-batch,
//     phantom-write, offset-store-rejected.
//
// Precisely, per group (a partition), with sends at-least-once:
//   - a send invocation answered with base offset b appended its n
//     messages at b..b+n-1, b being the log's length when it was applied;
//     one answered 58 appended nothing; one answered 57 or never
//     answered may have appended them once, at any time after its call
//     (so porcupine leaves it open to the end);
//   - a poll of count from start returns messages log[start..start+k-1] in
//     order, k = min(count, len(log) - start), or none from start at or
//     past the end: a poll is served through the read index (Host.Read),
//     by a primary that confirmed it still led its view after the poll
//     arrived and applied every op of its log then, so it sees every
//     acknowledged send, and never one that did not commit;
//   - the messages of one logical send (same ids) appear in the final log
//     at most as many times as it had invocations not answered 58, so a
//     send invoked once appears at most once.
//
// A group's durability rules (lost-write, the final reads) are waived
// when its topic is replicated and more than f nodes lost its memory at
// once (brokerWorld.lostMemory), as the durability seed allows.

// idLog is an immutable partition log for porcupine: a cons list of
// message ids, newest first.
type idLog struct {
	length int
	hash   uint64
	id     uint64
	prev   *idLog
}

func (s *idLog) len() int {
	if s == nil {
		return 0
	}
	return s.length
}

func (s *idLog) append(ids []uint64) *idLog {
	for _, id := range ids {
		n := &idLog{prev: s, id: id, length: s.len() + 1}
		if s != nil {
			n.hash = (s.hash^id)*0x100000001b3 + uint64(n.length)
		} else {
			n.hash = id*0x9e3779b97f4a7c15 + 1
		}
		s = n
	}
	return s
}

// slice returns ids [from, to) (to <= len).
func (s *idLog) slice(from, to int) []uint64 {
	out := make([]uint64, to-from)
	for n := s; n != nil && n.length > from; n = n.prev {
		if n.length <= to {
			out[n.length-1-from] = n.id
		}
	}
	return out
}

type brokerRegister struct {
	value uint64
	set   bool
}

type brokerLinInput struct {
	op    brokerOp
	key   int // partition key: group for the log, else group<<32|consumer
	ids   []uint64
	start uint64
	count uint32
	value uint64
}

type brokerLinOutput struct {
	known bool
	base  uint64
	ids   []uint64
	value uint64
	found bool
}

// brokerModel is the sequential specification of a partition log and of
// its consumer offsets, partitioned by key (a log state and register
// states never meet).
var brokerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		var keys []int
		for _, op := range history {
			k := op.Input.(brokerLinInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sortInts(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() interface{} { return nil },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(brokerLinInput)
		out := output.(brokerLinOutput)
		switch in.op {
		case brokerSend:
			s, _ := state.(*idLog)
			if out.known && out.base != uint64(s.len()) {
				return false, state
			}
			return true, s.append(in.ids)
		case brokerPoll:
			s, _ := state.(*idLog)
			want := uint64(0)
			if n := uint64(s.len()); in.start < n {
				want = min(uint64(in.count), n-in.start)
			}
			if uint64(len(out.ids)) != want {
				return false, state
			}
			if want == 0 {
				return true, state
			}
			end := in.start + want
			got := s.slice(int(in.start), int(end))
			for i := range got {
				if got[i] != out.ids[i] {
					return false, state
				}
			}
			return true, state
		case brokerStore:
			r, _ := state.(brokerRegister)
			if out.known && !out.found { // rejected: no change
				return true, r
			}
			return true, brokerRegister{value: in.value, set: true}
		default:
			r, _ := state.(brokerRegister)
			return out.found == r.set && (!r.set || out.value == r.value), r
		}
	},
	Equal: func(a, b interface{}) bool {
		switch x := a.(type) {
		case *idLog:
			y, _ := b.(*idLog)
			for x != nil && y != nil {
				if x == y {
					return true
				}
				if x.length != y.length || x.hash != y.hash || x.id != y.id {
					return false
				}
				x, y = x.prev, y.prev
			}
			return x == nil && y == nil
		case brokerRegister:
			y, _ := b.(brokerRegister)
			return x == y
		}
		switch y := b.(type) {
		case *idLog:
			return y == nil
		case brokerRegister:
			return !y.set
		}
		return true
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(brokerLinInput)
		out := output.(brokerLinOutput)
		switch in.op {
		case brokerSend:
			if !out.known {
				return fmt.Sprintf("send(%d msgs from id %x) -> ?", len(in.ids), in.ids[0])
			}
			return fmt.Sprintf("send(%d msgs from id %x) -> %d", len(in.ids), in.ids[0], out.base)
		case brokerPoll:
			return fmt.Sprintf("poll(%d, %d) -> %d msgs %x", in.start, in.count, len(out.ids), out.ids)
		case brokerStore:
			return fmt.Sprintf("store(%d) known=%v", in.value, out.known)
		}
		if !out.found {
			return "read-offset -> none"
		}
		return fmt.Sprintf("read-offset -> %d", out.value)
	},
}

// porcupineOps converts the broker history (plus the final reads) into
// porcupine operations.
func (w *brokerWorld) porcupineOps() []porcupine.Operation {
	var ops []porcupine.Operation
	h := &w.history
	resolved := w.resolvePendingSends()
	for i := range h.entries {
		e := &h.entries[i]
		if (e.op == brokerSend || e.op == brokerStore || e.op == brokerReadOffset) && w.waived(e.group) != "" {
			// Lost memory: the log and offsets may have lost what was
			// acknowledged; the named rules that need no durability
			// still ran.
			continue
		}
		if e.op == brokerPoll && w.waived(e.group) != "" {
			continue
		}
		key := e.group
		if e.op == brokerStore || e.op == brokerReadOffset {
			key = (e.group+1)<<32 | (e.client + 1)
		}
		in := brokerLinInput{op: e.op, key: key, start: e.start, count: e.max, value: e.value}
		op := porcupine.Operation{ClientId: e.client, Input: in, Call: int64(e.call), Return: math.MaxInt64, Output: brokerLinOutput{}}
		switch e.op {
		case brokerSend:
			if e.outcome == outcomeNotApplied {
				continue
			}
			ids := make([]uint64, e.count)
			for k := range ids {
				ids[k] = e.firstID + uint64(k)
			}
			in.ids = ids
			op.Input = in
			if e.done && e.outcome == outcomeOK {
				op.Return, op.Output = int64(e.ret), brokerLinOutput{known: true, base: e.base}
			} else if base, ok := resolved[i]; !ok {
				continue // the final log shows it never applied
			} else {
				op.Output = brokerLinOutput{known: true, base: base}
			}
		case brokerStore:
			if e.outcome == outcomeNotApplied {
				continue
			}
			if e.done {
				op.Return = int64(e.ret)
				op.Output = brokerLinOutput{known: true, found: e.outcome == outcomeOK}
			}
		default:
			if !e.done {
				continue
			}
			op.Return = int64(e.ret)
			op.Output = brokerLinOutput{known: true, ids: e.ids, value: e.value, found: e.found}
		}
		ops = append(ops, op)
	}
	// The final reads: the whole log and every consumer's offset, as the
	// core serves them after the run.
	end := int64(w.events + 1)
	for g := range w.finalLogs {
		if w.finalLogs[g] == nil && w.waived(g) != "" {
			continue
		}
		p := w.primaryOf(g)
		if p < 0 {
			continue
		}
		log := w.finalLogs[g]
		ops = append(ops, porcupine.Operation{ClientId: len(w.clients), Call: end, Return: end + 1,
			Input:  brokerLinInput{op: brokerPoll, key: g, count: uint32(len(log))},
			Output: brokerLinOutput{known: true, ids: log}})
		v := w.nodes[p].hosts[g].View()
		for c := range w.clients {
			value, found := v.StoredOffset(consumerKey(c))
			ops = append(ops, porcupine.Operation{ClientId: len(w.clients), Call: end, Return: end + 1,
				Input:  brokerLinInput{op: brokerReadOffset, key: (g+1)<<32 | (c + 1)},
				Output: brokerLinOutput{known: true, value: value, found: found}})
		}
	}
	return ops
}

// resolvePendingSends decides, from the final log, which send invocations
// without an acknowledgement took effect and where: a logical send's
// occurrences in the final log that no acknowledged invocation accounts
// for are given to its unacknowledged invocations, earliest call to
// lowest offset (the most permissive matching: an invocation may take
// effect any time after its call); the others never applied. Without it
// porcupine would have to try every unacknowledged send at every point of
// the log. It returns the offsets by history index.
func (w *brokerWorld) resolvePendingSends() map[int]uint64 {
	h := &w.history
	out := map[int]uint64{}
	occurrences := map[uint64][]uint64{}
	for g := 0; g < w.groups; g++ {
		for off, id := range w.finalLog(g) {
			occurrences[uint64(g)<<62^id] = append(occurrences[uint64(g)<<62^id], uint64(off))
		}
	}
	for l := range h.logicals {
		lg := &h.logicals[l]
		offs := occurrences[uint64(lg.group)<<62^lg.firstID]
		var pending []int
		for _, a := range lg.attempts {
			e := &h.entries[a]
			switch {
			case e.done && e.outcome == outcomeOK:
				for k, off := range offs {
					if off == e.base {
						offs = append(offs[:k:k], offs[k+1:]...)
						break
					}
				}
			case e.outcome != outcomeNotApplied:
				pending = append(pending, a)
			}
		}
		for k := 0; k < len(pending) && k < len(offs); k++ {
			out[pending[k]] = offs[k]
		}
	}
	return out
}

// check runs the end-of-run broker checkers and returns the first
// failure's checker name and error.
func (w *brokerWorld) check() (string, error) {
	if w.meta != nil {
		if name, err := w.meta.check(); err != nil {
			return name, err
		}
	}
	if name, err := w.brokerRules(); err != nil {
		return name, err
	}
	ops := w.porcupineOps()
	if result, _ := porcupine.CheckOperationsVerbose(brokerModel, ops, 0); result != porcupine.Ok {
		return "linearizability", fmt.Errorf("broker history of %d operations is not linearizable against the partition log and offset models (%s)", len(ops), result)
	}
	return "", nil
}

// brokerRules checks the Jepsen Kafka checker's classes, each by name.
func (w *brokerWorld) brokerRules() (string, error) {
	h := &w.history
	for g := 0; g < w.groups; g++ {
		if w.waived(g) != "" {
			continue // lost memory: offsets may be reassigned, as the seed allows a replicated topic
		}
		// inconsistent-offsets: every observation of an offset (an
		// acknowledged send, a poll, the final log) names one message.
		seen := map[uint64]uint64{}
		observe := func(off, id uint64, what string) error {
			if prev, ok := seen[off]; ok && prev != id {
				return fmt.Errorf("group %d: offset %d holds message %x (%s) and message %x", g, off, id, what, prev)
			}
			seen[off] = id
			return nil
		}
		for i, id := range w.finalLog(g) {
			if err := observe(uint64(i), id, "final log"); err != nil {
				return "inconsistent-offsets", err
			}
		}
		lastBase := map[int]uint64{}
		lastPolled := map[int]uint64{}
		for i := range h.entries {
			e := &h.entries[i]
			if e.group != g || !e.done || e.outcome != outcomeOK {
				continue
			}
			switch e.op {
			case brokerSend:
				for k := 0; k < e.count; k++ {
					if err := observe(e.base+uint64(k), e.firstID+uint64(k), fmt.Sprintf("send by client %d acknowledged at tick %d", e.client, e.retTick)); err != nil {
						return "inconsistent-offsets", err
					}
				}
				// nonmonotonic-send: a client's acknowledged sends to a
				// partition, one after the other, get increasing offsets.
				if prev, ok := lastBase[e.client]; ok && e.base <= prev {
					return "nonmonotonic-send", fmt.Errorf("group %d: client %d's send acknowledged at tick %d got base offset %d, its earlier send %d", g, e.client, e.retTick, e.base, prev)
				}
				lastBase[e.client] = e.base
			case brokerPoll:
				for k, off := range e.offsets {
					// poll-skip: a poll returns a contiguous run from
					// where it asked.
					if off != e.start+uint64(k) {
						return "poll-skip", fmt.Errorf("group %d: client %d's poll from %d (tick %d) returned offset %d as its message %d", g, e.client, e.start, e.retTick, off, k)
					}
					if err := observe(off, e.ids[k], fmt.Sprintf("poll by client %d at tick %d", e.client, e.retTick)); err != nil {
						return "inconsistent-offsets", err
					}
				}
				// nonmonotonic-poll: a consumer's successive polls move
				// forward.
				if len(e.offsets) > 0 {
					if prev, ok := lastPolled[e.client]; ok && e.offsets[0] <= prev {
						return "nonmonotonic-poll", fmt.Errorf("group %d: client %d polled offset %d at tick %d after offset %d", g, e.client, e.offsets[0], e.retTick, prev)
					}
					lastPolled[e.client] = e.offsets[len(e.offsets)-1]
				}
			}
		}
		if w.waived(g) != "" || w.finalLogs == nil || w.finalLogs[g] == nil && w.primaryOf(g) < 0 {
			continue
		}
		final := w.finalLog(g)
		// lost-write: every acknowledged message is at its offset.
		for i := range h.entries {
			e := &h.entries[i]
			if e.group != g || e.op != brokerSend || !e.done || e.outcome != outcomeOK {
				continue
			}
			for k := 0; k < e.count; k++ {
				off := e.base + uint64(k)
				if off >= uint64(len(final)) {
					return "lost-write", fmt.Errorf("group %d: message %x acknowledged at offset %d (client %d, tick %d) is gone: the log ends at %d", g, e.firstID+uint64(k), off, e.client, e.retTick, len(final))
				}
			}
		}
		// poll past the log: a polled message the final log lacks.
		for off := range seen {
			if off >= uint64(len(final)) {
				return "lost-write", fmt.Errorf("group %d: offset %d was served (message %x) but the final log ends at %d", g, off, seen[off], len(final))
			}
		}
		// duplicate, torn-batch, phantom-write.
		count := map[uint64]int{}
		for i, id := range final {
			count[id]++
			if l, k, ok := w.logicalOf(id); ok && k == 0 {
				for j := 1; j < h.logicals[l].count; j++ {
					if i+j >= len(final) || final[i+j] != id+uint64(j) {
						return "torn-batch", fmt.Errorf("group %d: the batch of message %x starts at offset %d but its message %d is not at %d", g, id, i, j, i+j)
					}
				}
			}
		}
		for l := range h.logicals {
			lg := &h.logicals[l]
			if lg.group != g {
				continue
			}
			may := 0
			for _, a := range lg.attempts {
				if h.entries[a].outcome != outcomeNotApplied {
					may++
				}
			}
			if n := count[lg.firstID]; n > may {
				if may == 0 {
					return "phantom-write", fmt.Errorf("group %d: message %x is in the log %d times, but every invocation of its send was answered 58 (never admitted)", g, lg.firstID, n)
				}
				return "duplicate", fmt.Errorf("group %d: message %x (client %d) is in the log %d times, but its send had %d invocations that may have applied", g, lg.firstID, lg.client, n, may)
			}
		}
		// offset-store-rejected: a store of an offset the client polled
		// (so committed) was rejected as beyond the partition.
		for i := range h.entries {
			e := &h.entries[i]
			if e.group == g && e.op == brokerStore && e.outcome == outcomeRejected && e.value < uint64(len(final)) {
				return "offset-store-rejected", fmt.Errorf("group %d: client %d's store of polled offset %d was rejected (code %d) at tick %d", g, e.client, e.value, e.code, e.retTick)
			}
		}
	}
	return "", nil
}

func (w *brokerWorld) finalLog(g int) []uint64 {
	if w.finalLogs == nil {
		return nil
	}
	return w.finalLogs[g]
}

// logicalOf maps a message id to its logical send and its index in it.
func (w *brokerWorld) logicalOf(id uint64) (logical, index int, ok bool) {
	if w.logicalByID == nil {
		w.logicalByID = map[uint64]int{}
		for l, lg := range w.history.logicals {
			w.logicalByID[lg.firstID] = l
		}
	}
	// Ids of one client are consecutive; a batch starts at its firstID.
	for k := 0; k < brokerBatchMessagesMax; k++ {
		if l, found := w.logicalByID[id-uint64(k)]; found && k < w.history.logicals[l].count {
			return l, k, true
		}
	}
	return 0, 0, false
}
