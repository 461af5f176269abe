package sim

import (
	"fmt"

	"github.com/stratabroker/strata/journal"
	"github.com/stratabroker/strata/vsr"
)

// SendChecker checks every message at the moment a replica sends it,
// against what the simulator knows and the replica cannot fake: its disk,
// the acknowledgements it sent, and the ops the cluster committed. It runs
// in every run.
//
//   - Any durability. A DoViewChange votes with a log that, as of its log
//     view, reaches every op the replica acknowledged in that log view and
//     holds every op committed in an earlier view.
//   - Persisted durability. A PrepareOk for an op not yet committed (above
//     the Commit it carries) leaves only once the replica's durable
//     superblock records the view it acks in as view and log view, and its
//     durable journal holds that op's prepare inside the window of its
//     durable checkpoint (a restart finds it). A DoViewChange leaves only
//     once the durable superblock records its view and its log view (a
//     replica never votes from a log view its durable state does not
//     hold), and the durable journal holds every header of its log that
//     the vote relies on, from the durable checkpoint up to the last op
//     committed before its log view or acknowledged in it.
//   - Committed ops never change. The log a primary starts a view with
//     (StartView) or sends for repair (Headers) holds every op committed in
//     an earlier view, with its committed checksum, and ends at or after
//     the last of them; a reply names the client request its op committed.
//   - The view change picks the right log. A new primary's log reaches no
//     further than the longest vote of the highest log view it collected
//     (its own included) and agrees with every such vote on the ops both
//     hold.
//   - Recovery ends only with the word of the primary of the latest view
//     heard of (normal in that view), or of every other replica, or, into
//     a view change, with one fewer than a view-change quorum of answers
//     whose best log is of a log view later than every view the replica
//     ever acknowledged an op in; and with a log reaching as far as the
//     answer it relies on (the primary's, or else the best one).
//
// "Durable" is what the disk holds after a sync, at the place each write
// was meant to go: the simulator's shadow layer on a disk that misdirects
// writes, so that an injected fault is never mistaken for a protocol bug.
type SendChecker struct {
	cluster *Cluster
	// ackedMax[i][view] is the highest op replica i acknowledged in view.
	ackedMax []map[uint64]uint64
	// prepareSize remembers the size of each prepare sent, by checksum, to
	// read back only the sectors a prepare takes.
	prepareSize map[vsr.Uint128]uint32
	superblocks []superblockCache
	// votes[p] holds the DoViewChanges delivered to replica p while it
	// collects them as the primary of votesView[p], by sender.
	votes     []map[int]vote
	votesView []uint64
	// own[p] is p's own vote while it collects (its own log, which never
	// crosses the network), as of the latest vote delivered to it.
	own       []vote
	startView []uint64 // per replica, the last view it started (sent StartView for)
	// recovery[i] follows replica i's recovery round.
	recovery  []recoveryRound
	buf       []byte
	violation error
	// Checked counts the messages checked, by kind.
	PrepareOks    uint64
	DoViewChanges uint64
	StartViews    uint64
}

// vote is a DoViewChange as the new primary received it.
type vote struct {
	logView, op uint64
	first       uint64        // op of headers[0]
	checksums   []vsr.Uint128 // the chain of headers, oldest first
}

// recoveryRound is what a recovering replica heard in its latest round.
type recoveryRound struct {
	nonce     uint64
	responses map[int]recoveryAnswer
}

type recoveryAnswer struct {
	view, logView, op uint64
	viewChange        bool
	// restart marks an answer of vsr's restart protocol (a recovering or
	// restarting peer of a replicated group, vsr/restart.go): it names a
	// checkpoint, not a log to recover with.
	restart bool
}

type superblockCache struct {
	sector [vsr.SuperblockCopies]*byte
	copy   [vsr.SuperblockCopies]vsr.SuperblockCopy
	ok     [vsr.SuperblockCopies]bool
}

func newSendChecker(c *Cluster) *SendChecker {
	k := &SendChecker{
		cluster:     c,
		ackedMax:    make([]map[uint64]uint64, c.params.ReplicaCount),
		prepareSize: make(map[vsr.Uint128]uint32),
		superblocks: make([]superblockCache, c.params.ReplicaCount),
		votes:       make([]map[int]vote, c.params.ReplicaCount),
		votesView:   make([]uint64, c.params.ReplicaCount),
		own:         make([]vote, c.params.ReplicaCount),
		startView:   make([]uint64, c.params.ReplicaCount),
		recovery:    make([]recoveryRound, c.params.ReplicaCount),
	}
	for i := range k.ackedMax {
		k.ackedMax[i] = make(map[uint64]uint64)
	}
	return k
}

