package server

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/zeebo/xxh3"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/vsr"
)

// The partition's consensus group.
//
// Every partition is one VSR group (server/group's Host); on a single node
// it is a group of one, on the path a cluster takes (DESIGN.md decision
// 3). The host lives on the partition's owning shard and runs there: a
// send's request, prepare, commit, apply and reply all happen inside the
// shard task that carries the batch, with no hand-off of its own. The
// binding below gives the host the partition's files:
//
//   - vsr.Storage is consensus.vsr in the partition directory (format in
//     storage/FORMATS.md) for the two checkpoint areas, and the group's
//     slot in the node's superblock file (consensus/superblocks.sb,
//     sbfile.go) for the superblock copies, whose syncs are coalesced per
//     shard (sbfile_sync.go). A group of one keeps no prepare journal on disk, whatever the
//     topic's durability: the durability seed makes a singleton with
//     persisted sync its segment state before replying (group commit, as
//     without consensus), and it keeps a prepare WAL for multi-replica
//     partitions only: a cluster's partition whose topic has either
//     policy persisted has prepares.wal for the journal zones and runs in
//     vsr's persisted mode (partition_wal.go); its replies wait for the
//     quorum's WAL syncs, not for a segment sync.
//   - The checkpoint is a descriptor (group.Config.CheckpointEveryOps):
//     the machine's counters, offsets and thresholds, taken after a flush
//     (persisted: once the group commit synced the segments), never the
//     log. A replicated topic's synced frontier is the partition
//     superblock's, as without consensus (SyncForCheckpoint).
//   - Restart: vsr restores the descriptor; the machine is then the state
//     recovered from the partition's files, exactly as without consensus
//     (torn tails cut above the superblock's durable frontier, the
//     reservation skipped, offsets from their files), which must not be
//     behind the descriptor (that would be lost history: the partition is
//     fenced). A group of one is its own quorum: every op it committed up
//     to the last flush is in its segments, and what a crash loses of the
//     unflushed tail is what the seed lets a replicated topic lose (and a
//     persisted topic never acknowledged).
//   - Reads that must see every acknowledged write (polls, stored offsets)
//     go through the group's read index (read): a group of one serves
//     them from what it applied, inside the owner's task, with no round
//     trip; a group of several replicas once its primary confirmed that
//     it still led its view after the read arrived (vsr/read_index.go),
//     else the read is denied with 57/58, never served stale.

// vsrFileName is the partition's consensus file.
const vsrFileName = "consensus.vsr"

// vsrFileVersion is the version of consensus.vsr this build reads
// (version 1 held the superblock zone too, version 2 no group id; both
// are refused).
const vsrFileVersion = 3

// vsrFileHeaderSize is the file header's size: one sector, so the zones
// after it stay sector aligned.
const vsrFileHeaderSize = vsr.SectorSize

const vsrFileMagic = "SPVR"

// errVSRFormat reports a consensus.vsr this build cannot read.
var errVSRFormat = errors.New("partition consensus file in another format")

// errVSRForeignGroup reports a consensus.vsr of another consensus group
// than the partition's: it is never adopted (partition_groups.go).
var errVSRForeignGroup = errors.New("partition consensus file of another group")

// Limits of a partition group.
const (
	vsrJournalSlots     = 1024
	vsrPipeline         = 8
	vsrCheckpointEvery  = 256
	vsrCheckpointMax    = 1 << 20
	vsrWALBytesMax      = 256 << 20
	vsrRequestQueueMax  = 64
	vsrPartitionClients = 1
)

// vsrClientLo is the low half of the client id of the partition plane's
// requests. The operations are sessionless, so one id serves every caller
// of a host; its high half is drawn for every host (newVSRClient), so that
// no two hosts' requests, on two nodes or in two lives of one, carry the
// same client id and request number (the host pairs vsr's answers with
// its own requests by client, number and checksum: waiters.go).
const vsrClientLo = 1

// newVSRClient draws the client id of a new host's requests.
func newVSRClient() (vsr.Uint128, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return vsr.Uint128{}, fmt.Errorf("draw the partition group's client id: %w", err)
	}
	return vsr.Uint128{Lo: vsrClientLo, Hi: binary.LittleEndian.Uint64(b[:]) | 1}, nil
}

