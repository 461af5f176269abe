package server

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/vsr"
)

// errFenced reports a partition that stopped serving after a storage
// failure or unrepairable corruption.
var errFenced = errors.New("partition fenced")

// pollBytesMax bounds the records one poll returns, so the reply fits the
// 64 MiB frame limit with room for the header.
const pollBytesMax = wire.MaxFrameSize - 1<<20

// superblockLagBytesMax is how many durable bytes a busy persisted
// partition may append before its superblock records them as durable; an
// idle one records its frontier as soon as its syncs stop.
const superblockLagBytesMax = 1 << 20

// partitionRuntime is one partition: its deterministic state machine, its
// segment log and consumer offsets on disk, and the consensus group that
// numbers and commits its operations, all confined to the partition's
// owning shard.
// Every change of the machine's state is an operation through submit
// (partition_submit.go); reads are served from the applied state.
type partitionRuntime struct {
	s   *Server
	key partKey
	// consensusGroup is the id of the partition's consensus group
	// (metadata.Partition.ConsensusGroup): unique across every partition
	// the metadata ever created, so a partition deleted and created again
	// under the same key is another group (partition_groups.go).
	consensusGroup uint64
	dir            string
	// fs is the owning shard's IO engine: every file of the partition is
	// read and written through it, by tasks on the owner.
	fs storage.FS

	// group makes appended data durable with shared syncs (persisted
	// topics); it and the sync state below are the owning shard's.
	group *groupCommit
	// async is the owner's ring when syncs can be queued on it (nil with
	// the sync engine: syncs then run in place).
	async asyncDrainer
	// The running group-commit sync: its files, how many are still in
	// flight, its first error, when it began and whom to tell.
	syncFiles    []storage.File
	syncPending  int
	syncErr      error
	syncStarted  time.Time
	syncFinish   func(error)
	fileSyncedFn func(error)

	// owner is the shard that owns the partition: every field below is
	// touched only by tasks running on it (checked in invariants builds).
	owner   *shard.Shard
	machine *partition.Machine
	// log is the segment log; it keeps the partition superblock (durable
	// frontier and offset reservation).
	log *storage.Log
	// logOptions are the options log was opened with, without its
	// superblock (a segment transfer reopens it: partition_transfer.go).
	logOptions storage.LogOptions
	// reservation is how many offsets are reserved ahead of need
	// (system.partition.offset_reservation).
	reservation uint64
	// sbSyncing: a superblock copy is being synced on the owner's ring;
	// superblockSyncedFn is superblockSynced, bound once.
	sbSyncing          bool
	superblockSyncedFn func(error)
	// persisted: sends are synced before the reply; offsetsPersisted:
	// explicit offset writes are synced before the reply.
	persisted        bool
	offsetsPersisted bool
	// vsr is the partition's consensus group: submit hands every
	// operation to it, and it numbers them.
	vsr *vsrGroup
	// opBuf holds the encoded send operation; Apply copies what it keeps,
	// so the buffer is reused across sends.
	opBuf []byte
	// fenced is set after a storage failure or when recovery found damage
	// or missing history: the partition refuses sends and serves only the
	// offsets below servedBelow (partition_fence.go).
	fenced error
	// fenceInfo is the published form of the fence (nil when not fenced),
	// read by stats, metrics and the HTTP API from any goroutine.
	fenceInfo atomic.Pointer[PartitionFence]
	// appended, appendedBytes and polled are the topic's metric series.
	appended, appendedBytes, polled prometheus.Counter

	// counters is the partition's record counters as of the owner's last
	// change, published so that readers on any shard or goroutine (topic
	// and stream records, stats) read them without a hop to the owner.
	// Each counter is current on its own; a reader may see one change
	// before another, as with any statistics taken while writes go on.
	counters struct {
		current, messages, sizeBytes, segments atomic.Uint64
	}
}

// publishCounters republishes the counters; it runs on the owning shard
// after every change to them.
func (p *partitionRuntime) publishCounters() {
	current, _ := p.machine.CurrentOffset()
	p.counters.current.Store(current)
	p.counters.messages.Store(p.machine.MessagesCount())
	p.counters.sizeBytes.Store(p.machine.SizeBytes())
	p.counters.segments.Store(uint64(p.log.Stats().Segments))
}