// OnCrash forgets what replica i had collected in memory.
func (k *SendChecker) OnCrash(i int) {
	k.votes[i] = nil
	k.recovery[i] = recoveryRound{}
}

// OnDeliver notes a message about to be handed to replica to (r): the
// votes a new primary collects and the answers a recovering replica
// collects, mirroring what the replica keeps, so that what it then does
// can be judged against what it knew.
func (k *SendChecker) OnDeliver(to int, r *vsr.Replica, m *vsr.Message) {
	if k.violation != nil || r.Err() != nil {
		return
	}
	n := uint64(k.cluster.params.ReplicaCount)
	switch m.Command {
	case vsr.CommandDoViewChange:
		st := r.Status()
		if st == vsr.StatusRecovering || st == vsr.StatusOpening || m.View%n != uint64(to) || r.View() > m.View ||
			(r.View() == m.View && st == vsr.StatusNormal) {
			return
		}
		v, ok := decodeVote(m)
		if !ok {
			return
		}
		if k.votes[to] == nil || k.votesView[to] != m.View {
			k.votes[to], k.votesView[to] = make(map[int]vote), m.View
		}
		k.votes[to][int(m.Replica)] = v
		k.own[to] = ownVote(r)
	case vsr.CommandRecoveryResponse:
		rr := &k.recovery[to]
		if r.Status() != vsr.StatusRecovering || rr.nonce == 0 || m.Context.Lo != rr.nonce {
			return
		}
		rr.forgetDropped(func(peer int) bool { return r.RecoveryAnswered(peer) })
		if old, ok := rr.responses[int(m.Replica)]; !ok || old.view <= m.View {
			rr.responses[int(m.Replica)] = recoveryAnswer{view: m.View, logView: m.LogView, op: m.Op, viewChange: m.Context.Hi != 0, restart: m.Context.Hi > 1}
		}
	}
}

// forgetDropped forgets the answers (restart answers aside) that the
// recovering replica no longer holds (held reports those it does): vsr
// drops a round's answers when the log they lead to lies beyond what its
// checkpoint can reach, fetches a checkpoint, and then ends its recovery
// on the answers it collects afresh. Judged against a dropped answer (a
// longer log of the same log view), a legitimate recovery would fail
// (seed 27382).
func (rr *recoveryRound) forgetDropped(held func(peer int) bool) {
	for peer, a := range rr.responses {
		if !a.restart && !held(peer) {
			delete(rr.responses, peer)
		}
	}
}

// ownVote is the vote replica r would send now.
func ownVote(r *vsr.Replica) vote {
	chain := r.LogChain()
	v := vote{logView: r.LogView(), op: r.OpNumber(), checksums: make([]vsr.Uint128, len(chain))}
	if len(chain) > 0 {
		v.first = chain[0].Op
	}
	for j := range chain {
		v.checksums[j] = chain[j].Checksum
	}
	return v
}

func decodeVote(m *vsr.Message) (vote, bool) {
	n := int(m.Context.Lo)
	if n == 0 || n*vsr.HeaderSize > len(m.Body) {
		return vote{}, false
	}
	v := vote{logView: m.LogView, op: m.Op, checksums: make([]vsr.Uint128, n)}
	for j := 0; j < n; j++ {
		var h vsr.Header
		if h.Decode(m.Body[j*vsr.HeaderSize:]) != nil {
			return vote{}, false
		}
		if j == 0 {
			v.first = h.Op
		}
		v.checksums[j] = h.Checksum
	}
	return v, true
}

