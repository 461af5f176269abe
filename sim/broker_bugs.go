package sim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// Checks of what a partition group's host promises about its machine and
// its segments, made as it acts, so that the broker-level planted bugs
// (vsr.BugOffsetStoreBeforeCommit, vsr.BugPersistedReplyBeforeSync; the
// read path's vsr.BugPollPastCommit is in broker.go) are found where they
// happen, not only when a later fault turns them into a lost message:
//
//   - replicated state changes only through Apply: between the end of one
//     applied op and the start of the next, the partition machine's
//     replicated state (offsets, counters, stored consumer offsets) is
//     what the last apply left (a restore moves its last op and starts
//     over);
//   - a persisted topic's committed send is answered only once the
//     segment writes its own op's flush made are synced on the replying
//     node (the barrier; the durability seed: "a singleton with persisted
//     syncs its local segment state before replying", and the host holds
//     every persisted reply for its ticket);
//   - a poll is served from applied state, never past the commit
//     frontier: every message a poll reply carries is the message some
//     node applied (committed) at that offset, checked as the reply
//     leaves (checkPollApplied), not only when a later view change drops
//     an uncommitted message a poll saw;
//   - a descriptor checkpoint names only a synced segment frontier: when
//     it becomes durable the node's segments are synced up to it, and a
//     node that opens over its own durable checkpoint finds its segments
//     holding every message the checkpoint says was flushed, whatever
//     power loss struck, unless a scenario damaged the files (so the
//     journal history below a checkpoint is reclaimed only once the
//     segments that replace it are synced). It holds only for the host's
//     descriptor checkpoints (Host.DescriptorCheckpoints); vsr's own
//     whole-machine checkpoints wait for no segment sync.

// observedSegments is a node's Effects for one group: the segment store,
// with the host's apply observed (group.Observer).
type observedSegments struct {
	*simSegments
	host *group.Host
	// digest is the machine's replicated state after the last apply.
	digest machineDigest
	have   bool
	// applying is the op being applied; flushedBy[op] is the last offset
	// op's own flush wrote (a persisted topic's ops only).
	applying  uint64
	flushedBy map[uint64]uint64
	// nextAfter[op] is the machine's next offset after op's apply: a
	// descriptor checkpoint of op says every message below it is flushed.
	nextAfter map[uint64]uint64
	// checkpoint is the checkpoint op last checked.
	checkpoint uint64
}

// machineDigest is the replicated state of a partition machine that only
// Apply (or a restore) may change.
type machineDigest struct {
	lastOp, next, first, count uint64
	offsets                    []partition.StoredOffset
}

func machineDigestOf(m *partition.Machine) machineDigest {
	return machineDigest{lastOp: m.LastOp(), next: m.NextOffset(), first: m.FirstOffset(), count: m.MessagesCount(), offsets: m.StoredOffsets()}
}

func (d machineDigest) equal(o machineDigest) bool {
	return d.lastOp == o.lastOp && d.next == o.next && d.first == o.first && d.count == o.count && slices.Equal(d.offsets, o.offsets)
}

// observe returns node i's Effects of group g for a new incarnation.
func (w *brokerWorld) observe(i, g int) *observedSegments {
	if w.observed == nil {
		w.observed = make([][]*observedSegments, w.n)
		for k := range w.observed {
			w.observed[k] = make([]*observedSegments, w.groups)
		}
	}
	o := &observedSegments{simSegments: w.nodes[i].segments[g], flushedBy: map[uint64]uint64{}, nextAfter: map[uint64]uint64{}}
	w.observed[i][g] = o
	return o
}

// BeforeApply implements group.Observer: the machine must still be in
// the state the last apply left.
func (o *observedSegments) BeforeApply(op, _ uint64, _ uint8, _ []byte) {
	o.applying = op
	if o.w.meta != nil {
		o.w.meta.checkTopicGate(o.node, o.group, op)
	}
	if o.host == nil || !o.have {
		return
	}
	now := machineDigestOf(o.host.Machine())
	if now.lastOp == o.digest.lastOp && !now.equal(o.digest) {
		o.w.failAs("apply", fmt.Errorf("node %d group %d: the partition machine changed outside Apply between op %d and op %d: %+v after op %d's apply, %+v before op %d's",
			o.node, o.group, o.digest.lastOp, op, o.digest, o.digest.lastOp, now, op))
	}
}

