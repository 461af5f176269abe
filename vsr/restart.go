package vsr

// Restart of a replicated group whose every replica lost its memory.
//
// A replicated group (no prepare WAL) keeps its prepares in memory. When
// every process crashes at once, every journal is gone: on restart each
// replica runs the recovery protocol, and recovery needs the word of a
// replica that still holds a log (normal, or in a view change). None
// does, so without more the group never serves again, although each
// replica's checkpoint (its durable state: segments and offsets for a
// partition) is intact. The durability seed allows this failure to lose
// what was only in the journals; it does not allow the group to stay
// down, to diverge, or to reuse an op (an offset) for another operation.
//
// The restart:
//
//   - A recovering replica answers a Recovery with a "recovering"
//     RecoveryResponse (Context.Hi = recoveryResponseRecovering): it
//     holds nothing above its durable checkpoint. A replica whose log is
//     a restart log (restartState.active, below) answers "restarting".
//   - A recovering replica that holds such answers to its current nonce
//     from every other replica of the group (all n - 1 of them, not a
//     quorum: only if every replica lost its memory since this one did is
//     nobody holding newer state) takes its checkpoint as a restart log
//     (active) and starts a view change to a view above every view it
//     heard of. Its DoViewChange carries the restart mark
//     (doViewChangeRestart) and leaves only once its superblock records
//     the view: a restart vote is a promise that survives the next crash
//     (in memory mode too), so that a replica that voted with its
//     checkpoint and then restarts and recovers a peer's log can never
//     again act in an older view.
//   - A new primary never starts a view from a restart vote while it holds
//     a real one (a replica that recovered a log meanwhile, or never lost
//     it, and was pulled into the view change by its StartViewChange):
//     restart votes count towards the quorum, as replicas that hold
//     nothing uncommitted, but real logs win. From restart votes alone it
//     starts the view only once it holds one from every replica of the
//     group, and only if its own checkpoint is the highest among them
//     (else it passes the view on, so that the primary of a later view is
//     the replica whose state holds the most: a checkpoint is committed,
//     and the others catch up to it by state transfer).
//
// Why this loses only what every memory lost: a restart vote is sent only
// by a replica that lost its memory, after every other replica answered,
// to its current nonce, that it too had lost its memory. So every op a
// replica still holds was copied after those losses, by the ordinary
// protocol, from a replica that held it: a real vote. A view started from
// restart votes alone has one from each replica, each of which (durably)
// refuses older views from then on, so no replica holds a log of an older
// view there. The new view's log starts at the highest checkpoint: every
// op up to it keeps its number and content, and the ops above it are new.
//
// Local checkpoints (LocalCheckpointer, optional, set by the host with
// SetLocalCheckpointer). A host whose durable checkpoints are sparse (a
// partition's descriptor, every 256 ops by default) may keep, outside
// vsr's checkpoint zone, a newer state of its own: a partition's state
// at its last synced flush. On the restart path only, once every other
// replica answered that it lost its memory too (maybeRestart), a replica
// whose host holds one newer than its durable checkpoint first makes it
// its durable checkpoint, as a state transfer from itself (written,
// synced, recorded in the superblock, then restored: takeLocalCheckpoint,
// afterLocalCheckpoint); it answers no Recovery meanwhile. Its restart
// vote then carries that checkpoint, so the rule above (the primary of a
// restart view is the replica whose checkpoint is the highest) picks the
// replica with the highest local checkpoint, and the others catch up to
// it by state transfer. Why this too loses only what every memory lost:
// a local checkpoint is of an op its replica applied, so committed, and
// the host keeps it only while it is a prefix of the history its storage
// holds (written after the state it names is synced, removed before that
// storage is cut below it); all of them, and the durable checkpoints,
// are prefixes of the one committed history, so the highest holds every
// op any of them holds, with its number and content, and only the ops
// above it, which were in memory only, are lost. A local checkpoint that
// does not decode, names another cluster or group, or is no newer than
// the durable checkpoint is ignored. Outside the restart (a crash of
// some replicas only) it is never asked for: the peers' logs hold the
// ops above the durable checkpoint. Without the hook (the kv simulator,
// persisted groups, groups of one) nothing here changes.
//
// Persisted groups never take this path: their journal is on disk, and
// recovery from the durable log exists. A group of one resumes from its
// checkpoint at open (resume).