// loadedSuperblock is what was found of a partition's superblock.
type loadedSuperblock struct {
	sb storage.PartitionSuperblock
	// err: no copy is valid (sb then holds only the partition's Flags).
	err error
	// valid counts the valid copies; with one, the other is rewritten.
	valid int
}

// openPartition opens and recovers a partition directory.
// on is the shard running the caller (nil for a goroutine; shard 0 for
// the metadata writer).
func openPartition(s *Server, on *shard.Shard, k partKey, consensusGroup uint64, dir string, topic *metadata.Topic, sb loadedSuperblock) (p *partitionRuntime, err error) {
	owner := s.shardFor(k)
	if callErr := runOnOwner(on, owner, func() { p, err = openPartitionOnShard(s, owner, k, consensusGroup, dir, topic, sb) }); callErr != nil {
		return nil, callErr
	}
	return p, err
}

// runOnOwner runs fn on owner for a caller running on shard on (nil for a
// goroutine) and waits: in place when on is the owner. Besides goroutines
// only the metadata writer (shard 0, carrying out an effect) calls it, the
// one shard task allowed to wait for another shard (LOCKS.md).
func runOnOwner(on, owner *shard.Shard, fn func()) error {
	if on == owner {
		owner.AssertOwner()
		fn()
		return nil
	}
	return owner.Call(func() {
		owner.AssertOwner()
		fn()
	})
}