// AfterApply implements group.Observer.
func (o *observedSegments) AfterApply(op uint64, operation uint8, body []byte, code wire.ErrorCode) {
	if o.host == nil {
		return
	}
	o.digest, o.have = machineDigestOf(o.host.Machine()), true
	o.nextAfter[op] = o.digest.next
	if operation == partition.OperationSendMessages && code == wire.ErrorCodeOK {
		o.w.noteApplied(o.group, o.digest.next, body)
	}
	if window := 2 * o.w.params.JournalSlots; op > window {
		delete(o.flushedBy, op-window)
		delete(o.nextAfter, op-window)
	}
}

// CarryOut records, for a persisted topic, how far the op being applied
// flushed, then carries the effect out.
func (o *observedSegments) CarryOut(m *partition.Machine, e partition.Effect) (uint64, wire.ErrorCode, error) {
	if e.Kind == partition.EffectFlush && o.persisted {
		o.flushedBy[o.applying] = e.UpTo
	}
	return o.simSegments.CarryOut(m, e)
}

// Reset checks, when the node opens over its own durable checkpoint (the
// host's Open restores it before the open completes), that the segments
// hold everything the descriptor says was flushed. A peer's checkpoint
// the node installed is not its promise, neither when installed nor when
// a restart opens over it (117, 317: the node restarted before the
// segment transfer repaired what the peer's descriptor names).
func (o *observedSegments) Reset(m *partition.Machine) error {
	err := o.simSegments.Reset(m)
	w := o.w
	own := w.ownCheckpoints[[3]uint64{uint64(o.node), uint64(o.group), m.LastOp()}]
	if errors.Is(err, ErrMissingHistory) && o.host != nil && o.host.DescriptorCheckpoints() && own &&
		!w.nodes[o.node].opened[o.group] && !w.segmentsDamaged[[2]int{o.node, o.group}] {
		w.failAs("checkpoint-frontier", fmt.Errorf("node %d group %d opened over its own checkpoint (op %d) whose flushed frontier its segments never synced: %w",
			o.node, o.group, m.LastOp(), err))
	}
	return err
}

// checkCheckpoints runs checkCheckpointFrontier for every host at the end
// of a tick.
func (w *brokerWorld) checkCheckpoints() {
	for i := range w.nodes {
		for g := 0; g < w.groups && w.nodes[i].up; g++ {
			w.checkCheckpointFrontier(i, g)
		}
	}
}

// checkCheckpointFrontier checks node i's descriptor checkpoint of group g
// when the host records one (the replica's pending checkpoint; at the end
// of a tick, and after the node's storage completions, before its segment
// syncs complete) and when it becomes durable: of an op this incarnation
// applied, it must find every message it says was flushed already synced
// in the segments.
func (w *brokerWorld) checkCheckpointFrontier(i, g int) {
	if w.observed == nil {
		return
	}
	o := w.observed[i][g]
	h := o.host
	if h == nil || !h.DescriptorCheckpoints() || h.Err() != nil {
		return
	}
	r := h.Replica()
	op, pending := r.PendingCheckpointOp()
	what := "recorded (being written)"
	if !pending {
		op, what = r.CheckpointOp(), "durable"
	}
	if op <= o.checkpoint {
		return
	}
	o.checkpoint = op
	next, ok := o.nextAfter[op]
	key := [3]uint64{uint64(i), uint64(g), op}
	if !ok {
		// Not applied here: installed from a peer, or restored at open.
		// A peer's checkpoint being installed replaces whatever this
		// node recorded of the same op before: its own checkpoint of op
		// that a crash cut off before it was durable (the restart opened
		// over an older one, whose Reset rightly dropped the segments
		// above that one's frontier) is no longer what its superblock
		// will name (2379: node 2 group 1 recorded op 102, flushed up to
		// 134, crashed mid-checkpoint, reopened at op 85 with its
		// segments cut to 109, then installed a peer's op 102).
		if pending {
			delete(w.ownCheckpoints, key)
		}
		return
	}
	if w.ownCheckpoints == nil {
		w.ownCheckpoints = map[[3]uint64]bool{}
	}
	w.ownCheckpoints[key] = true
	s := o.simSegments
	for k, b := range s.batches {
		if batchView(b).BaseOffset() < next && !s.batchSynced(k) {
			w.failAs("checkpoint-frontier", fmt.Errorf("node %d group %d: the checkpoint of op %d (every message below offset %d flushed) is %s while segment batch %d at offset %d is not synced",
				i, g, op, next, what, k, batchView(b).BaseOffset()))
			return
		}
	}
}