// vsrGroup binds one partition's group host to its runtime, on the
// owning shard.
type vsrGroup struct {
	p       *partitionRuntime
	host    *group.Host
	storage *vsrFileStorage
	// hostLoop runs the completions of vsr.Storage and of the group
	// commit once the current host call returns (enter, leave, later).
	hostLoop
	// client is the host's client id (newVSRClient); request numbers the
	// partition's requests; waiting holds the callers' completions by the
	// host's ticket of their submissions (the host answers each exactly
	// once, with its ticket).
	client  vsr.Uint128
	request uint64
	waiting map[uint64]completion
	// files is the machine recovered from the partition's files at open,
	// encoded; Reset makes the host's machine that state.
	files []byte
	// opened is set once the host is open (syncs may go to the ring).
	opened bool
	// clustered: the group has peers (replica_plane.go), and the machine
	// a restore or a start gives the host is what storage is cut back to
	// (resetToMachine), not the state recovered from the files. closed is
	// set once the partition closed: ticks and messages still queued for
	// the shard find nothing to drive. truncatePending: storage is to be
	// cut back to the restored machine before the next op is applied.
	clustered, closed, truncatePending bool
	// replicas is the group's replica count.
	replicas uint8
	// tk is the group's place in its shard's tick schedule
	// (replica_ticks.go).
	tk groupTicks
	// missing: the segments miss history of the host's machine (a Reset
	// found it): nothing is flushed or deleted until a segment transfer
	// installs it (partition_transfer.go). repairable: the partition's
	// fence is that state's (or a damage found at open), which the
	// transfer lifts.
	missing, repairable bool
	// memoryLost: the replica opened without a valid superblock and has
	// not yet recovered from its peers (partition_sblost.go);
	// memoryLostFence is the fence that set.
	memoryLost      bool
	memoryLostFence error
	// served is the manifest last served to a peer; staged the receiving
	// side's staging area.
	served *servedManifest
	staged stagedTransfer
	// flushed is the partition's flushed.state (partition_flushed.go).
	flushed flushedFile
}

// vsrReplicaConfig is the replica configuration of a partition group of
// one, whose group id is the partition's consensus group
// (metadata.Partition.ConsensusGroup: never reused, the same on every
// replica; partition_groups.go).
func vsrReplicaConfig(consensusGroup uint64) vsr.Config {
	c := vsr.DefaultConfig(0, 1, 0)
	c.Group = consensusGroup
	c.Durability = vsr.Replicated
	c.JournalSlots = vsrJournalSlots
	c.PipelinePrepareMax = vsrPipeline
	c.RequestQueueMax = vsrRequestQueueMax
	c.ClientsMax = vsrPartitionClients
	c.MessageSizeMax = vsr.MessageSizeMaxLimit
	c.WALBytesMax = vsrWALBytesMax
	c.CheckpointSizeMax = vsrCheckpointMax
	c.ReleaseApplied = true
	// A replica of a cluster whose consensus.vsr lost every superblock
	// copy recovers from its peers, fenced meanwhile (partition_sblost.go).
	c.RecoverLostSuperblock = true
	return c
}