// OnRecovered checks, as replica i leaves the recovering status, VSR's
// rule for ending recovery: the answer of the primary of the latest view
// heard of, in normal status in that view, or (vsr's extension) answers
// from every other replica.
func (k *SendChecker) OnRecovered(i int) {
	rr := &k.recovery[i]
	if k.violation != nil || rr.nonce == 0 {
		return
	}
	n := k.cluster.params.ReplicaCount
	var latest uint64
	for _, a := range rr.responses {
		latest = max(latest, a.view)
	}
	primary, ok := rr.responses[int(latest%uint64(n))]
	fromPrimary := ok && primary.view == latest && !primary.viewChange
	if !k.checkRecoveredLog(i, rr, fromPrimary, primary) {
		return
	}
	if fromPrimary || len(rr.responses) >= n-1 {
		*rr = recoveryRound{}
		return
	}
	// Into a view change, with the log of an answer of a later log view
	// than any the replica acked in: every op committed with its ack is in
	// that log.
	if r := k.cluster.replicas[i]; r != nil && r.Status() == vsr.StatusViewChange &&
		len(rr.responses) >= vsr.ViewChangeQuorum(n)-1 {
		answered, ackedLater := false, false
		for _, a := range rr.responses {
			answered = answered || a.logView == r.LogView()
		}
		for view, op := range k.ackedMax[i] {
			ackedLater = ackedLater || (op > 0 && view >= r.LogView())
		}
		if answered && !ackedLater {
			*rr = recoveryRound{}
			return
		}
	}
	k.fail("replica %d ended its recovery without the word of replica %d, the primary of view %d (%d of %d peers answered)",
		i, latest%uint64(n), latest, len(rr.responses), n-1)
}

// checkRecoveredLog checks the log replica i ended its recovery with
// against the answer that round relied on: the log of the primary of the
// latest view, when it answered normal in that view (VSR's recovery
// adopts it), or else the best log answered (the highest log view, the
// longest in it), as a view change would pick. The recovered log reaches
// at least as far: a shorter one may lack ops committed with this
// replica's lost acknowledgement, that it then votes without. It reports
// whether the log passed.
func (k *SendChecker) checkRecoveredLog(i int, rr *recoveryRound, fromPrimary bool, primary recoveryAnswer) bool {
	r := k.cluster.replicas[i]
	if r == nil || len(rr.responses) == 0 {
		return true
	}
	relied, who := primary, "the primary of the latest view"
	if !fromPrimary {
		who = "the best log answered"
		first := true
		for _, a := range rr.responses {
			if !a.restart && (first || a.logView > relied.logView || (a.logView == relied.logView && a.op > relied.op)) {
				relied, first = a, false
			}
		}
		if first {
			return true // only restart answers: the group restarted from a checkpoint
		}
	}
	if op := r.OpNumber(); op < relied.op {
		k.fail("replica %d ended its recovery (view %d) with a log reaching op %d, short of op %d in the answer of %s (view %d, log view %d)",
			i, r.View(), op, relied.op, who, relied.view, relied.logView)
		return false
	}
	return true
}

// checkStartView checks the log a new primary starts view m.View with
// against the votes it collected, its own included: it reaches no further
// than the longest vote of the highest log view among them, and agrees,
// on every op both hold, with every vote of that log view (the logs of
// one log view are prefixes of that view's log: the new log is the
// longest of them, perhaps truncated, never another).
func (k *SendChecker) checkStartView(i int, m *vsr.Message) {
	if m.View <= k.startView[i] {
		return // a copy of the broadcast, or an answer to RequestStartView
	}
	k.startView[i] = m.View
	if k.votes[i] == nil || k.votesView[i] != m.View || len(m.Body) < vsr.HeaderSize {
		return
	}
	const self = -1
	votes := map[int]vote{self: k.own[i]}
	for sender, v := range k.votes[i] {
		votes[sender] = v
	}
	var top, topOp uint64
	for _, v := range votes {
		top = max(top, v.logView)
	}
	for _, v := range votes {
		if v.logView == top {
			topOp = max(topOp, v.op)
		}
	}
	if m.Op > topOp {
		k.fail("replica %d started view %d with a log reaching op %d, beyond every vote of the highest log view %d (the longest reaches op %d)",
			i, m.View, m.Op, top, topOp)
		return
	}
	var first vsr.Header
	if first.Decode(m.Body) != nil {
		return
	}
	count := uint64(len(m.Body) / vsr.HeaderSize)
	senders := make([]int, 0, len(votes))
	for sender := range votes {
		senders = append(senders, sender)
	}
	sortInts(senders) // the first disagreement reported is the same every run
	for _, sender := range senders {
		v := votes[sender]
		if v.logView != top {
			continue
		}
		for j, sum := range v.checksums {
			op := v.first + uint64(j)
			if op < first.Op || op >= first.Op+count || op > m.Op {
				continue
			}
			var h vsr.Header
			if h.Decode(m.Body[(op-first.Op)*vsr.HeaderSize:]) != nil {
				return
			}
			if h.Checksum != sum {
				who := fmt.Sprintf("replica %d", sender)
				if sender == self {
					who = "its own log"
				}
				k.fail("replica %d started view %d with a log holding op %d with checksum %016x%016x, but the vote of %s from the highest log view %d holds op %d with checksum %016x%016x",
					i, m.View, op, h.Checksum.Hi, h.Checksum.Lo, who, top, op, sum.Hi, sum.Lo)
				return
			}
		}
	}
}