// checkReplyBarrier checks a committed send's reply on a persisted topic:
// every batch its op flushed is synced on the replying node.
func (w *brokerWorld) checkReplyBarrier(i, g int, reply group.Reply) {
	if !w.params.groupPersisted(g) || reply.Disposition != vsr.DispositionNone || reply.Code != wire.ErrorCodeOK ||
		reply.Operation != partition.OperationSendMessages || w.observed == nil {
		return
	}
	o := w.observed[i][g]
	upTo, ok := o.flushedBy[reply.Op]
	if !ok {
		return
	}
	delete(o.flushedBy, reply.Op)
	s := o.simSegments
	for k, b := range s.batches {
		if batchView(b).BaseOffset() <= upTo && !s.batchSynced(k) {
			w.failAs("barrier", fmt.Errorf("node %d group %d: the persisted reply of op %d went out with its flush up to offset %d not synced (batch %d of %d, at offset %d)",
				i, g, reply.Op, upTo, k, len(s.batches), batchView(b).BaseOffset()))
			return
		}
	}
}

// noteApplied records the message ids of a send some node applied to
// group g, its machine's next offset then being next: the send's messages
// took the offsets just below it. The first node to apply an offset names
// its message; commit-prefix agreement checks that the others agree.
func (w *brokerWorld) noteApplied(g int, next uint64, body []byte) {
	_, send, err := partition.DecodeSendMessages(body)
	if err != nil {
		return
	}
	if w.appliedIDs == nil {
		w.appliedIDs = make([]map[uint64]uint64, w.groups)
	}
	if w.appliedIDs[g] == nil {
		w.appliedIDs[g] = map[uint64]uint64{}
	}
	var ids []uint64
	it := batchView(send.Batch).Frames()
	for f, more := it.Next(); more; f, more = it.Next() {
		ids = append(ids, f.ID().Low)
	}
	if uint64(len(ids)) > next {
		return
	}
	base := next - uint64(len(ids))
	for k, id := range ids {
		if _, ok := w.appliedIDs[g][base+uint64(k)]; !ok {
			w.appliedIDs[g][base+uint64(k)] = id
		}
	}
}

// checkPollApplied checks the messages a poll reply of node i for group
// g carries as it leaves: each is the message a node applied at its
// offset. A poll served past the commit frontier carries a message no
// node applied yet (and one a view change may still drop). Skipped for a
// group whose durability is waived: after more than f nodes lost its
// memory its offsets may be taken again by other messages.
func (w *brokerWorld) checkPollApplied(i, g int, offsets, ids []uint64) {
	if w.waived(g) != "" {
		return
	}
	for k, off := range offsets {
		var applied map[uint64]uint64
		if w.appliedIDs != nil {
			applied = w.appliedIDs[g]
		}
		id, ok := applied[off]
		if !ok {
			w.failAs("poll", fmt.Errorf("node %d group %d served message %d at offset %d in a poll, which no node applied: a read past the commit frontier",
				i, g, ids[k], off))
			return
		}
		if id != ids[k] {
			w.failAs("poll", fmt.Errorf("node %d group %d served message %d at offset %d in a poll, where message %d was applied",
				i, g, ids[k], off, id))
			return
		}
	}
}