// openPartitionOnShard opens the partition on its owning shard.
func openPartitionOnShard(s *Server, owner *shard.Shard, k partKey, consensusGroup uint64, dir string, topic *metadata.Topic, sb loadedSuperblock) (*partitionRuntime, error) {
	opts := topic.Options
	fs := s.shardFS[owner.ID()]
	logOptions := storage.LogOptions{SegmentSizeBytes: int64(opts.SegmentSizeBytes), Preallocate: opts.PreallocateSegments}
	withSuperblock := logOptions
	withSuperblock.Superblock, withSuperblock.SuperblockErr = &sb.sb, sb.err
	log, report, err := storage.OpenLog(fs, dir, withSuperblock)
	if err != nil {
		return nil, fmt.Errorf("open partition %s: %w", dir, err)
	}
	p := &partitionRuntime{s: s, key: k, consensusGroup: consensusGroup, dir: dir, fs: fs, log: log, logOptions: logOptions, owner: owner, reservation: s.cfg.System.Partition.OffsetReservation}
	p.superblockSyncedFn = p.superblockSynced
	streamLabel, topicLabel := strconv.FormatUint(uint64(k.stream), 10), strconv.FormatUint(uint64(k.topic), 10)
	p.appended = s.metrics.topicAppended.WithLabelValues(streamLabel, topicLabel)
	p.appendedBytes = s.metrics.topicBytes.WithLabelValues(streamLabel, topicLabel)
	p.polled = s.metrics.topicPolled.WithLabelValues(streamLabel, topicLabel)
	p.group = newGroupCommit(p.startSync)
	p.fileSyncedFn = p.fileSynced
	if d, ok := fs.(asyncDrainer); ok && d.WaitAsync() == nil {
		p.async = d // the shard's own ring: syncs are queued on it
	}
	p.persisted = opts.Durability == metadata.DurabilityPersisted || opts.EnforceFsync || s.cfg.System.Partition.EnforceFsync
	p.offsetsPersisted = opts.ConsumerOffsetDurability == metadata.DurabilityPersisted
	for _, t := range report.Truncations {
		s.metrics.recoveredTornOff.Add(float64(t.BytesDropped))
		s.log.Warn("recovered a torn segment tail: dropped bytes and messages",
			zap.String("file", t.File), zap.Int64("position", t.Position),
			zap.Int64("bytes_dropped", t.BytesDropped), zap.Uint64("messages_dropped", t.MessagesDropped),
			zap.String("reason", t.Reason))
	}
	for _, index := range report.IndexesRebuilt {
		s.log.Warn("rebuilt a segment index from its log", zap.String("file", index))
	}
	for _, file := range report.RetentionFinished {
		s.log.Warn("removed a segment whose deletion the superblock recorded before a crash", zap.String("file", file))
	}
	if c := log.Fenced(); c != nil {
		// Damage below the durable frontier, missing history or no valid
		// superblock: nothing was cut or deleted, and the partition is not
		// served as a healthy (shorter or empty) one (DESIGN.md decision 6).
		p.fenced = fmt.Errorf("%w: %s at byte %d (offset %d): %v", errFenced, c.File, c.Position, c.Offset, c.Err)
	}
	if skip := report.Skip; skip != nil {
		skipped := skip.To - skip.From
		s.metrics.recoveredOffsetsSkipped.Add(float64(skipped))
		s.log.Warn("recovery skipped the offsets reserved before a crash: no offset is given to two messages",
			zap.String("dir", dir), zap.Uint64("log_end", skip.From), zap.Uint64("next_offset", skip.To), zap.Uint64("offsets_skipped", skipped))
	}
	if p.fenced == nil && sb.valid < 2 {
		// One copy is damaged or missing: rewrite it from the state just
		// recovered, so one more damaged file does not leave none.
		if err := log.StoreSuperblock(log.Reserved()); err != nil {
			p.fence(fmt.Errorf("rewrite the partition superblock: %w", err))
		}
	}
	offsets, invalid, err := storage.LoadConsumerOffsets(fs, dir)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("load offsets of %s: %w", dir, err), log.Close())
	}
	for _, bad := range invalid {
		s.log.Warn("ignoring an unreadable consumer offset file", zap.String("file", bad.File), zap.Error(bad.Err))
	}
	stats := log.Stats()
	recovered := partition.RecoveredState{NextOffset: stats.NextOffset, FirstOffset: stats.FirstOffset, MessagesCount: stats.Messages, SizeBytes: uint64(stats.Bytes), PurgeGeneration: sb.sb.PurgeGeneration}
	for _, o := range offsets {
		recovered.Offsets = append(recovered.Offsets, partition.StoredOffset{Key: partition.ConsumerKey{Kind: uint8(o.Kind), ID: o.ID}, Offset: o.Offset})
	}
	cfg := partition.Config{
		StreamID: k.stream, TopicID: k.topic, PartitionID: k.partition,
		MessagesRequiredToSave:            opts.MessagesRequiredToSave,
		SizeOfMessagesRequiredToSaveBytes: opts.SizeOfMessagesRequiredToSaveBytes,
		FlushEveryBatch:                   p.persisted,
	}
	if s.pool != nil {
		// Unflushed batches live in the memory pool until flushed.
		cfg.Buffers = poolBatches{s.pool}
	}
	machine, err := partition.Recover(cfg, recovered)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("recover partition %s: %w", dir, err), log.Close())
	}
	p.machine = machine
	if err := p.openGroup(cfg); err != nil {
		return nil, errors.Join(err, log.Close())
	}
	p.publishCounters()
	p.publishFence() // logs it, with the file, byte and reason
	return p, nil
}

// run executes fn on the shard that owns the partition and waits for it:
// the partition's state and files are only ever touched there. The caller
// is a goroutine, never a shard task.
func (p *partitionRuntime) run(fn func()) error { return runOnOwner(nil, p.owner, fn) }

// fence stops the partition after a storage failure. It runs on the
// owning shard.
func (p *partitionRuntime) fence(err error) {
	if p.fenced == nil {
		p.fenced = fmt.Errorf("%w: %v", errFenced, err)
		p.publishFence()
	}
}

// send appends one validated batch and returns the raw send reply. For a
// persisted topic it returns only after the batch is durable. It runs on
// the connection's goroutine.
func (p *partitionRuntime) send(env partition.Envelope, batch []byte) ([]byte, wire.ErrorCode) {
	w := &opWait{}
	if err := p.run(func() {
		p.opBuf = partition.AppendSendMessages(p.opBuf[:0], env, batch)
		p.submit(partition.OperationSendMessages, p.opBuf, w)
		w.detach()
	}); err != nil {
		return nil, wire.ErrTransientNotAccepted
	}
	result := w.wait()
	if result.status != wire.ErrorCodeOK {
		return nil, result.status
	}
	return result.reply, wire.ErrorCodeOK
}

