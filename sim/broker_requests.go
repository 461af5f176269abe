package sim

// The broker workload's connection handler and reads: a node's handling
// of a client request (partition operations to the group's host, reads
// through the host's read index) and what a read serves.

import (
	"fmt"

	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// handleRequest is node i's connection handler: a partition operation goes
// to the group's host (which answers through Replies); a read goes through
// the host's read index (Host.Read) and is served from its applied state
// once the host confirmed it still leads its view, else answered with the
// host's disposition (58: try another node; 57: retry).
func (w *brokerWorld) handleRequest(i int, req *brokerRequest) {
	node := w.nodes[i]
	if req.request <= node.lastRequest[req.client] {
		return // a duplicate the client's TCP stream would never deliver
	}
	node.lastRequest[req.client] = req.request
	if req.group == brokerMetaGroup {
		w.meta.handle(i, req)
		return
	}
	if w.meta != nil && !w.meta.topicVisible(i, req.group) && !w.bugs.Has(vsr.BugPartitionOpBeforeTopic) {
		// The server resolves the topic in its metadata view before it
		// submits to the partition (metadata.ResolveSend): none, no op.
		w.meta.counters.gated++
		w.network.Send(w.now, i, w.n+req.client, &brokerPacket{rep: &brokerReply{client: req.client, request: req.request, group: req.group,
			op: req.op, code: uint32(metadata.CodeTopicIDNotFound), hint: w.primaryHint(i, req.group)}})
		return
	}
	h := node.hosts[req.group]
	w.inputNode, w.inputGroup = i, req.group
	id := vsr.Uint128{Lo: clientIDBase + uint64(req.client), Hi: simCluster}
	what := fmt.Sprintf("client %d's %s request %d", req.client, brokerOpNames[req.op], req.request)
	if req.op == brokerSend || req.op == brokerStore {
		// Before the call: the host may answer inside it.
		w.answers.OnSubmit(i, uint64(req.group), h.NextTicket(), what, w.now, h.RequestTimeoutTicks())
	}
	switch req.op {
	case brokerSend:
		h.Submit(id, req.request, partition.OperationSendMessages, req.body)
		w.afterInput()
		return
	case brokerStore:
		h.Submit(id, req.request, partition.OperationStoreConsumerOffset, req.body)
		w.afterInput()
		return
	}
	inCall := true
	var read uint64 // the answers checker's number of the read, once handed to the host
	serve := func(d vsr.Disposition) {
		if read != 0 {
			w.answers.OnReadDone(i, uint64(req.group), read, w.now)
		}
		w.countRead(d, !inCall)
		rep := &brokerReply{client: req.client, request: req.request, group: req.group, op: req.op, hint: w.primaryHint(i, req.group)}
		switch {
		case d != vsr.DispositionNone:
			rep.code = uint32(group.Code(d))
		case h.Err() != nil:
			rep.code = uint32(group.Code(vsr.DispositionNotPrimary))
		case req.op == brokerPoll:
			rep.offsets, rep.ids = w.serveLog(i, req.group, req.start, req.count)
			w.checkPollApplied(i, req.group, rep.offsets, rep.ids)
		default:
			rep.value, rep.found = h.View().StoredOffset(consumerKey(req.client))
		}
		w.network.Send(w.now, i, w.n+req.client, &brokerPacket{rep: rep})
	}
	if req.op == brokerPoll && w.bugs.Has(vsr.BugPollPastCommit) && h.Serving() {
		// The planted bug's read path serves what the primary holds at
		// once: it waits neither for the commit number nor for the read
		// index that confirms the primary's view.
		serve(vsr.DispositionNone)
		return
	}
	read = w.answers.OnRead(i, uint64(req.group), what, w.now, w.readTimeoutTicks(i, req.group))
	h.Read(serve)
	inCall = false
	w.afterInput()
}

// readTimeoutTicks is the bound of node i's host of group g on a read
// (Host.Read answers one not confirmed within the normal heartbeat
// timeout).
func (w *brokerWorld) readTimeoutTicks(i, g int) uint64 {
	return max(w.configs[i][g].Replica.NormalHeartbeatTimeoutTicks, 1)
}

// countRead counts a read's answer: served or refused, and whether it
// waited for a read round.
func (w *brokerWorld) countRead(d vsr.Disposition, waited bool) {
	c := &w.reads
	switch {
	case d == vsr.DispositionNone && waited:
		c.servedAfterRound++
	case d == vsr.DispositionNone:
		c.servedAtOnce++
	case waited:
		c.refusedAfterWait++
	default:
		c.refused++
	}
}

// readCounters count the broker reads' answers (Host.Read).
type readCounters struct {
	// servedAtOnce: answered inside the call (a group of one, or the
	// planted bug's read path); servedAfterRound: after a read round.
	servedAtOnce, servedAfterRound uint64
	// refused: answered with a disposition at once (not the primary);
	// refusedAfterWait: admitted by a primary, then refused (it left its
	// view, or its round was not confirmed in time): the reads a deposed
	// primary would have served from stale state.
	refused, refusedAfterWait uint64
}

// primaryHint returns the primary of node i's view of group g; -1 when
// that is node i itself but it is not a primary able to admit requests
// (not in normal status, or its host failed or misses history): a hint
// naming the node that answered tells the client to keep asking it.
func (w *brokerWorld) primaryHint(i, g int) int {
	h := w.host(i, g)
	if h == nil {
		return -1
	}
	p := int(vsr.PrimaryIndex(h.Replica().View(), uint64(g), uint8(w.n)))
	if p == i && (!h.Replica().Primary() || h.Err() != nil) {
		return -1
	}
	return p
}

// consumerKey is client c's consumer.
func consumerKey(c int) partition.ConsumerKey {
	return partition.ConsumerKey{Kind: partition.ConsumerKindConsumer, ID: uint32(c + 1)}
}

// serveLog reads up to count messages from start out of node i's applied
// state of group g: the segments, then the machine's unflushed batches,
// clamped by the machine to what it applied (View.PollRange). With the
// planted BugPollPastCommit it goes on into the sends the replica
// prepared but has not committed.
func (w *brokerWorld) serveLog(i, g int, start uint64, count uint32) (offsets, ids []uint64) {
	h := w.nodes[i].hosts[g]
	v := h.View()
	first, last, ok := v.PollRange(start, count)
	if ok {
		add := func(b []byte) {
			bv := batchView(b)
			it := bv.Frames()
			for f, more := it.Next(); more; f, more = it.Next() {
				off := bv.BaseOffset() + uint64(f.OffsetDelta())
				if off >= first && off <= last && (len(offsets) == 0 || off > offsets[len(offsets)-1]) {
					offsets = append(offsets, off)
					ids = append(ids, f.ID().Low)
				}
			}
		}
		for _, b := range w.nodes[i].segments[g].batches {
			add(b)
		}
		for _, b := range v.Unflushed() {
			add(b)
		}
	}
	if w.bugs.Has(vsr.BugPollPastCommit) {
		r := h.Replica()
		next := v.NextOffset()
		for op := r.CommitNumber() + 1; op <= r.OpNumber() && uint32(len(ids)) < count; op++ {
			e, ok := r.Prepared(op)
			if !ok || e.Operation != partition.OperationSendMessages {
				continue
			}
			_, send, err := partition.DecodeSendMessages(e.Body)
			if err != nil {
				continue
			}
			it := batchView(send.Batch).Frames()
			for f, more := it.Next(); more; f, more = it.Next() {
				if next >= start && uint32(len(ids)) < count && (len(offsets) == 0 || next == offsets[len(offsets)-1]+1) {
					offsets = append(offsets, next)
					ids = append(ids, f.ID().Low)
				}
				next++
			}
		}
	}
	return offsets, ids
}