// Check returns the first violation seen, or nil.
func (k *SendChecker) Check() error { return k.violation }

func (k *SendChecker) fail(format string, a ...any) {
	if k.violation == nil {
		k.violation = fmt.Errorf(format, a...)
	}
}

// OnSend checks message m that replica i sends to a peer.
func (k *SendChecker) OnSend(i int, m *vsr.Message) {
	if k.violation != nil {
		return
	}
	persisted := k.cluster.params.Durability == DurabilityPersisted
	switch m.Command {
	case vsr.CommandPrepare:
		k.prepareSize[m.Checksum] = m.Size
	case vsr.CommandPrepareOk:
		if m.Op > k.ackedMax[i][m.View] {
			k.ackedMax[i][m.View] = m.Op
		}
		if persisted {
			k.PrepareOks++
			k.checkPrepareOk(i, m)
		}
	case vsr.CommandDoViewChange:
		k.DoViewChanges++
		if k.checkVote(i, m) && persisted {
			k.checkDoViewChange(i, m)
		}
	case vsr.CommandStartView, vsr.CommandHeaders:
		k.StartViews++
		k.checkViewLog(i, m, m.View)
		if m.Command == vsr.CommandStartView && k.violation == nil {
			k.checkStartView(i, m)
		}
	case vsr.CommandRecovery:
		if rr := &k.recovery[i]; rr.nonce != m.Context.Lo {
			*rr = recoveryRound{nonce: m.Context.Lo, responses: make(map[int]recoveryAnswer)}
		}
	}
}

// checkVote checks what any DoViewChange claims, whatever the
// durability: its log, as of its log view, reaches every op the replica
// acknowledged in that log view, and holds every op committed before it
// (VSR's safety rests on both). It reports whether the vote passed.
func (k *SendChecker) checkVote(i int, m *vsr.Message) bool {
	if acked := k.ackedMax[i][m.LogView]; acked > m.Op {
		k.fail("replica %d sent DoViewChange for view %d with log view %d ending at op %d, below op %d it acknowledged in that log view",
			i, m.View, m.LogView, m.Op, acked)
		return false
	}
	n := int(m.Context.Lo)
	if n*vsr.HeaderSize > len(m.Body) {
		return true
	}
	saved := m.Body
	m.Body = m.Body[:n*vsr.HeaderSize]
	k.checkViewLog(i, m, m.LogView)
	m.Body = saved
	return k.violation == nil
}

// OnReply checks a reply replica i sends to a client.
func (k *SendChecker) OnReply(i int, m *vsr.Message) {
	if k.violation != nil || m.Command != vsr.CommandReply {
		return
	}
	d, ok := k.cluster.commits.committed[m.Op]
	if !ok || d.client == 0 {
		return
	}
	if d.client != m.Client.Lo || d.request != m.Request || d.operation != m.Operation {
		k.fail("replica %d replied to client %d request %d with op %d, but op %d committed client %d request %d (operation %d)",
			i, m.Client.Lo, m.Request, m.Op, m.Op, d.client, d.request, d.operation)
	}
}