// openGroup puts the partition on its consensus group: it opens
// consensus.vsr and the host, whose machine becomes the partition's. It
// runs on the owning shard, after the files were recovered into
// p.machine.
func (p *partitionRuntime) openGroup(cfg partition.Config) error {
	g := &vsrGroup{p: p, waiting: make(map[uint64]completion), files: p.machine.Checkpoint(), clustered: p.s.cluster.clustered()}
	rc := vsrReplicaConfig(p.consensusGroup)
	checkpointEvery := p.s.cluster.checkpointEvery()
	var wal *walFile
	if p.needsWAL() {
		walBytesMax := uint64(p.s.cfg.Partition.WALBytesMax)
		if walBytesMax == 0 {
			walBytesMax = vsrWALBytesMax
		}
		slotSize, err := walSlotSize(walBytesMax)
		if err != nil {
			return fmt.Errorf("open the prepare WAL of %s: %w", p.dir, err)
		}
		slots := uint64(walJournalSlots)
		if p.s.cluster.JournalSlots > 0 {
			slots = p.s.cluster.JournalSlots
		}
		if wal, err = openWALFile(p.fs, path.Join(p.dir, walFileName), walGeometry{slots: slots, slotSize: slotSize}); err != nil {
			return err
		}
		walConfigure(&rc, wal.geo, walBytesMax)
		// A quarter of the window between descriptor checkpoints: the
		// journal never waits for one in steady state.
		checkpointEvery = min(checkpointEvery, max(wal.geo.slots/4, 1))
	}
	p.s.cluster.configure(&rc)
	g.replicas = rc.ReplicaCount
	if sz := rc.ZoneSize(vsr.ZoneSuperblock); sz != p.s.superblocks.zoneSize {
		return fmt.Errorf("partition %s: a superblock zone of %d bytes, the node's superblock file has slots of %d", p.dir, sz, p.s.superblocks.zoneSize)
	}
	st, err := openVSRFileStorage(g, path.Join(p.dir, vsrFileName), rc.ZoneSize(vsr.ZoneCheckpoint), p.s.superblocks, p.owner, rc.Group)
	if err != nil {
		if wal != nil {
			err = errors.Join(err, wal.close())
		}
		return err
	}
	st.wal = wal
	g.storage = st
	if g.clustered && wal == nil && rc.ReplicaCount > 1 {
		if err := g.loadFlushed(); err != nil {
			return errors.Join(err, st.close())
		}
	}
	openErr := g.openHost(group.Config{Replica: rc, Partition: cfg, CheckpointEveryOps: checkpointEvery, TransferChunkBytes: transferChunkBytes})
	if errors.Is(openErr, vsr.ErrSuperblockLost) && rc.ReplicaCount == 1 {
		openErr = g.openSuperblockLostAlone(group.Config{Replica: rc, Partition: cfg, CheckpointEveryOps: checkpointEvery, TransferChunkBytes: transferChunkBytes}) // partition_sblost.go
	}
	if openErr != nil {
		return errors.Join(openErr, st.close())
	}
	g.fenceMemoryLost()
	g.files = nil
	g.opened = true
	return nil
}

// openHost creates the group host over g.storage and opens it.
func (g *vsrGroup) openHost(hc group.Config) error {
	p := g.p
	if len(g.waiting) != 0 {
		panic(fmt.Sprintf("server: partition %s opens a host with %d submissions waiting on another", p.dir, len(g.waiting)))
	}
	client, err := newVSRClient()
	if err != nil {
		return err
	}
	host, err := group.New(hc, group.Binding{Storage: g.storage, Peers: p.s.groupPeers(), Clock: serverClock{p.s}, Effects: g, Replies: g})
	if err != nil {
		return err
	}
	g.host, g.client = host, client
	if p.vsr == nil {
		p.machine.ReleaseBuffers()
	}
	p.machine = host.Machine()
	p.vsr = g
	var openErr error
	done := false
	g.enter()
	host.Open(func(err error) { openErr, done = err, true })
	g.leave()
	if !done {
		return fmt.Errorf("open the consensus group of %s: did not complete", p.dir)
	}
	if openErr != nil {
		return fmt.Errorf("open the consensus group of %s: %w", p.dir, openErr)
	}
	return nil
}

// submit hands one operation to the host; done (nil: nobody waits) gets
// the reply.
func (g *vsrGroup) submit(operation uint8, body []byte, done completion) {
	g.request++
	ticket := g.host.NextTicket()
	if done != nil {
		// Before the call: the answer may come inside it.
		g.waiting[ticket] = done
	}
	g.enter()
	if got := g.host.Submit(g.client, g.request, operation, body); got != ticket {
		panic(fmt.Sprintf("server: partition %s: the host gave ticket %d, NextTicket said %d", g.p.dir, got, ticket))
	}
	g.leave()
	g.logGroupFailure()
}

// step hands the host a peer's message, on the owning shard.
func (g *vsrGroup) step(m *vsr.Message) {
	if g == nil || g.closed || !g.opened {
		return
	}
	g.enter()
	g.host.Step(m)
	g.leave()
	g.logGroupFailure()
}

// read serves a read that must see every acknowledged write (a poll, a
// stored offset) on the owning shard: serve runs with DispositionNone once
// the group may serve it from applied state (group.Host.Read: a group of
// one at once, inside this call; a group of several replicas once its
// primary confirmed through its read index that it still leads its view,
// from a later input), or with the reason it may not, and w gets its
// result. The read of a group of one takes no round trip, no message and
// no allocation beyond the caller's.
func (g *vsrGroup) read(w *opWait, serve func(vsr.Disposition) applied) {
	if d, now := g.host.ReadNow(); now {
		w.complete(serve(d))
		return
	}
	g.enter()
	g.host.Read(func(d vsr.Disposition) { w.complete(serve(d)) })
	g.leave()
	w.detach()
}