const (
	// recoveryResponseRecovering marks (in Context.Hi) a RecoveryResponse
	// from a recovering replica of a replicated group: it holds nothing
	// above its checkpoint (CheckpointOp, the op the message names).
	recoveryResponseRecovering = 2
	// recoveryResponseRestarting marks a RecoveryResponse from a replica
	// whose log is a restart log (restartState.active).
	recoveryResponseRestarting = 3
)

// doViewChangeRestart marks (in Context.Hi) a DoViewChange whose log is a
// restart log: a checkpoint, with the memory of everything above it lost.
const doViewChangeRestart = 1

// restartState is what a recovering replica of a replicated group collects
// towards a restart, and whether its log is a restart log.
type restartState struct {
	// nonce is the recovery nonce the answers belong to.
	nonce uint64
	// answers holds the "recovering" and "restarting" RecoveryResponses to
	// nonce, by replica.
	answers [ReplicaCountMax]*Message
	// active is set while the replica's log is a restart log: from the
	// restart decision until it runs normal in a view whose log it took.
	active bool
	// droppedCommits is set by the input that restarted the group from a
	// checkpoint below the replica's commit number, for assertInput (the
	// only input after which the commit number may go down).
	droppedCommits bool
	// localInstalling is set while a local checkpoint (LocalCheckpointer)
	// this replica took towards the restart is being made its durable
	// checkpoint; once it is, the restart goes on (afterLocalCheckpoint).
	localInstalling bool
}

// LocalCheckpointer is an optional hook of a host whose replica's group
// is replicated (in-memory journal) with peers: it holds, durably, a
// checkpoint of a state newer than the replica's durable vsr checkpoint
// (a partition's state at its synced flushed frontier, taken after every
// flush and kept outside the checkpoint zone). The replica asks for it
// only on the restart of a group whose every replica lost its memory
// (maybeRestart), and takes it as its restart log when it is newer than
// its own checkpoint. A host that has none leaves the hook unset, and the
// replica behaves as without it.
type LocalCheckpointer interface {
	// LocalCheckpoint returns the newest local checkpoint, as
	// Replica.LocalCheckpointAt encoded it, or nil. The host returns only
	// bytes it read back and verified after they were synced: a state a
	// power loss may take is never one to restart the group from. The
	// replica keeps no reference to the bytes after the call returns.
	LocalCheckpoint() []byte
}

// SetLocalCheckpointer gives the replica the host's local checkpoints,
// before Open; nil (the default) disables them. Only a replicated group
// with peers uses it (restartable); it is not part of Config, which stays
// plain data.
func (r *Replica) SetLocalCheckpointer(l LocalCheckpointer) { r.local = l }

// LocalCheckpointAt encodes, for the host's LocalCheckpointer, a
// checkpoint of the applied op op whose state machine state (what
// StateMachine.Restore takes back) the host captured right after op was
// applied, as CheckpointAt would write it, without writing anything. It
// returns false when op is not an applied op whose header the log holds
// or the checkpoint would not fit the checkpoint area.
func (r *Replica) LocalCheckpointAt(op uint64, state []byte) ([]byte, bool) {
	if op == 0 || op > r.commitMin || r.stateMissing {
		return nil, false
	}
	h, ok := r.header(op)
	if !ok {
		return nil, false
	}
	data := r.encodeCheckpointState(h, state)
	if uint64(len(data)) > r.cfg.checkpointAreaSize() {
		return nil, false
	}
	return data, true
}

// takeLocalCheckpoint starts making the host's local checkpoint this
// replica's durable checkpoint, when it is newer, and reports whether it
// did: the restart then waits for it (afterLocalCheckpoint). It runs only
// once every other replica answered that it lost its memory too
// (maybeRestart). The local checkpoint is of an op this replica applied,
// so committed: installing it is a state transfer from itself.
func (r *Replica) takeLocalCheckpoint() bool {
	if r.local == nil || !r.restartable() {
		return false
	}
	data := r.local.LocalCheckpoint()
	if data == nil {
		return false
	}
	h, err := checkpointHeaderOf(data)
	if err != nil || h.Cluster != r.cfg.Cluster || h.Group != r.cfg.Group || h.Op <= r.checkpointOp ||
		uint64(len(data)) > r.cfg.checkpointAreaSize() {
		return false
	}
	data = append([]byte(nil), data...)
	r.restart.localInstalling = true
	r.transfer.installing = true
	r.writeCheckpoint(h, data, true)
	return true
}