func (k *SendChecker) checkPrepareOk(i int, m *vsr.Message) {
	if m.Op <= m.Commit {
		return // the replica applied it: committed, held by a quorum
	}
	sb, ok := k.durableSuperblock(i)
	if !ok {
		k.fail("replica %d sent PrepareOk for op %d in view %d with no durable superblock", i, m.Op, m.View)
		return
	}
	if sb.View < m.View || sb.LogView < m.View {
		k.fail("replica %d sent PrepareOk for op %d in view %d before its superblock recorded the view: durable view %d log view %d",
			i, m.Op, m.View, sb.View, sb.LogView)
		return
	}
	if m.Op <= sb.CheckpointOp {
		return
	}
	if m.Op > sb.CheckpointOp+k.cluster.params.JournalSlots {
		k.fail("replica %d sent PrepareOk for op %d, more than a journal (%d slots) past its durable checkpoint %d: the slot holds an op a restart still needs",
			i, m.Op, k.cluster.params.JournalSlots, sb.CheckpointOp)
		return
	}
	if h, what := k.durableHeader(i, m.Op, k.prepareSize[m.Context]); h == nil || h.Checksum != m.Context {
		k.fail("replica %d sent PrepareOk for op %d in view %d before its journal made the prepare durable (durable slot: %s)", i, m.Op, m.View, what)
	}
}

func (k *SendChecker) checkDoViewChange(i int, m *vsr.Message) {
	sb, ok := k.durableSuperblock(i)
	if !ok {
		k.fail("replica %d sent DoViewChange for view %d with no durable superblock", i, m.View)
		return
	}
	if sb.View < m.View {
		k.fail("replica %d sent DoViewChange for view %d before its superblock recorded the view: durable view %d", i, m.View, sb.View)
		return
	}
	if sb.LogView < m.LogView {
		k.fail("replica %d voted in view %d from log view %d, but its durable superblock holds log view %d", i, m.View, m.LogView, sb.LogView)
		return
	}
	// What the vote relies on: every op committed before its log view
	// (which its log view claims) and every op it acknowledged in it. The
	// ops committed in its log view that it never acknowledged it may lack,
	// as a lagging replica does: a quorum holds them durably elsewhere.
	cover := k.ackedMax[i][m.LogView]
	if ok, op := k.cluster.commits.committedBefore(m.LogView); ok {
		cover = max(cover, op)
	}
	if cover > m.Op {
		return // checkVote reported it
	}
	n := int(m.Context.Lo)
	if n*vsr.HeaderSize > len(m.Body) {
		return
	}
	for j := 0; j < n; j++ {
		var h vsr.Header
		if h.Decode(m.Body[j*vsr.HeaderSize:]) != nil {
			k.fail("replica %d sent DoViewChange for view %d with an undecodable header %d", i, m.View, j)
			return
		}
		if h.Op <= sb.CheckpointOp || h.Op > cover {
			continue
		}
		if d, what := k.durableHeader(i, h.Op, h.Size); d == nil || d.Checksum != h.Checksum {
			k.fail("replica %d sent DoViewChange for view %d (log view %d, acknowledged %d, relying on ops up to %d) holding op %d, which its durable journal does not hold (durable slot: %s; durable checkpoint %d)",
				i, m.View, m.LogView, k.ackedMax[i][m.LogView], cover, h.Op, what, sb.CheckpointOp)
			return
		}
	}
}

// checkViewLog checks a log sent as the log of view (a StartView or
// Headers message of a primary, or the log a DoViewChange votes with, as
// of its log view): it holds every op committed in a view before view,
// with its committed checksum, and ends at or after the last of them.
func (k *SendChecker) checkViewLog(i int, m *vsr.Message, view uint64) {
	cc := k.cluster.commits
	if need, op := cc.committedBefore(view); need && op > m.Op {
		k.fail("replica %d sent %s (view %d) with the log of view %d ending at op %d, without op %d committed in an earlier view",
			i, m.Command, m.View, view, m.Op, op)
		return
	}
	for j := 0; (j+1)*vsr.HeaderSize <= len(m.Body); j++ {
		var h vsr.Header
		if h.Decode(m.Body[j*vsr.HeaderSize:]) != nil {
			return
		}
		sum, ok := cc.checksums[h.Op]
		committedIn, known := cc.commitView[h.Op]
		if !ok || !known || committedIn >= view {
			continue
		}
		if sum != h.Checksum {
			k.fail("replica %d sent %s (view %d) with the log of view %d holding op %d with checksum %016x%016x, but op %d was committed in view %d with checksum %016x%016x",
				i, m.Command, m.View, view, h.Op, h.Checksum.Hi, h.Checksum.Lo, h.Op, committedIn, sum.Hi, sum.Lo)
			return
		}
	}
}