// Deliver implements group.Replies: the answer completes the caller of the
// submission its ticket names. The host answers only its own submissions,
// each once (a reply of vsr for another node's request, or for one it
// answered already, never reaches here); a submission nobody waits for
// (done nil) finds no caller.
func (g *vsrGroup) Deliver(r group.Reply) {
	done, ok := g.waiting[r.Ticket]
	if !ok {
		return
	}
	delete(g.waiting, r.Ticket)
	done.complete(applied{reply: r.Body, status: r.Code, err: r.Err})
}

// CarryOut implements group.Effects with the partition's storage code.
func (g *vsrGroup) CarryOut(_ *partition.Machine, e partition.Effect) (uint64, wire.ErrorCode, error) {
	p := g.p
	if g.missing && e.Kind == partition.EffectSegmentsDeleted {
		// The segments miss history: the transfer brings the range from
		// the machine's (new) first offset.
		return 0, wire.ErrorCodeOK, nil
	}
	if e.Kind == partition.EffectPurged || e.Kind == partition.EffectSegmentsDeleted {
		// The flushed state names segments these take away.
		if err := g.dropFlushed(); err != nil {
			p.fence(err)
			return 0, wire.ErrCannotDeletePartition, err
		}
	}
	status, err := p.carryOut(e)
	if err != nil {
		return 0, status, err
	}
	if e.Kind == partition.EffectFlush && p.persisted && g.storage.wal == nil && !g.missing {
		// A group of one syncs its segments before the reply; with a
		// prepare WAL the op is durable on a quorum before it committed.
		return g.syncTicket(), wire.ErrorCodeOK, nil
	}
	if e.Kind == partition.EffectOffsetStored && p.offsetsPersisted && !e.AutoCommit && !p.persisted {
		// The messages carryOut flushed before the durable offset (its
		// predecessors) are synced before the reply; a persisted topic's
		// are already.
		return g.syncTicket(), wire.ErrorCodeOK, nil
	}
	return 0, wire.ErrorCodeOK, nil
}

// syncTicket starts (or joins) a group-commit sync of everything written
// and returns its ticket; the host hears of it from a later input.
func (g *vsrGroup) syncTicket() uint64 {
	p := g.p
	ticket := p.group.wrote()
	p.group.wait(ticket, func(err error) {
		g.later(func() {
			g.enter()
			if err != nil {
				g.host.EffectsFailed(wire.ErrCannotSyncFile, err)
			} else {
				g.host.EffectsDurable(ticket)
			}
			g.leave()
		})
	})
	return ticket
}

// SyncForCheckpoint implements group.Syncer. A persisted topic's
// descriptor waits for the group commit that syncs its segments (the
// replies wait for the same sync, so it costs nothing more). A replicated
// topic's on a group of one does not force one: its synced frontier is
// the one the partition superblock records (and recovery enforces), as
// without consensus; a forced fdatasync per checkpoint made its sends
// disk-bound (a third slower in the suite's producer-1), and on a group
// of one the descriptor is not what recovery trusts (the files are; Reset).
// A group with peers always syncs: its descriptor is what a restarted
// replica restores and recovers the ops above from its peers, so it must
// never name a flushed message a power loss can take
// (scenarios/bug_broker_checkpoint_before_segment_sync_1495.txt); with a
// prepare WAL the checkpoint it makes durable also lets vsr reuse the
// journal slots below it, and WAL history goes only once what replaces it
// is synced.
func (g *vsrGroup) SyncForCheckpoint() uint64 {
	if g.p.persisted || g.replicas > 1 || g.storage.wal != nil {
		return g.syncTicket()
	}
	return 0
}

// FlushAll implements group.Syncer.
func (g *vsrGroup) FlushAll(*partition.Machine) error { return g.p.flushAll() }

