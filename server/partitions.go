package server

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/storage"
)

// partKey names one partition.
type partKey struct {
	stream, topic, partition uint32
}

// topicKey names one topic.
type topicKey struct {
	stream, topic uint32
}

// partitionSet holds every partition's runtime. Its map is guarded by mu;
// each runtime has its own lock for its data.
type partitionSet struct {
	s *Server

	mu    sync.RWMutex
	parts map[partKey]*partitionRuntime
	// groups maps each partition's consensus group id to it (the replica
	// plane routes by it: partition_groups.go).
	// Invariant: groups[p.consensusGroup] == p for every p in parts.
	groups map[uint64]*partitionRuntime
	// balanced is the round-robin counter of each topic's balanced sends.
	balanced map[topicKey]*atomic.Uint32
	// pendingPurge records, during the metadata replay at boot, the op of
	// the latest purge of each partition; reconciliation applies it when
	// the partition's superblock shows it was not carried out.
	pendingPurge map[partKey]uint64
	// deletions records, during the metadata replay at boot, the
	// deletions the journal committed: reconciliation removes only the
	// directories they account for and moves any other unknown one aside.
	deletions replayedDeletions
	// replaying is true while the metadata journal is replayed at boot.
	replaying bool
}

// newPartitionSet returns an empty set.
func newPartitionSet(s *Server) *partitionSet {
	return &partitionSet{
		s:            s,
		parts:        map[partKey]*partitionRuntime{},
		groups:       map[uint64]*partitionRuntime{},
		balanced:     map[topicKey]*atomic.Uint32{},
		pendingPurge: map[partKey]uint64{},
		deletions:    newReplayedDeletions(),
		replaying:    true,
	}
}

// streamDir, topicDir and partitionDir are the data directory layout of
// DESIGN.md decision 8.
func (ps *partitionSet) streamDir(stream uint32) string {
	return path.Join(ps.s.cfg.System.Path, "streams", strconv.FormatUint(uint64(stream), 10))
}

func (ps *partitionSet) topicDir(stream, topic uint32) string {
	return path.Join(ps.streamDir(stream), "topics", strconv.FormatUint(uint64(topic), 10))
}

func (ps *partitionSet) partitionDir(k partKey) string {
	return path.Join(ps.topicDir(k.stream, k.topic), "partitions", strconv.FormatUint(uint64(k.partition), 10))
}

// get returns the runtime of a partition.
func (ps *partitionSet) get(k partKey) (*partitionRuntime, bool) {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	p, ok := ps.parts[k]
	return p, ok
}

// nextBalanced returns the next round-robin index for a topic.
func (ps *partitionSet) nextBalanced(stream, topic uint32) uint32 {
	k := topicKey{stream, topic}
	ps.mu.RLock()
	counter, ok := ps.balanced[k]
	ps.mu.RUnlock()
	if !ok {
		ps.mu.Lock()
		if counter, ok = ps.balanced[k]; !ok {
			counter = &atomic.Uint32{}
			ps.balanced[k] = counter
		}
		ps.mu.Unlock()
	}
	return counter.Add(1) - 1
}