// afterLocalCheckpoint goes on with the restart once the local checkpoint
// it took is durable and restored (finishTransfer): the answers it holds
// still say that every other replica lost its memory.
func (r *Replica) afterLocalCheckpoint() {
	if !r.restart.localInstalling || r.transfer.installing {
		return
	}
	r.restart.localInstalling = false
	if r.status == StatusRecovering && r.restart.nonce == r.recovery.nonce {
		r.maybeRestart()
	}
}

// restartable reports whether the replica's group may restart from its
// checkpoints: replicated (in-memory journal), more than one replica.
func (r *Replica) restartable() bool { return !r.persisted() && !r.solo() }

// restartAnswer answers the Recovery m of a peer when this replica holds
// nothing above its checkpoint (recovering, or with a restart log), and
// reports whether it did.
func (r *Replica) restartAnswer(m *Message) bool {
	if !r.restartable() {
		return false
	}
	var kind uint64
	switch {
	case r.status == StatusRecovering:
		kind = recoveryResponseRecovering
	case r.restart.active:
		kind = recoveryResponseRestarting
	default:
		return false
	}
	h, ok := r.header(r.checkpointOp)
	if !ok || r.memoryLost || r.stateMissing || r.transfer.installing || r.sb.checkpoint != nil || (kind == recoveryResponseRecovering && r.op != r.checkpointOp) {
		// No checkpoint this replica could restart the group from (it is
		// fetching one): it answers nothing, and no restart counts it.
		return true
	}
	body := make([]byte, HeaderSize)
	h.Encode(body)
	r.send(m.Replica, &Message{Header: Header{
		Command: CommandRecoveryResponse, View: r.view, LogView: r.logView, Op: r.checkpointOp,
		Commit: r.checkpointOp, CheckpointOp: r.checkpointOp, Context: Uint128{Lo: m.Context.Lo, Hi: kind},
	}, Body: body})
	return true
}

// onRestartAnswer takes a "recovering" or "restarting" RecoveryResponse,
// and reports whether m was one (the ordinary recovery ignores them).
func (r *Replica) onRestartAnswer(m *Message) bool {
	if m.Context.Hi != recoveryResponseRecovering && m.Context.Hi != recoveryResponseRestarting {
		return false
	}
	if !r.restartable() || r.status != StatusRecovering || m.Context.Lo != r.recovery.nonce || m.Op != m.CheckpointOp {
		return true
	}
	if r.restart.nonce != r.recovery.nonce {
		r.restart = restartState{nonce: r.recovery.nonce}
	}
	r.restart.answers[m.Replica] = m.Clone()
	// An answer of a log held since may now end the recovery with it
	// (othersLostMemory); failing that, the group may restart.
	for _, resp := range r.recovery.responses {
		if resp != nil {
			r.onRecoveryResponse(resp)
			break
		}
	}
	if r.status == StatusRecovering {
		r.maybeRestart()
	}
	return true
}

// othersLostMemory reports, for a replicated group, whether every other
// replica that did not answer with a log answered that it lost its memory
// (recovering or restarting), knowing no view after latest: then no
// replica holds a log of a view after latest (whoever took part in one
// lost it), and the answer of the primary of latest, normal in it, holds
// every op committed that any memory still holds, as for a replica that
// kept its view promise (recoveryFromPrimary). Without this, two replicas
// of three that restart while the third runs normal wait for each other
// forever: each has one answer with a log, one short of a view-change
// quorum of peers.
func (r *Replica) othersLostMemory(latest uint64) bool {
	if !r.restartable() || r.restart.nonce != r.recovery.nonce {
		return false
	}
	for i := uint8(0); i < r.cfg.ReplicaCount; i++ {
		if i == r.cfg.ReplicaIndex || r.recovery.responses[i] != nil {
			continue
		}
		if a := r.restart.answers[i]; a == nil || a.View > latest {
			return false
		}
	}
	return true
}