// Reset implements group.Effects: the machine restored from the
// descriptor (or an empty one on a fresh group) becomes the state
// recovered from the partition's files. A descriptor ahead of the files
// means they lost history the group committed and flushed: the partition
// is fenced, never served as a shorter healthy one.
func (g *vsrGroup) Reset(m *partition.Machine) error {
	if g.clustered {
		return g.resetClustered(m)
	}
	if g.files == nil {
		return fmt.Errorf("partition %s: storage reset after open in a group of one", g.p.dir)
	}
	descriptorNext, descriptorPurge := m.NextOffset(), m.PurgeGeneration()
	if err := m.Restore(g.files); err != nil {
		return fmt.Errorf("partition %s: restore the recovered state: %w", g.p.dir, err)
	}
	switch {
	case !g.p.persisted:
		// A replicated topic's descriptor may name flushed messages that
		// were never synced: a power loss takes them, as its durability
		// allows; the partition superblock's synced frontier (checked by
		// the log's recovery) is what must survive.
	case m.PurgeGeneration() < descriptorPurge:
		return g.missingHistory(fmt.Errorf("%s: the checkpoint records purge %d, the files purge %d: missing history (%w)", g.p.dir, descriptorPurge, m.PurgeGeneration(), group.ErrMissingHistory))
	case m.PurgeGeneration() == descriptorPurge && m.NextOffset() < descriptorNext:
		return g.missingHistory(fmt.Errorf("%s: the checkpoint records messages up to offset %d, the segments end at %d: missing history (%w)", g.p.dir, descriptorNext, m.NextOffset(), group.ErrMissingHistory))
	}
	return nil
}

// missingHistory fences the partition at once and hands err (wrapping
// group.ErrMissingHistory) to the host, which then takes no checkpoint
// over the hole and keeps Err set: a group of one has no peer to repair
// it from; a replica of a cluster fetches the history from a peer
// (segment state transfer, partition_transfer.go), which lifts the fence.
func (g *vsrGroup) missingHistory(err error) error {
	p := g.p
	if p.fenced == nil || p.log.Fenced() != nil {
		g.repairable = true
	}
	p.fence(err)
	return err
}

// BeforeApply implements group.Observer: the test hook.
func (g *vsrGroup) BeforeApply(op, timestamp uint64, operation uint8, body []byte) {
	if g.truncatePending {
		g.truncatePending = false
		if err := g.resetToMachine(g.p.machine); err != nil {
			g.p.fence(err)
		}
	}
	g.reserveQueued(operation, body)
	if observe := g.p.s.partitionOpObserver.Load(); observe != nil {
		(*observe)(g.p, op, timestamp, operation, body)
	}
}

// reserveQueued reserves the offsets of a send applied later than it was
// submitted (held in the replica's request queue while the journal window
// waited for a checkpoint): submit checked the reservation against the
// machine as it was then.
func (g *vsrGroup) reserveQueued(operation uint8, body []byte) {
	p := g.p
	if operation != partition.OperationSendMessages || len(body) < partition.EnvelopeSize+wire.BatchHeaderSize {
		return
	}
	if n := uint64(wire.BatchView(body[partition.EnvelopeSize:]).MessageCount()); p.machine.NextOffset()+n > p.log.Reserved() {
		if err := p.reserveOffsets(n); err != nil {
			p.fence(err)
		}
	}
}

// AfterApply implements group.Observer: metrics and counters.
func (g *vsrGroup) AfterApply(_ uint64, operation uint8, body []byte, code wire.ErrorCode) {
	if operation == partition.OperationSendMessages && code == wire.ErrorCodeOK {
		g.p.countSent(body[partition.EnvelopeSize:])
	}
	g.p.publishCounters()
}

// close answers every waiter still pending and closes consensus.vsr.
func (g *vsrGroup) close() error {
	g.closed = true
	g.DiscardStaged()
	for req, done := range g.waiting {
		delete(g.waiting, req)
		done.complete(applied{status: wire.ErrTransientNotCommitted})
	}
	return g.storage.close()
}

// noPeers is the network of a group of one.
type noPeers struct{}

func (noPeers) SendToReplica(uint8, *vsr.Message) {}

// serverClock is the server's clock as vsr.Clock.
type serverClock struct{ s *Server }

func (c serverClock) RealtimeMicros() uint64 { return c.s.nowMicros() }

// vsrFileStorage is vsr.Storage over consensus.vsr (a header sector,
// then the checkpoint zone) and the group's slot of the node's superblock
// file (the superblock zone). IO runs in place on the owning shard (a few
// sectors per checkpoint; a sync on the shard's ring when it has one);
// every completion runs after the submitting call.
//
// With a prepare WAL (partition_wal.go) the journal zones are that file's.
// Sync syncs whichever files were written since the last Sync (a journal
// sync alone, in steady state): the WAL, then consensus.vsr, then the
// superblock file, the last through the shard's coalesced sync
// (sbfile_sync.go), so a superblock sync of many groups costs one
// fdatasync per shard.
type vsrFileStorage struct {
	g        *vsrGroup
	file     storage.File
	name     string
	checkpnt uint64
	wal      *walFile
	// slot is the group's slot of the node's superblock file.
	slot *superblockSlot
	// dirty, walDirty and sbDirty: a write to consensus.vsr, the WAL or
	// the superblock slot completed since the last Sync was submitted.
	dirty, walDirty, sbDirty bool
	// mem, when set, holds the superblock and checkpoint zones in memory
	// instead of the file: a group of one whose file has no valid
	// superblock (partition_sblost.go) leaves it as it was found.
	mem map[vsr.Zone][]byte
}