// flushUpTo carries out an EffectFlush: it writes the unflushed batches up
// to offset upto to the log with vectored writes straight from the memory
// the batches are kept in (no gather copy) and reports them flushed. A
// failed write fences the partition. It runs on the owning shard.
func (p *partitionRuntime) flushUpTo(upto uint64) error {
	if p.vsr != nil && p.vsr.missing {
		// The segments miss history a peer's files will bring: nothing is
		// appended after the hole, the batches stay in the machine until
		// the transfer installs it (partition_transfer.go).
		return nil
	}
	batches := p.machine.Unflushed()
	n := 0
	for n < len(batches) {
		view := wire.BatchView(batches[n])
		if view.BaseOffset()+uint64(view.MessageCount())-1 > upto {
			break
		}
		n++
	}
	if n == 0 {
		return nil
	}
	segments := p.log.Stats().Segments
	p.s.metrics.flushes.Inc()
	if err := p.log.AppendBatches(batches[:n]); err != nil {
		p.fence(err)
		return err
	}
	p.machine.MarkFlushed(upto)
	if sealed := p.log.Stats().Segments - segments; sealed > 0 {
		p.s.metrics.segmentsSealed.Add(float64(sealed))
		p.recordFrontier(true) // sealing synced the segment
	}
	return nil
}

// flushAll writes every unflushed batch to the log: the close of a
// partition for good (shutdown), the one flush no operation asks for.
func (p *partitionRuntime) flushAll() error {
	if p.machine.NextOffset() == 0 {
		return nil
	}
	return p.flushUpTo(p.machine.NextOffset() - 1)
}

// poll appends the poll reply body (§6.6) for a plain consumer to dst. It
// is served through the group's read index (vsrGroup.read): a group of one
// serves it inside the owner's task, as before; a group of several
// replicas once its primary confirmed it still leads its view, or answers
// 57/58 (read, partition_vsr.go).
func (p *partitionRuntime) poll(dst []byte, strategy uint8, value uint64, count uint32, consumer partition.ConsumerKey, autoCommit bool) ([]byte, wire.ErrorCode) {
	w := &opWait{}
	if err := p.run(func() {
		p.vsr.read(w, func(d vsr.Disposition) applied {
			if d != vsr.DispositionNone {
				return applied{reply: dst, status: group.Code(d)}
			}
			out, status := p.pollOnShard(dst, strategy, value, count, consumer, autoCommit)
			return applied{reply: out, status: status}
		})
	}); err != nil {
		return dst, wire.ErrTransientNotAccepted
	}
	result := w.wait()
	return result.reply, result.status
}