// applyEffect carries out one effect of a committed metadata operation on
// disk. It runs on shard 0 as op is applied (or at the boot's replay), so
// the metadata machine is the one just produced by op.
//
// on is the shard running the caller: shard 0 for the metadata writer.
func (ps *partitionSet) applyEffect(on *shard.Shard, e metadata.Effect, op uint64) error {
	if ps.replaying {
		if e.Kind == metadata.EffectTopicPurged {
			for _, id := range e.PartitionIDs {
				ps.pendingPurge[partKey{e.StreamID, e.TopicID, id}] = op
			}
		}
		return nil
	}
	switch e.Kind {
	case metadata.EffectStreamCreated:
		return ps.s.fs.MkdirAll(path.Join(ps.streamDir(e.StreamID), "topics"))
	case metadata.EffectStreamDeleted:
		return ps.removeDir(ps.streamDir(e.StreamID))
	case metadata.EffectTopicCreated, metadata.EffectPartitionsCreated:
		var errs []error
		for _, id := range e.PartitionIDs {
			if err := ps.create(on, partKey{e.StreamID, e.TopicID, id}); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	case metadata.EffectTopicUpdated:
		return ps.updateFlushThresholds(on, e.StreamID, e.TopicID)
	case metadata.EffectTopicDeleted:
		ps.closeTopic(on, e.StreamID, e.TopicID, e.PartitionIDs)
		return ps.removeDir(ps.topicDir(e.StreamID, e.TopicID))
	case metadata.EffectPartitionsDeleted:
		var errs []error
		for _, id := range e.PartitionIDs {
			k := partKey{e.StreamID, e.TopicID, id}
			ps.closeTopic(on, e.StreamID, e.TopicID, []uint32{id})
			if err := ps.removeDir(ps.partitionDir(k)); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	case metadata.EffectTopicPurged:
		var errs []error
		for _, id := range e.PartitionIDs {
			if p, ok := ps.get(partKey{e.StreamID, e.TopicID, id}); ok {
				if err := p.purge(on, op); err != nil {
					errs = append(errs, err)
				}
			}
		}
		return errors.Join(errs...)
	case metadata.EffectSegmentsDeleted:
		if len(e.PartitionIDs) != 1 {
			return fmt.Errorf("segments deleted effect with %d partitions", len(e.PartitionIDs))
		}
		if p, ok := ps.get(partKey{e.StreamID, e.TopicID, e.PartitionIDs[0]}); ok {
			return p.deleteSegments(on, int(e.SegmentsCount))
		}
		return nil
	case metadata.EffectConsumerGroupDeleted:
		ps.s.dropGroupOffsets(on, e.StreamID, e.TopicID, e.GroupID, e.PartitionIDs)
		return nil
	case metadata.EffectUserDeleted:
		ps.s.endSessionsOfUser(e.UserID)
		return nil
	}
	return fmt.Errorf("unknown metadata effect %d", e.Kind)
}

// updateFlushThresholds hands a topic's flush thresholds to each of its
// partitions (an operation where they changed). It runs on shard 0, a
// metadata effect (the machine is shard 0's).
func (ps *partitionSet) updateFlushThresholds(on *shard.Shard, stream, topic uint32) error {
	_, t, code := ps.s.meta.machine.ResolveTopic(metadata.NumericID(stream), metadata.NumericID(topic))
	if code != metadata.CodeOK {
		return fmt.Errorf("updated topic %d/%d: not in metadata", stream, topic)
	}
	var errs []error
	for _, part := range t.Partitions {
		if p, ok := ps.get(partKey{stream, topic, part.ID}); ok {
			if err := p.setFlushThresholds(on, t.Options.MessagesRequiredToSave, t.Options.SizeOfMessagesRequiredToSaveBytes); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeDir removes a directory tree and syncs its parent.
func (ps *partitionSet) removeDir(dir string) error {
	if err := ps.s.fs.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	if err := ps.s.fs.SyncDir(path.Dir(dir)); err != nil && !errors.Is(err, storage.ErrNotExist) {
		return fmt.Errorf("sync %s: %w", path.Dir(dir), err)
	}
	return nil
}

// closeTopic closes and forgets the runtimes of the given partitions of a
// topic.
func (ps *partitionSet) closeTopic(on *shard.Shard, stream, topic uint32, ids []uint32) {
	ps.mu.Lock()
	var closing []*partitionRuntime
	for _, id := range ids {
		if p, ok := ps.removeLocked(partKey{stream, topic, id}); ok {
			closing = append(closing, p)
		}
	}
	ps.mu.Unlock()
	for _, p := range closing {
		if err := p.close(on, false); err != nil {
			ps.s.log.Warn("closing a deleted partition", zap.String("dir", p.dir), zap.Error(err))
		}
		// Its superblock slot is tombstoned (durably, before the
		// directory goes) and may serve another partition.
		if err := p.releaseSuperblockSlot(on); err != nil {
			ps.s.log.Warn("releasing a deleted partition's superblock slot; the slot stays unused", zap.String("dir", p.dir), zap.Error(err))
		}
	}
}

// create makes a new, empty partition (directory, superblock, first
// segment) and registers its runtime. Any leftover directory of an older
// partition with the same ids is wiped first.
func (ps *partitionSet) create(on *shard.Shard, k partKey) error {
	topic, part, ok := ps.lookup(k)
	if !ok {
		return fmt.Errorf("create partition %v: not in metadata", k)
	}
	dir := ps.partitionDir(k)
	if err := ps.s.fs.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := ps.s.fs.MkdirAll(dir); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	// Both copies, so one damaged file never leaves none.
	sb, err := storage.CreatePartitionSuperblock(ps.s.fs, dir, storage.PartitionSuperblock{Flags: part.CreatedAt})
	if err != nil {
		return fmt.Errorf("partition superblock %s: %w", dir, err)
	}
	p, err := openPartition(ps.s, on, k, part.ConsensusGroup, dir, topic, loadedSuperblock{sb: sb, valid: 2})
	if err != nil {
		return err
	}
	if err := ps.add(p); err != nil {
		return errors.Join(err, p.close(on, false))
	}
	return nil
}

// lookup finds a partition in the metadata machine; the caller is shard 0
// (a metadata effect) or the boot, before anything is served.
func (ps *partitionSet) lookup(k partKey) (*metadata.Topic, metadata.Partition, bool) {
	_, topic, code := ps.s.meta.machine.ResolveTopic(metadata.NumericID(k.stream), metadata.NumericID(k.topic))
	if code != metadata.CodeOK {
		return nil, metadata.Partition{}, false
	}
	i := sort.Search(len(topic.Partitions), func(i int) bool { return topic.Partitions[i].ID >= k.partition })
	if i == len(topic.Partitions) || topic.Partitions[i].ID != k.partition {
		return nil, metadata.Partition{}, false
	}
	return topic, topic.Partitions[i], true
}

// openAll reconciles the disk with the recovered metadata and opens every
// partition: directories of streams, topics and partitions the metadata
// does not have are removed when a replayed deletion accounts for them
// and moved under streams/.orphaned otherwise (metadata damage never
// deletes message data), a directory left by an older partition of the
// same ids is handled the same way, purges recorded in the journal but not
// carried out are carried out, and every log is recovered.
func (ps *partitionSet) openAll() error {
	ps.replaying = false
	ps.s.meta.mu.Lock()
	defer ps.s.meta.mu.Unlock()
	if err := ps.removeStrays(); err != nil {
		return err
	}
	for _, stream := range ps.s.meta.machine.Streams() {
		for _, topic := range stream.Topics() {
			for _, part := range topic.Partitions {
				k := partKey{stream.ID, topic.ID, part.ID}
				if err := ps.reopen(k, topic, part); err != nil {
					return err
				}
			}
		}
	}
	ps.pendingPurge = map[partKey]uint64{}
	ps.deletions = newReplayedDeletions()
	return ps.releaseRetiredSlots()
}

// reopen opens one existing partition at boot.
func (ps *partitionSet) reopen(k partKey, topic *metadata.Topic, part metadata.Partition) error {
	dir := ps.partitionDir(k)
	if err := finishSegmentInstall(ps.s, dir); err != nil {
		return err
	}
	sb, report, err := storage.LoadPartitionSuperblock(ps.s.fs, dir)
	loaded := loadedSuperblock{sb: sb, valid: report.Valid}
	if err != nil {
		// No valid copy: this partition alone is fenced (it serves what
		// verifies, nothing is cut or deleted); the broker starts.
		ps.s.log.Error("partition superblock: no valid copy; the partition is fenced", zap.String("dir", dir), zap.Error(err))
		loaded = loadedSuperblock{sb: storage.PartitionSuperblock{Flags: part.CreatedAt}, err: err}
	} else if !report.Found {
		// Both copies are gone; segments with data mean they were lost,
		// not that the partition was never created.
		hasData, err := storage.HasSegmentData(ps.s.fs, dir)
		if err != nil {
			return err
		}
		if !hasData {
			if err := ps.clearForCreate(k, dir, false, 0, part.CreatedAt); err != nil {
				return err
			}
			return ps.create(nil, k)
		}
		err = fmt.Errorf("%s: %w: no superblock copy, but segments hold data", dir, storage.ErrNoSuperblock)
		ps.s.log.Error("partition superblock: no copy; the partition is fenced", zap.String("dir", dir), zap.Error(err))
		loaded = loadedSuperblock{sb: storage.PartitionSuperblock{Flags: part.CreatedAt}, err: err}
	} else if sb.Flags != part.CreatedAt {
		if err := ps.clearForCreate(k, dir, true, sb.Flags, part.CreatedAt); err != nil {
			return err
		}
		return ps.create(nil, k)
	}
	if len(report.Invalid) > 0 && loaded.err == nil {
		ps.s.log.Warn("partition superblock copy invalid; the other copy is used and the damaged one rewritten", zap.String("dir", dir), zap.Strings("invalid", report.Invalid))
	}
	p, err := openPartition(ps.s, nil, k, part.ConsensusGroup, dir, topic, loaded)
	if err != nil {
		return err
	}
	if purgeOp, ok := ps.pendingPurge[k]; ok && loaded.err != nil {
		// Whether the purge was carried out is unknown: delete nothing.
		ps.s.log.Warn("not carrying out a committed purge on a partition without a valid superblock", zap.String("dir", dir), zap.Uint64("op", purgeOp))
	} else if ok && purgeOp > sb.PurgeGeneration {
		ps.s.log.Warn("carrying out a purge the journal committed before the crash", zap.String("dir", dir), zap.Uint64("op", purgeOp))
		if err := p.purge(nil, purgeOp); err != nil {
			return err
		}
	}
	if err := ps.add(p); err != nil {
		return errors.Join(err, p.close(nil, false))
	}
	return nil
}

// clearForCreate makes room for the partition the metadata has at k when
// its directory does not hold it: a directory without a superblock and
// without files is simply reused; one of an older partition with the same
// ids that a replayed deletion removed is wiped; anything else (a
// partition the metadata does not know of, files without a superblock) is
// moved aside.
func (ps *partitionSet) clearForCreate(k partKey, dir string, found bool, diskCreatedAt, createdAt uint64) error {
	if !found {
		entries, err := ps.s.fs.ReadDir(dir)
		if errors.Is(err, storage.ErrNotExist) || (err == nil && len(entries) == 0) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", dir, err)
		}
		return ps.removeOrMoveAside(partitionOrphan(ps, k), false, "partition directory without a superblock")
	}
	reason := fmt.Sprintf("partition directory created at %d, the metadata's partition at %d", diskCreatedAt, createdAt)
	return ps.removeOrMoveAside(partitionOrphan(ps, k), ps.deletedPartition(k, dir), reason)
}

// removeStrays settles the directories of streams, topics and partitions
// the metadata does not have: removed when a deletion replayed from the
// journal accounts for them (a crash stopped it), moved aside otherwise.
func (ps *partitionSet) removeStrays() error {
	root := path.Join(ps.s.cfg.System.Path, "streams")
	streams, err := ps.numericDirs(root)
	if err != nil {
		return err
	}
	m := ps.s.meta.machine
	for _, sid := range streams {
		stream := m.Stream(metadata.NumericID(sid))
		if stream == nil {
			deleted := false
			if ps.deletions.streams[sid] != 0 {
				if deleted, err = ps.deletedTree(sid, nil); err != nil {
					return err
				}
			}
			if err := ps.removeOrMoveAside(streamOrphan(ps, sid), deleted, "stream not in the metadata"); err != nil {
				return err
			}
			continue
		}
		topics, err := ps.numericDirs(path.Join(ps.streamDir(sid), "topics"))
		if err != nil {
			return err
		}
		for _, tid := range topics {
			_, topic, code := m.ResolveTopic(metadata.NumericID(sid), metadata.NumericID(tid))
			if code != metadata.CodeOK {
				deleted := false
				if ps.deletions.topic(sid, tid) != 0 {
					if deleted, err = ps.deletedTree(sid, []uint32{tid}); err != nil {
						return err
					}
				}
				if err := ps.removeOrMoveAside(topicOrphan(ps, sid, tid), deleted, "topic not in the metadata"); err != nil {
					return err
				}
				continue
			}
			parts, err := ps.numericDirs(path.Join(ps.topicDir(sid, tid), "partitions"))
			if err != nil {
				return err
			}
			for _, pid := range parts {
				k := partKey{sid, tid, pid}
				if _, _, ok := ps.lookup(k); !ok || topic == nil {
					if err := ps.removeOrMoveAside(partitionOrphan(ps, k), ps.deletedPartition(k, ps.partitionDir(k)), "partition not in the metadata"); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// numericDirs lists the subdirectories of dir named by a decimal id.
func (ps *partitionSet) numericDirs(dir string) ([]uint32, error) {
	entries, err := ps.s.fs.ReadDir(dir)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var ids []uint32
	for _, e := range entries {
		if !e.IsDir {
			continue
		}
		id, err := strconv.ParseUint(e.Name, 10, 32)
		if err != nil {
			continue
		}
		ids = append(ids, uint32(id))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// all returns every runtime in key order.
func (ps *partitionSet) all() []*partitionRuntime {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	out := make([]*partitionRuntime, 0, len(ps.parts))
	for _, p := range ps.parts {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].key, out[j].key
		if a.stream != b.stream {
			return a.stream < b.stream
		}
		if a.topic != b.topic {
			return a.topic < b.topic
		}
		return a.partition < b.partition
	})
	return out
}

// closeAll flushes, syncs and closes every partition (graceful shutdown)
// and logs what it flushed: the messages and bytes still unsaved in
// memory (a replicated topic's acknowledged tail) that the close wrote.
func (ps *partitionSet) closeAll() error {
	var errs []error
	var partitions, unsaved, failed int
	var messages, bytes uint64
	for _, p := range ps.all() {
		partitions++
		var m, b uint64
		var err error
		if callErr := runOnOwner(nil, p.owner, func() {
			if p.fenced == nil {
				m, b = p.machine.UnflushedCounts()
			}
			err = p.closeOnShard(true)
		}); callErr != nil {
			err = callErr
		}
		if err != nil {
			failed++
			errs = append(errs, err)
			ps.s.log.Error("partition close failed", zap.String("dir", p.dir), zap.Uint64("unsaved_messages", m), zap.Error(err))
			continue
		}
		if m > 0 {
			unsaved++
			messages += m
			bytes += b
		}
	}
	ps.mu.Lock()
	ps.parts = map[partKey]*partitionRuntime{}
	ps.groups = map[uint64]*partitionRuntime{}
	ps.mu.Unlock()
	ps.s.log.Info("partitions flushed and closed", zap.Int("partitions", partitions), zap.Int("partitions_flushed", unsaved),
		zap.Uint64("messages_flushed", messages), zap.Uint64("bytes_flushed", bytes), zap.Int("failed", failed))
	return errors.Join(errs...)
}