// durableSuperblock returns the newest valid superblock copy replica i's
// disk holds durably.
func (k *SendChecker) durableSuperblock(i int) (vsr.SuperblockCopy, bool) {
	s := k.cluster.storages[i]
	cache := &k.superblocks[i]
	var best vsr.SuperblockCopy
	found := false
	for j := 0; j < vsr.SuperblockCopies; j++ {
		sector := s.durableSector(vsr.ZoneSuperblock, uint64(j))
		if sector == nil {
			continue
		}
		if cache.sector[j] != &sector[0] {
			cache.sector[j] = &sector[0]
			cp, err := vsr.DecodeSuperblockCopy(sector)
			cache.copy[j], cache.ok[j] = cp, err == nil
		}
		if cache.ok[j] && (!found || cache.copy[j].Sequence > best.Sequence) {
			best, found = cache.copy[j], true
		}
	}
	return best, found
}

// slotContent says what a durable journal slot holds, for reports.
type slotContent struct {
	kind       string // "prepare", "header", "removal", "" (nothing valid)
	op, seq    uint64
	headerKind journal.HeaderKind
	headerOp   uint64 // op of a valid header record of another op, if any
	prepareOp  uint64 // op of a valid prepare record of another op, if any
}

func (c slotContent) String() string {
	switch c.kind {
	case "prepare":
		return fmt.Sprintf("the prepare of op %d (seq %d)", c.op, c.seq)
	case "header":
		return fmt.Sprintf("a header record of op %d (kind %d, seq %d)", c.op, c.headerKind, c.seq)
	case "removal":
		return fmt.Sprintf("a removal of op %d (seq %d)", c.op, c.seq)
	}
	what := "nothing valid"
	if c.headerOp != 0 {
		what = fmt.Sprintf("a header record of op %d", c.headerOp)
	}
	if c.prepareOp != 0 {
		what += fmt.Sprintf(", a prepare record of op %d", c.prepareOp)
	}
	return what
}

// durableHeader returns the header replica i's durable journal holds at
// op, as a restart would reconcile its slot: the newer of the header
// record and the prepare record, a removal leaving it empty. size is the
// prepare's size if known (0: read the whole slot). The slotContent says
// what the slot holds, for reports.
func (k *SendChecker) durableHeader(i int, op uint64, size uint32) (*vsr.Header, slotContent) {
	p := k.cluster.params
	s := k.cluster.storages[i]
	slot := op % p.JournalSlots
	k.grow(vsr.SectorSize)
	s.readDurable(vsr.ZoneWALHeaders, slot*vsr.SectorSize, k.buf[:vsr.SectorSize])
	hrec, herr := journal.ParseRecord(k.buf[:vsr.SectorSize])
	var header vsr.Header
	headerOK := herr == nil && !hrec.Prepare && hrec.Op == op && hrec.Kind != journal.HeaderRemoved && header.Decode(hrec.Payload) == nil && header.Op == op
	removed := herr == nil && !hrec.Prepare && hrec.Op == op && hrec.Kind == journal.HeaderRemoved

	length := uint64(p.MessageSizeMax)
	if size > 0 {
		length = min(length, (journal.RecordFrameSize+uint64(size)+vsr.SectorSize-1)/vsr.SectorSize*vsr.SectorSize)
	}
	k.grow(int(length))
	s.readDurable(vsr.ZoneWALPrepares, slot*uint64(p.MessageSizeMax), k.buf[:length])
	prec, perr := journal.ParseRecord(k.buf[:length])
	var prepare vsr.Message
	prepareOK := perr == nil && prec.Prepare && prec.Op == op && prepare.Decode(prec.Payload) == nil && prepare.Op == op && prepare.Command == vsr.CommandPrepare

	switch {
	case (headerOK || removed) && (!prepareOK || hrec.Seq > prec.Seq):
		if removed {
			return nil, slotContent{kind: "removal", op: op, seq: hrec.Seq}
		}
		return &header, slotContent{kind: "header", op: op, seq: hrec.Seq, headerKind: hrec.Kind}
	case prepareOK:
		h := prepare.Header
		return &h, slotContent{kind: "prepare", op: op, seq: prec.Seq}
	}
	var c slotContent
	if herr == nil {
		c.headerOp = hrec.Op
	}
	if perr == nil {
		c.prepareOp = prec.Op
	}
	return nil, c
}

func (k *SendChecker) grow(n int) {
	if len(k.buf) < n {
		k.buf = make([]byte, n)
	}
}