// maybeRestart restarts the group from this replica's checkpoint once
// every other replica answered that it holds nothing above its own.
func (r *Replica) maybeRestart() {
	if r.memoryLost || r.stateMissing || r.transfer.installing || r.sb.checkpoint != nil || r.op != r.checkpointOp {
		return
	}
	view := r.view + 1
	for i := uint8(0); i < r.cfg.ReplicaCount; i++ {
		if i == r.cfg.ReplicaIndex {
			continue
		}
		a := r.restart.answers[i]
		if a == nil {
			return
		}
		// A restarting peer is in the view change of a.View already: join
		// it; a recovering one may have promised a.View.
		if a.Context.Hi == recoveryResponseRestarting {
			view = max(view, a.View)
		} else {
			view = max(view, a.View+1)
		}
	}
	if r.takeLocalCheckpoint() {
		return
	}
	r.restart = restartState{nonce: r.recovery.nonce, active: true, droppedCommits: r.commitMax > r.commitMin}
	r.recovery.responses = [ReplicaCountMax]*Message{}
	// What the superblock says was committed above the checkpoint was in
	// memory only, and is gone with it: the ops the new view takes at those
	// numbers are others, committed only when the new view says so.
	r.commitMax = r.commitMin
	r.logViewLost = false
	r.startViewChange(view)
}

// restartVoteDurable reports whether a DoViewChange may leave: a restart
// vote waits for the superblock to record its view (and asks for it).
func (r *Replica) restartVoteDurable() bool {
	if !r.restart.active || r.sb.viewDurable(r.view, r.logView) {
		return true
	}
	r.requestSuperblock()
	return false
}

// markRestartVote marks the DoViewChange dvc of a replica with a restart
// log.
func (r *Replica) markRestartVote(dvc *Message) {
	if r.restart.active {
		dvc.Context.Hi = doViewChangeRestart
	}
}

// realVote reports whether the new primary holds a DoViewChange that is
// not a restart vote.
func (r *Replica) realVote() bool {
	for _, d := range r.viewChange.dvcs {
		if d != nil && d.Context.Hi != doViewChangeRestart {
			return true
		}
	}
	return false
}

// restartVoteIgnored reports whether startView leaves the vote d out of
// its choice of log: a restart vote, when a real one is at hand; of the
// restart votes alone, only its own counts (it starts the view only when
// its checkpoint is the highest: restartViewWait).
func (r *Replica) restartVoteIgnored(d *Message) bool {
	if d.Context.Hi != doViewChangeRestart {
		return false
	}
	return r.realVote() || d.Replica != r.cfg.ReplicaIndex
}

// restartViewWait reports whether startView must not start the view yet:
// it holds restart votes only, and not one from every replica; or its own
// checkpoint is not the highest of them, and it passes the view on.
func (r *Replica) restartViewWait() bool {
	if r.realVote() {
		return false
	}
	count := 0
	var top uint64
	for _, d := range r.viewChange.dvcs {
		if d != nil {
			count++
			top = max(top, d.CheckpointOp)
		}
	}
	if count < int(r.cfg.ReplicaCount) {
		return true
	}
	if r.checkpointOp < top {
		r.startViewChange(r.view + 1)
		return true
	}
	return false
}

// endRestart clears the restart log once the replica runs normal in a view
// whose log it took.
func (r *Replica) endRestart() {
	if r.restart.active && r.status == StatusNormal && r.logView == r.view {
		r.restart = restartState{}
	}
}

// Restarting reports whether the replica's log is a restart log (its
// group restarts from its checkpoints after every replica lost its
// memory).
func (r *Replica) Restarting() bool { return r.restart.active }

// restartDroppedCommits reports (once) whether the last input restarted
// the group below the replica's commit number: the ops above the
// checkpoint that it knew committed were lost with every journal, and
// their numbers will be taken by other ops.
func (r *Replica) restartDroppedCommits() bool {
	dropped := r.restart.droppedCommits
	r.restart.droppedCommits = false
	return dropped
}

// abandonRestart ends a restart whose view change timed out, and reports
// whether it did: the replica recovers again, with a new nonce. The
// answers that made it restart may have been stale (a peer answered
// "recovering" and then recovered a log from another, which is up but
// cut off now); a restart vote waits for every replica or a real vote,
// and without this the replica would wait in view changes forever for
// peers that hold a log, and give a recovering peer no answer with a log
// either. A restart of a group whose every replica did lose its memory
// starts again from the fresh answers.
func (r *Replica) abandonRestart() bool {
	if !r.restart.active || r.status != StatusViewChange {
		return false
	}
	r.restart = restartState{}
	r.startRecovery(false)
	return true
}