// openVSRFileStorage opens (or creates) consensus.vsr and checks its
// header: a file of another version is refused, naming file and version.
// It takes the group's superblock slot from store first: a new
// consensus.vsr (the group is being created) gets a cleared slot, durable
// before the file is created, so that an existing consensus.vsr without a
// slot always means a lost superblock (superblockStore.acquire).
func openVSRFileStorage(g *vsrGroup, name string, checkpoint uint64, store *superblockStore, owner *shard.Shard, group uint64) (*vsrFileStorage, error) {
	fs := g.p.fs
	f, err := fs.OpenReadWrite(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	s := &vsrFileStorage{g: g, file: f, name: name, checkpnt: checkpoint}
	size, err := f.Size()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("size of %s: %w", name, err), f.Close())
	}
	if size > 0 {
		// An existing file is checked before its group's slot is
		// looked for: a data directory of another format is refused
		// without a change.
		hdr := make([]byte, vsrFileHeaderSize)
		if _, err := f.ReadAt(hdr, 0); err != nil && !errors.Is(err, io.EOF) {
			return nil, errors.Join(fmt.Errorf("read %s: %w", name, err), f.Close())
		}
		if err := checkVSRFileHeader(hdr, checkpoint, group); err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", name, err), f.Close())
		}
	}
	slot, lost, forgotten, err := store.acquire(owner, group, size == 0, g.replicas > 1)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("the superblock slot of %s: %w", name, err), f.Close())
	}
	s.slot = slot
	switch {
	case forgotten:
		store.log.Warn("a new partition's consensus group had a superblock on this node, whose consensus state is gone "+
			"(its directory was moved aside or lost): the replica recovers from its peers as one that lost its memory",
			zap.String("file", name), zap.String("superblocks", store.name), zap.Uint32("slot", slot.index), zap.Uint64("vsr_group", group))
	case lost:
		store.log.Warn("a partition's consensus state has no superblock slot: its superblock is lost",
			zap.String("file", name), zap.String("superblocks", store.name), zap.Uint32("slot", slot.index))
	}
	if size == 0 {
		hdr := encodeVSRFileHeader(checkpoint, group)
		if _, err := f.WriteAt(hdr, 0); err != nil {
			return nil, errors.Join(fmt.Errorf("write %s: %w", name, err), f.Close())
		}
		if err := f.Sync(); err != nil {
			return nil, errors.Join(fmt.Errorf("sync %s: %w", name, err), f.Close())
		}
		if err := fs.SyncDir(path.Dir(name)); err != nil {
			return nil, errors.Join(fmt.Errorf("sync the directory of %s: %w", name, err), f.Close())
		}
	}
	return s, nil
}

// encodeVSRFileHeader lays out the header sector: magic, version, the
// zone sizes (the superblock zone's 0: it is in the node's superblock
// file), the consensus group id and a checksum of the first 56 bytes.
func encodeVSRFileHeader(checkpoint, group uint64) []byte {
	hdr := make([]byte, vsrFileHeaderSize)
	copy(hdr, vsrFileMagic)
	binary.LittleEndian.PutUint16(hdr[4:], vsrFileVersion)
	binary.LittleEndian.PutUint64(hdr[16:], checkpoint)
	binary.LittleEndian.PutUint64(hdr[24:], group)
	binary.LittleEndian.PutUint64(hdr[56:], xxh3.Hash(hdr[:56]))
	return hdr
}

// checkVSRFileHeader checks a header sector against this build's format
// and the partition's consensus group: a file of another group is never
// adopted (errVSRForeignGroup).
func checkVSRFileHeader(hdr []byte, checkpoint, group uint64) error {
	if err := checkVSRFileFormat(hdr, checkpoint); err != nil {
		return err
	}
	if g := binary.LittleEndian.Uint64(hdr[24:]); g != group {
		return fmt.Errorf("%w: the file is of consensus group %d, the partition's group is %d", errVSRForeignGroup, g, group)
	}
	return nil
}

