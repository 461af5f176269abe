package vsr

// repair asks peers for what the log lacks: headers beyond the op when the
// primary is known to be ahead, bodies of known headers, or a checkpoint
// when the ops needed are no longer in any journal. It runs on the repair
// timeout and after a view starts.
func (r *Replica) repair() {
	if r.solo() || (r.status != StatusNormal && r.status != StatusViewChange) {
		return
	}
	if r.transfer.behind {
		r.requestCheckpoint()
		return
	}
	if r.status != StatusNormal {
		return
	}
	if r.syncing() {
		// Not in the view's log yet: ask for it again once no checkpoint
		// is on its way (syncTo).
		if r.sb.checkpoint == nil && !r.transfer.installing {
			r.requestStartView(r.view)
		}
		return
	}
	if !r.Primary() && (r.commitMax > r.op) {
		r.requestHeaders()
	}
	sent := 0
	attempt := r.timers.ticks / max(r.cfg.RepairTimeoutTicks, 1)
	for op := r.commitMin + 1; op <= r.op && sent < repairRequestsPerTickMax; op++ {
		e := r.log.at(op)
		if e == nil {
			// A hole in the chain: the header above names the checksum of
			// the missing prepare, so any peer holding it can fill it.
			next := r.log.at(op + 1)
			if next == nil {
				if op == r.op && !r.Primary() {
					r.requestHeaders()
				}
				continue
			}
			r.requestPrepare(op, next.header.Parent, attempt+op)
			sent++
			continue
		}
		if e.prepare != nil {
			continue
		}
		r.requestPrepare(op, e.header.Checksum, attempt+op)
		sent++
	}
}

// requestPrepare asks a peer for the prepare of op with the checksum sum.
func (r *Replica) requestPrepare(op uint64, sum Uint128, attempt uint64) {
	r.send(r.repairPeer(attempt), &Message{Header: Header{Command: CommandRequestPrepare, View: r.view, Op: op, Context: sum}})
}

// repairPeer picks a peer to ask, rotating so that a peer that lost the
// data too is not asked forever; a backup asks the primary first.
func (r *Replica) repairPeer(attempt uint64) uint8 {
	n := uint64(r.cfg.ReplicaCount)
	if n == 1 {
		return r.cfg.ReplicaIndex
	}
	if !r.Primary() && attempt%2 == 0 {
		return r.primaryIndex(r.view)
	}
	peer := uint8((uint64(r.cfg.ReplicaIndex) + 1 + attempt%(n-1)) % n)
	return peer
}

// requestHeaders asks the primary for its log's chain of headers.
func (r *Replica) requestHeaders() {
	if r.Primary() || r.status != StatusNormal || r.syncing() {
		return
	}
	if r.lastHeadersRequest != 0 && r.timers.ticks-r.lastHeadersRequest < r.cfg.RepairTimeoutTicks/2 {
		return
	}
	r.lastHeadersRequest = max(r.timers.ticks, 1)
	r.send(r.primaryIndex(r.view), &Message{Header: Header{Command: CommandRequestHeaders, View: r.view, Op: r.op + 1, Commit: r.commitMax}})
}

func (r *Replica) onRequestPrepare(m *Message) {
	if r.status == StatusRecovering {
		return
	}
	e := r.log.at(m.Op)
	if e == nil || e.prepare == nil || (!m.Context.IsZero() && e.header.Checksum != m.Context) {
		if m.Op <= r.checkpointOp && len(r.checkpointData) > 0 {
			// The op is gone from our journal but covered by our checkpoint:
			// offer the checkpoint instead.
			r.sendCheckpointChunk(m.Replica, 0)
		}
		return
	}
	// The prepare goes out unchanged: its checksum is its identity.
	r.network.SendToReplica(m.Replica, e.prepare.Clone())
}

func (r *Replica) onRequestHeaders(m *Message) {
	if !r.Primary() || m.View != r.view {
		return
	}
	r.send(m.Replica, &Message{Header: Header{Command: CommandHeaders, View: r.view, LogView: r.logView, Op: r.op, Commit: r.commitMax, CheckpointOp: r.checkpointOp}, Body: r.chainBody()})
}

// onHeaders installs the primary's chain at a backup of the same view.
func (r *Replica) onHeaders(m *Message) {
	if r.status != StatusNormal || r.Primary() {
		return
	}
	if m.View > r.view {
		r.requestStartView(m.View)
		return
	}
	if m.View != r.view || m.Replica != r.primaryIndex(r.view) {
		return
	}
	headers, err := decodeChain(m.Body)
	if err != nil {
		return
	}
	r.timers.normalHeartbeat.reset()
	r.advanceCommitMax(m.Commit)
	if r.syncing() {
		return // only a StartView brings it into the view's log
	}
	if m.Op >= r.op {
		// The log is a prefix of the primary's: take what the journal
		// window holds.
		op := min(m.Op, r.opPrepareMax())
		for len(headers) > 0 && headers[len(headers)-1].Op > op {
			headers = headers[:len(headers)-1]
		}
		switch {
		case len(headers) > 0 && r.chainConnects(headers):
			r.installChain(headers, op)
		case !r.transfer.installing && r.sb.checkpoint == nil:
			// The chain starts beyond what the log reaches: the ops
			// between are gone from the primary's journal.
			r.transfer.behind = true
		}
	}
	r.repair()
	r.afterLogChange()
}