// pollOnShard is poll on the owning shard.
func (p *partitionRuntime) pollOnShard(dst []byte, strategy uint8, value uint64, count uint32, consumer partition.ConsumerKey, autoCommit bool) ([]byte, wire.ErrorCode) {
	current, _ := p.machine.CurrentOffset()
	if p.fenced != nil {
		// The last offset served, not what lies past the damage.
		current = min(current, max(p.servedBelow(), 1)-1)
	}
	headerAt := len(dst)
	dst = (&wire.PolledMessagesHeader{PartitionID: p.key.partition, CurrentOffset: current}).AppendTo(dst)
	start, byTimestamp, err := p.machine.StartOffset(strategy, value, count, consumer)
	if err != nil {
		return dst[:headerAt], wire.ErrInvalidCommand
	}
	if byTimestamp {
		offset, found, err := p.log.FindByTimestamp(value)
		if err != nil {
			return dst[:headerAt], fencedPollCode
		}
		if !found {
			if offset, found = p.machine.UnflushedOffsetAtTimestamp(value); !found {
				if p.fenced != nil && count > 0 {
					return dst[:headerAt], fencedPollCode // what follows the prefix is unknown
				}
				return dst, wire.ErrorCodeOK
			}
		}
		start = offset
	}
	if p.fenced != nil {
		// A fenced partition serves its verified prefix and refuses a poll
		// that reaches the damage: an empty reply would read as the end
		// of a healthy partition.
		limit, ok := p.fencedPollLimit(start, count, strategy)
		if !ok {
			return dst[:headerAt], fencedPollCode
		}
		count = limit
	}
	// An offset a recovery skipped holds no message: start at the next
	// stored one.
	first, last, ok := p.machine.PollRange(p.log.NextStoredOffset(start), count)
	if !ok {
		return dst, wire.ErrorCodeOK
	}
	want := uint32(last - first + 1)
	unflushedFrom, hasUnflushed := p.machine.FirstUnflushedOffset()
	if !hasUnflushed {
		unflushedFrom = p.machine.NextOffset()
	}
	var got uint32
	if first < unflushedFrom {
		n := uint32(min(uint64(want), unflushedFrom-first))
		var read uint32
		dst, read, err = p.log.Read(dst, first, n, pollBytesMax)
		if err != nil {
			p.s.log.Error("poll read failed", zap.String("dir", p.dir), zap.Error(err))
			if p.log.Fenced() != nil {
				p.fence(err) // the read found damage: the log is fenced at it
			}
			if read == 0 {
				return dst[:headerAt], fencedPollCode
			}
		}
		got += read
		if read < n {
			want = got
		}
	}
	if got < want {
		from := first + uint64(got)
		for _, b := range p.machine.Unflushed() {
			if got >= want || len(dst)-headerAt > pollBytesMax {
				break
			}
			view := wire.BatchView(b)
			end := view.BaseOffset() + uint64(view.MessageCount())
			if end <= from {
				continue
			}
			var sliced uint32
			dst, sliced, err = wire.SliceBatch(dst, b, from, want-got)
			if err != nil {
				return dst[:headerAt], fencedPollCode
			}
			got += sliced
			from += uint64(sliced)
		}
	}
	_ = (&wire.PolledMessagesHeader{PartitionID: p.key.partition, CurrentOffset: current, Count: got}).Encode(dst[headerAt:])
	p.s.metrics.messagesPolled.Add(float64(got))
	p.polled.Add(float64(got))
	if autoCommit && got > 0 {
		// An ordinary offset operation the poll does not wait for: the
		// reply is what was read, whatever becomes of the commit.
		lastReturned, _ := lastPolledOffset(dst[headerAt:])
		store := partition.StoreConsumerOffset{Consumer: consumer, Offset: lastReturned, Mode: partition.StoreAutoCommit}
		p.submit(partition.OperationStoreConsumerOffset, store.Encode(partition.Envelope{}), nil)
	}
	return dst, wire.ErrorCodeOK
}

// applyOffset applies an explicit offset store or delete and returns its
// result code. It runs on the connection's goroutine.
func (p *partitionRuntime) applyOffset(body []byte, operation uint8) wire.ErrorCode {
	return p.submitFrom(nil, operation, body).status
}

// storedOffset returns a consumer's stored offset, read through the
// group's read index as poll is; status is 57/58 when the partition's
// group could not serve the read here.
func (p *partitionRuntime) storedOffset(consumer partition.ConsumerKey) (stored uint64, current uint64, ok bool, status wire.ErrorCode) {
	w := &opWait{}
	if err := p.run(func() {
		p.vsr.read(w, func(d vsr.Disposition) applied {
			if d != vsr.DispositionNone {
				return applied{status: group.Code(d)}
			}
			current, _ = p.machine.CurrentOffset()
			stored, ok = p.machine.StoredOffset(consumer)
			return applied{}
		})
	}); err != nil {
		return 0, 0, false, wire.ErrTransientNotAccepted
	}
	if result := w.wait(); result.status != wire.ErrorCodeOK {
		return 0, 0, false, result.status
	}
	return stored, current, ok, wire.ErrorCodeOK
}

// stats returns the partition's counters for records and stats, as last
// published by the owner: no hop to the owning shard.
func (p *partitionRuntime) stats() (current uint64, messages uint64, sizeBytes uint64, segments int) {
	c := &p.counters
	return c.current.Load(), c.messages.Load(), c.sizeBytes.Load(), int(c.segments.Load())
}

// purge empties the partition (segments and offsets) for the purge that
// metadata op generation committed; the superblock records it, so a replay
// does not purge again. on is the caller's shard (see runOnOwner).
func (p *partitionRuntime) purge(on *shard.Shard, generation uint64) error {
	body := partition.PurgePartition{Generation: generation}.Encode(partition.Envelope{})
	if result := p.submitFrom(on, partition.OperationPurgePartition, body); result.status != wire.ErrorCodeOK {
		return result.failure("purge", p.dir)
	}
	return nil
}