// checkVSRFileFormat checks a header sector's magic, checksum, version,
// zone sizes and reserved bytes.
func checkVSRFileFormat(hdr []byte, checkpoint uint64) error {
	if string(hdr[:4]) != vsrFileMagic || binary.LittleEndian.Uint64(hdr[56:]) != xxh3.Hash(hdr[:56]) {
		return fmt.Errorf("%w: not a consensus file (bad magic or header checksum)", errVSRFormat)
	}
	if v := binary.LittleEndian.Uint16(hdr[4:]); v != vsrFileVersion {
		return fmt.Errorf("%w: format version %d, this build reads version %d (no migration: recreate the data directory)", errVSRFormat, v, vsrFileVersion)
	}
	if sb, cp := binary.LittleEndian.Uint64(hdr[8:]), binary.LittleEndian.Uint64(hdr[16:]); sb != 0 || cp != checkpoint {
		return fmt.Errorf("%w: zones of %d and %d bytes, this build uses 0 and %d", errVSRFormat, sb, cp, checkpoint)
	}
	for _, b := range hdr[32:56] {
		if b != 0 {
			return fmt.Errorf("%w: reserved header bytes", errVSRFormat)
		}
	}
	return nil
}

// at maps a zone offset to a file offset and the file that holds it.
func (s *vsrFileStorage) at(z vsr.Zone, offset uint64, n int) (storage.File, int64, error) {
	if z == vsr.ZoneWALHeaders || z == vsr.ZoneWALPrepares {
		if s.wal == nil {
			return nil, 0, fmt.Errorf("%s: no prepare WAL for zone %d", s.name, z)
		}
		at, err := s.wal.at(z, offset, n)
		return s.wal.file, at, err
	}
	base, size := uint64(vsrFileHeaderSize), uint64(0)
	if z == vsr.ZoneCheckpoint {
		size = s.checkpnt
	}
	if offset+uint64(n) > size {
		return nil, 0, fmt.Errorf("%s: zone %d offset %d length %d beyond %d", s.name, z, offset, n, size)
	}
	return s.file, int64(base + offset), nil
}

// ZoneSize implements vsr.Storage: the journal zones are the prepare
// WAL's (none for a group of one or a replicated cluster group).
func (s *vsrFileStorage) ZoneSize(z vsr.Zone) uint64 {
	switch z {
	case vsr.ZoneWALHeaders, vsr.ZoneWALPrepares:
		if s.wal == nil {
			return 0
		}
		return s.wal.zoneSize(z)
	case vsr.ZoneSuperblock:
		return s.slot.store.zoneSize
	case vsr.ZoneCheckpoint:
		return s.checkpnt
	}
	return 0
}

// Read implements vsr.Storage; bytes past the end of the file read as
// zeros (a zone never written).
func (s *vsrFileStorage) Read(z vsr.Zone, offset uint64, buf []byte, done func(error)) {
	if zone, ok := s.mem[z]; ok {
		err := s.memZone(z, zone, offset, len(buf))
		if err == nil {
			copy(buf, zone[offset:])
		}
		s.g.later(func() { done(err) })
		return
	}
	if z == vsr.ZoneSuperblock {
		err := s.slot.readZone(offset, buf)
		s.g.later(func() { done(err) })
		return
	}
	f, at, err := s.at(z, offset, len(buf))
	if err == nil {
		var n int
		n, err = f.ReadAt(buf, at)
		if errors.Is(err, io.EOF) {
			clear(buf[n:])
			err = nil
		}
		if err != nil {
			err = fmt.Errorf("read %s: %w", s.fileName(f), err)
		}
	}
	s.g.later(func() { done(err) })
}

// Write implements vsr.Storage.
func (s *vsrFileStorage) Write(z vsr.Zone, offset uint64, data []byte, done func(error)) {
	if zone, ok := s.mem[z]; ok {
		err := s.memZone(z, zone, offset, len(data))
		if err == nil {
			copy(zone[offset:], data)
		}
		s.g.later(func() { done(err) })
		return
	}
	if z == vsr.ZoneSuperblock {
		err := s.slot.writeZone(offset, data)
		if err == nil {
			s.sbDirty = true
		}
		s.g.later(func() { done(err) })
		return
	}
	f, at, err := s.at(z, offset, len(data))
	if err == nil {
		if _, err = f.WriteAt(data, at); err != nil {
			err = fmt.Errorf("write %s: %w", s.fileName(f), err)
		} else if f == s.file {
			s.dirty = true
		} else {
			s.walDirty = true
		}
	}
	s.g.later(func() { done(err) })
}

