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
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/storage"
)

// errFenced reports a partition that stopped serving after a storage
// failure or unrepairable corruption.
var errFenced = errors.New("partition fenced")

// pollBytesMax bounds the records one poll returns, so the reply fits the
// 64 MiB frame limit with room for the header.
const pollBytesMax = wire.MaxFrameSize - 1<<20

// partitionRuntime is one partition: its deterministic state machine, its
// segment log and consumer offsets on disk, and the local sequencer that
// numbers its operations, all confined to the partition's owning shard.
type partitionRuntime struct {
	s   *Server
	key partKey
	dir string
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
	log     *storage.Log
	sb      storage.PartitionSuperblock
	// persisted: sends are synced before the reply; offsetsPersisted:
	// explicit offset writes are synced before the reply.
	persisted        bool
	offsetsPersisted bool
	// op numbers this partition's operations (local sequencer).
	op uint64
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

// openPartition opens and recovers a partition directory.
// on is the shard running the caller (nil for a goroutine; shard 0 for
// the metadata writer).
func openPartition(s *Server, on *shard.Shard, k partKey, dir string, topic *metadata.Topic, sb storage.PartitionSuperblock) (p *partitionRuntime, err error) {
	owner := s.shardFor(k)
	if callErr := runOnOwner(on, owner, func() { p, err = openPartitionOnShard(s, owner, k, dir, topic, sb) }); callErr != nil {
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
func openPartitionOnShard(s *Server, owner *shard.Shard, k partKey, dir string, topic *metadata.Topic, sb storage.PartitionSuperblock) (*partitionRuntime, error) {
	opts := topic.Options
	fs := s.shardFS[owner.ID()]
	log, report, err := storage.OpenLog(fs, dir, storage.LogOptions{SegmentSizeBytes: int64(opts.SegmentSizeBytes), Preallocate: opts.PreallocateSegments})
	if err != nil {
		return nil, fmt.Errorf("open partition %s: %w", dir, err)
	}
	p := &partitionRuntime{s: s, key: k, dir: dir, fs: fs, log: log, sb: sb, owner: owner}
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
	if c := log.Fenced(); c != nil {
		p.fenced = fmt.Errorf("%w: %s at byte %d (offset %d): %v", errFenced, c.File, c.Position, c.Offset, c.Err)
	}
	if next := log.NextOffset(); sb.NextOffset > next && p.fenced == nil {
		// The superblock recorded a durable frontier the files no longer
		// reach: history is missing. Fence rather than serve a shorter
		// partition as healthy (DESIGN.md decision 6).
		p.fenced = fmt.Errorf("%w: missing history: %s holds offsets up to %d but its superblock recorded %d", errFenced, dir, next, sb.NextOffset)
	}
	offsets, invalid, err := storage.LoadConsumerOffsets(fs, dir)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("load offsets of %s: %w", dir, err), log.Close())
	}
	for _, bad := range invalid {
		s.log.Warn("ignoring an unreadable consumer offset file", zap.String("file", bad.File), zap.Error(bad.Err))
	}
	stats := log.Stats()
	recovered := partition.RecoveredState{NextOffset: stats.NextOffset, MessagesCount: stats.Messages, SizeBytes: uint64(stats.Bytes)}
	for _, o := range offsets {
		recovered.Offsets = append(recovered.Offsets, partition.StoredOffset{Key: partition.ConsumerKey{Kind: uint8(o.Kind), ID: o.ID}, Offset: o.Offset})
	}
	cfg := partition.Config{
		StreamID: k.stream, TopicID: k.topic, PartitionID: k.partition,
		MessagesRequiredToSave:            opts.MessagesRequiredToSave,
		SizeOfMessagesRequiredToSaveBytes: opts.SizeOfMessagesRequiredToSaveBytes,
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
// persisted topic it returns only after the batch is durable.
func (p *partitionRuntime) send(env partition.Envelope, batch []byte) ([]byte, wire.ErrorCode) {
	var reply []byte
	status := wire.ErrorCodeOK
	var done chan error
	if err := p.run(func() {
		var ticket uint64
		reply, status, ticket = p.appendOnShard(env, batch)
		if status == wire.ErrorCodeOK && ticket != 0 {
			// Answered by the group commit, on the shard, once the batch
			// is durable; the caller waits off the shard.
			done = make(chan error, 1)
			p.group.wait(ticket, done)
		}
	}); err != nil {
		return nil, wire.ErrTransientNotAccepted
	}
	if done != nil {
		if err := <-done; err != nil {
			return nil, wire.ErrCannotSyncFile
		}
	}
	return reply, status
}

// appendOnShard applies a send and flushes when due; for a persisted topic
// it returns the group-commit ticket to wait for (0 otherwise).
func (p *partitionRuntime) appendOnShard(env partition.Envelope, batch []byte) ([]byte, wire.ErrorCode, uint64) {
	if p.fenced != nil {
		return nil, fencedSendCode, 0
	}
	p.op++
	p.opBuf = partition.AppendSendMessages(p.opBuf[:0], env, batch)
	reply := p.machine.Apply(p.op, p.s.nowMicros(), partition.OperationSendMessages, p.opBuf)
	if _, ok := partition.SendConfirmationBaseOffset(reply); !ok {
		return nil, wire.ErrInvalidMessagesCount, 0
	}
	messages := float64(wire.BatchView(batch).MessageCount())
	p.s.metrics.messagesSent.Add(messages)
	p.s.metrics.bytesSent.Add(float64(len(batch)))
	p.appended.Add(messages)
	p.appendedBytes.Add(float64(len(batch)))
	if p.persisted || p.machine.FlushDue() {
		if err := p.flushLocked(); err != nil {
			return nil, wire.ErrCannotSaveMessagesToSegment, 0
		}
	}
	p.publishCounters()
	if !p.persisted {
		return reply, wire.ErrorCodeOK, 0
	}
	return reply, wire.ErrorCodeOK, p.group.wrote()
}

// flushLocked writes every unflushed batch to the log with vectored
// writes straight from the memory the batches are kept in (no gather
// copy). It runs on the owning shard.
func (p *partitionRuntime) flushLocked() error {
	batches := p.machine.Unflushed()
	if len(batches) == 0 {
		return nil
	}
	last := batches[len(batches)-1]
	view := wire.BatchView(last)
	upto := view.BaseOffset() + uint64(view.MessageCount()) - 1
	segments := p.log.Stats().Segments
	p.s.metrics.flushes.Inc()
	if err := p.log.AppendBatches(batches); err != nil {
		p.fence(err)
		return err
	}
	p.machine.MarkFlushed(upto)
	if sealed := p.log.Stats().Segments - segments; sealed > 0 {
		p.s.metrics.segmentsSealed.Add(float64(sealed))
	}
	return nil
}

// poll appends the poll reply body (§6.6) for a plain consumer to dst.
func (p *partitionRuntime) poll(dst []byte, strategy uint8, value uint64, count uint32, consumer partition.ConsumerKey, autoCommit bool) (out []byte, status wire.ErrorCode) {
	if err := p.run(func() { out, status = p.pollOnShard(dst, strategy, value, count, consumer, autoCommit) }); err != nil {
		return dst, wire.ErrTransientNotAccepted
	}
	return out, status
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
	first, last, ok := p.machine.PollRange(start, count)
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
		lastReturned := first + uint64(got) - 1
		p.applyOffsetLocked(partition.StoreConsumerOffset{Consumer: consumer, Offset: lastReturned, Mode: partition.StoreAutoCommit}.Encode(partition.Envelope{}), partition.OperationStoreConsumerOffset, false)
	}
	return dst, wire.ErrorCodeOK
}

// applyOffset applies an explicit offset store or delete and returns its
// result code.
func (p *partitionRuntime) applyOffset(body []byte, operation uint8) (status wire.ErrorCode) {
	if err := p.run(func() { status = p.applyOffsetLocked(body, operation, p.offsetsPersisted) }); err != nil {
		return wire.ErrTransientNotAccepted
	}
	return status
}

// applyOffsetLocked applies an offset operation and writes its effects.
func (p *partitionRuntime) applyOffsetLocked(body []byte, operation uint8, durable bool) wire.ErrorCode {
	p.op++
	reply := p.machine.Apply(p.op, p.s.nowMicros(), operation, body)
	for _, e := range p.machine.TakeEffects() {
		var err error
		switch e.Kind {
		case partition.EffectOffsetStored:
			err = storage.StoreConsumerOffset(p.fs, p.dir, storage.OffsetKind(e.Consumer.Kind), e.Consumer.ID, e.Offset, durable)
		case partition.EffectOffsetDeleted:
			err = storage.DeleteConsumerOffset(p.fs, p.dir, storage.OffsetKind(e.Consumer.Kind), e.Consumer.ID)
		}
		if err != nil {
			p.s.log.Error("consumer offset write failed", zap.String("dir", p.dir), zap.Error(err))
			return wire.ErrCannotWriteToFile
		}
	}
	_, code, err := wire.SplitResult(reply)
	if err != nil {
		return wire.ErrInvalidCommand
	}
	return code
}

// storedOffset returns a consumer's stored offset.
func (p *partitionRuntime) storedOffset(consumer partition.ConsumerKey) (stored uint64, current uint64, ok bool) {
	_ = p.run(func() {
		current, _ = p.machine.CurrentOffset()
		stored, ok = p.machine.StoredOffset(consumer)
	})
	return stored, current, ok
}

// stats returns the partition's counters for records and stats, as last
// published by the owner: no hop to the owning shard.
func (p *partitionRuntime) stats() (current uint64, messages uint64, sizeBytes uint64, segments int) {
	c := &p.counters
	return c.current.Load(), c.messages.Load(), c.sizeBytes.Load(), int(c.segments.Load())
}

// purge empties the partition (segments and offsets) and records the purge
// op in its superblock so a replay does not purge again.
func (p *partitionRuntime) purge(on *shard.Shard, op uint64) error {
	var result error
	if err := runOnOwner(on, p.owner, func() { result = p.purgeOnShard(op) }); err != nil {
		return err
	}
	return result
}

// purgeOnShard is purge on the owning shard.
func (p *partitionRuntime) purgeOnShard(op uint64) error {
	p.drainSyncs()
	if err := p.log.Purge(); err != nil {
		p.fence(err)
		return fmt.Errorf("purge %s: %w", p.dir, err)
	}
	if err := storage.PurgeConsumerOffsets(p.fs, p.dir); err != nil {
		return fmt.Errorf("purge offsets of %s: %w", p.dir, err)
	}
	p.machine.Purge()
	p.publishCounters()
	p.clearFence() // the damaged files went with everything else
	p.sb.Sequence++
	p.sb.PurgeGeneration = op
	p.sb.FirstOffset, p.sb.NextOffset = 0, 0
	if err := storage.StorePartitionSuperblock(p.fs, p.dir, p.sb); err != nil {
		return fmt.Errorf("partition superblock %s: %w", p.dir, err)
	}
	return nil
}

// deleteSegments removes the n oldest sealed segments.
func (p *partitionRuntime) deleteSegments(on *shard.Shard, n int) error {
	var result error
	if err := runOnOwner(on, p.owner, func() { result = p.deleteSegmentsOnShard(n) }); err != nil {
		return err
	}
	return result
}

// deleteSegmentsOnShard is deleteSegments on the owning shard.
func (p *partitionRuntime) deleteSegmentsOnShard(n int) error {
	p.drainSyncs()
	if err := p.flushLocked(); err != nil {
		return err
	}
	_, err := p.log.DeleteOldestSealed(n)
	p.publishCounters()
	return err
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

// closeOnShard is close on the owning shard.
func (p *partitionRuntime) closeOnShard(flush bool) error {
	p.drainSyncs()
	var errs []error
	if flush && p.fenced == nil {
		if err := p.flushLocked(); err != nil {
			errs = append(errs, err)
		} else if err := p.log.Sync(); err != nil {
			errs = append(errs, err)
		}
		stats := p.log.Stats()
		p.sb.Sequence++
		p.sb.FirstOffset, p.sb.NextOffset = stats.FirstOffset, stats.NextOffset
		if err := storage.StorePartitionSuperblock(p.fs, p.dir, p.sb); err != nil {
			errs = append(errs, err)
		}
	}
	p.machine.ReleaseBuffers()
	p.forgetFenceMetric()
	if err := p.log.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