// deleteSegments removes the n oldest sealed segments: it measures them on
// the owner and submits their deletion in the same task, so nothing comes
// between. on is the caller's shard (see runOnOwner).
func (p *partitionRuntime) deleteSegments(on *shard.Shard, n int) error {
	w := &opWait{}
	if err := runOnOwner(on, p.owner, func() {
		sealed := p.log.OldestSealed(n)
		if sealed.Segments == 0 {
			w.complete(applied{status: wire.ErrorCodeOK})
			return
		}
		del := partition.DeleteSegments{BelowOffset: sealed.EndOffset, Messages: sealed.Messages, SizeBytes: uint64(sealed.Bytes)}
		p.submit(partition.OperationDeleteSegments, del.Encode(partition.Envelope{}), w)
		w.detach()
	}); err != nil {
		return err
	}
	if result := w.wait(); result.status != wire.ErrorCodeOK {
		return result.failure("delete segments of", p.dir)
	}
	return nil
}

// setFlushThresholds submits the topic's flush thresholds (0 = default)
// when they differ from the partition's. on is the caller's shard.
func (p *partitionRuntime) setFlushThresholds(on *shard.Shard, messages uint32, sizeBytes uint64) error {
	w := &opWait{}
	if err := runOnOwner(on, p.owner, func() {
		have := p.machine.Config()
		if orDefault(uint64(messages), partition.DefaultMessagesRequiredToSave) == uint64(have.MessagesRequiredToSave) &&
			orDefault(sizeBytes, partition.DefaultSizeOfMessagesRequiredToSaveBytes) == have.SizeOfMessagesRequiredToSaveBytes {
			w.complete(applied{status: wire.ErrorCodeOK})
			return
		}
		o := partition.SetFlushThresholds{MessagesRequiredToSave: messages, SizeOfMessagesRequiredToSaveBytes: sizeBytes}
		p.submit(partition.OperationSetFlushThresholds, o.Encode(partition.Envelope{}), w)
		w.detach()
	}); err != nil {
		return err
	}
	if result := w.wait(); result.status != wire.ErrorCodeOK {
		return result.failure("flush thresholds of", p.dir)
	}
	return nil
}

// orDefault is v, or def when v is 0 (a threshold left at the default).
func orDefault(v, def uint64) uint64 {
	if v == 0 {
		return def
	}
	return v
}

// close flushes (when asked), syncs and closes the partition; on is the
// caller's shard (see runOnOwner).
func (p *partitionRuntime) close(on *shard.Shard, flush bool) error {
	var result error
	if err := runOnOwner(on, p.owner, func() { result = p.closeOnShard(flush) }); err != nil {
		return err
	}
	return result
}

// releaseSuperblockSlot tombstones the superblock slot of a deleted
// partition, once closed; on is the caller's shard (see runOnOwner).
func (p *partitionRuntime) releaseSuperblockSlot(on *shard.Shard) error {
	if p.vsr == nil || p.vsr.storage == nil {
		return nil
	}
	var result error
	if err := runOnOwner(on, p.owner, func() { result = p.vsr.storage.slot.release() }); err != nil {
		return err
	}
	return result
}

// closeOnShard is close on the owning shard.
func (p *partitionRuntime) closeOnShard(flush bool) error {
	p.drainSyncs()
	var errs []error
	if flush && p.fenced == nil {
		if err := p.flushAll(); err != nil {
			errs = append(errs, err)
		} else if err := p.log.Sync(); err != nil {
			errs = append(errs, err)
		} else {
			// Everything applied is flushed and synced: the flushed state
			// names it, so a restart of every replica keeps it.
			p.vsr.storeFlushedNow()
			if err := p.drainSuperblock(); err != nil {
				errs = append(errs, err)
			} else if err := p.log.StoreSuperblock(p.log.NextOffset()); err != nil {
				// Everything handed out is stored and durable: the
				// frontier is the end of the log and the reservation is
				// released.
				errs = append(errs, err)
			}
		}
	}
	p.machine.ReleaseBuffers()
	p.forgetFenceMetric()
	if err := p.vsr.close(); err != nil {
		errs = append(errs, err)
	}
	if err := p.log.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