// memZone checks an access to a zone held in memory.
func (s *vsrFileStorage) memZone(z vsr.Zone, zone []byte, offset uint64, n int) error {
	if offset+uint64(n) > uint64(len(zone)) {
		return fmt.Errorf("%s (in memory): zone %d offset %d length %d beyond %d", s.name, z, offset, n, len(zone))
	}
	return nil
}

// superblockName names where the group's superblock lives, for errors.
func (s *vsrFileStorage) superblockName() string {
	return fmt.Sprintf("%s (superblock: slot %d of %s)", s.name, s.slot.index, s.slot.store.name)
}

func (s *vsrFileStorage) fileName(f storage.File) string {
	if s.wal != nil && f == s.wal.file {
		return s.wal.name
	}
	return s.name
}

// Sync implements vsr.Storage: every file written since the last Sync is
// synced: the WAL first, then consensus.vsr, each on the owner's ring
// when it has one (the shard goes on serving), else in place; then, when
// the superblock slot was written, the node's superblock file, by the
// shard's coalesced sync (one fdatasync for every group of the shard
// that asked meanwhile). Nothing written, nothing synced.
func (s *vsrFileStorage) Sync(done func(error)) {
	var files []storage.File
	var names []string
	if s.wal != nil && s.walDirty {
		files, names = append(files, s.wal.file), append(names, s.wal.name)
	}
	if s.dirty && s.mem == nil {
		files, names = append(files, s.file), append(names, s.name)
	}
	superblock := s.sbDirty && s.mem == nil
	s.dirty, s.walDirty, s.sbDirty = false, false, false
	if !superblock {
		s.syncFiles(files, names, done)
		return
	}
	s.syncFiles(files, names, func(err error) {
		if err != nil {
			done(err)
			return
		}
		s.syncSuperblock(done)
	})
}

// syncSuperblock syncs the node's superblock file for this group: in
// place while the host opens (its open completes inside the call), else
// through the shard's coalesced sync.
func (s *vsrFileStorage) syncSuperblock(done func(error)) {
	g := s.g
	if !g.opened {
		f, err := s.slot.sh.handle()
		if err == nil {
			if err = f.Sync(); err != nil {
				err = fmt.Errorf("sync %s: %w", s.slot.store.name, err)
			}
		}
		g.later(func() { done(err) })
		return
	}
	s.slot.sh.sync.submit(func(err error) {
		g.later(func() {
			g.enter()
			done(err)
			g.leave()
		})
	})
}

// syncFiles syncs files in order, then runs done (after the submitting
// call).
func (s *vsrFileStorage) syncFiles(files []storage.File, names []string, done func(error)) {
	g := s.g
	if len(files) == 0 {
		g.later(func() { done(nil) })
		return
	}
	f, name := files[0], names[0]
	next := func(err error) {
		if err != nil {
			done(wrapSync(name, err))
			return
		}
		s.syncFiles(files[1:], names[1:], done)
	}
	if af, ok := f.(asyncSyncer); ok && g.p.async != nil && g.opened {
		if err := af.SyncAsync(func(err error) {
			g.later(func() {
				g.enter()
				next(err)
				g.leave()
			})
		}); err == nil {
			return
		}
	}
	err := f.Sync()
	if len(files) == 1 || err != nil {
		g.later(func() { next(err) })
		return
	}
	next(nil)
}

func wrapSync(name string, err error) error {
	if err != nil {
		return fmt.Errorf("sync %s: %w", name, err)
	}
	return nil
}

func (s *vsrFileStorage) close() error {
	var walErr error
	if s.wal != nil {
		walErr = s.wal.close()
	}
	if err := s.file.Close(); err != nil {
		return errors.Join(fmt.Errorf("close %s: %w", s.name, err), walErr)
	}
	return walErr
}

// logGroupFailure logs the host's first failure to carry out a committed
// operation, once, and fences the partition.
func (g *vsrGroup) logGroupFailure() {
	if err := g.host.Err(); err != nil && g.p.fenced == nil {
		g.p.s.log.Error("a committed partition operation failed locally; the partition is fenced", zap.String("dir", g.p.dir), zap.Error(err))
		g.p.fence(err)
	}
	g.liftMemoryLostFence() // partition_sblost.go
	// A fenced partition must not lead its group (the host abdicates for
	// its own failures; this covers the binding's).
	g.host.SetFenced(g.p.fenced != nil)
}
