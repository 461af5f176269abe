package server

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/storage"
)

// orphanedDir, under streams/, holds the directories the boot
// reconciliation found on disk but could not account for with the
// recovered metadata: metadata damage (a torn last journal entry, a lost
// snapshot) never deletes message data; the directories are moved here,
// logged, and left to the operator.
const orphanedDir = ".orphaned"

// orphanMovesMax bounds the names tried for one orphan in the same second.
const orphanMovesMax = 1000

// replayedDeletions records, while the metadata journal is replayed at
// boot, the timestamp of the latest committed deletion of each stream,
// topic and partition. A directory the recovered metadata lacks is
// removed at reconciliation only when such a deletion covers it and every
// partition under it was created before that deletion (its superblock
// says when): the crash stopped a committed deletion, which the boot
// finishes. Anything else is moved aside.
type replayedDeletions struct {
	streams    map[uint32]uint64
	topics     map[topicKey]uint64
	partitions map[partKey]uint64
}

func newReplayedDeletions() replayedDeletions {
	return replayedDeletions{streams: map[uint32]uint64{}, topics: map[topicKey]uint64{}, partitions: map[partKey]uint64{}}
}

// record notes a replayed effect committed at timestamp.
func (d replayedDeletions) record(e metadata.Effect, timestamp uint64) {
	switch e.Kind {
	case metadata.EffectStreamDeleted:
		d.streams[e.StreamID] = timestamp
	case metadata.EffectTopicDeleted:
		d.topics[topicKey{e.StreamID, e.TopicID}] = timestamp
	case metadata.EffectPartitionsDeleted:
		for _, id := range e.PartitionIDs {
			d.partitions[partKey{e.StreamID, e.TopicID, id}] = timestamp
		}
	}
}

// topic returns the timestamp of the latest replayed deletion covering a
// topic (its own or its stream's), 0 when none.
func (d replayedDeletions) topic(stream, topic uint32) uint64 {
	return max(d.streams[stream], d.topics[topicKey{stream, topic}])
}

// partition returns the timestamp of the latest replayed deletion
// covering a partition, 0 when none.
func (d replayedDeletions) partition(k partKey) uint64 {
	return max(d.topic(k.stream, k.topic), d.partitions[k])
}

// recordReplayed notes a deletion replayed from the metadata journal at
// boot (see replayedDeletions).
func (ps *partitionSet) recordReplayed(e metadata.Effect, timestamp uint64) {
	if ps.replaying {
		ps.deletions.record(e, timestamp)
	}
}

// deletedPartition reports whether the partition directory dir belongs to
// a partition a replayed deletion removed: the deletion covers k and the
// directory's superblock shows a partition created before it. A directory
// without a readable superblock is never taken for a deleted one.
func (ps *partitionSet) deletedPartition(k partKey, dir string) bool {
	deletedAt := ps.deletions.partition(k)
	if deletedAt == 0 {
		return false
	}
	sb, report, err := storage.LoadPartitionSuperblock(ps.s.fs, dir)
	return err == nil && report.Found && sb.Flags < deletedAt
}

// deletedTree reports whether every partition directory under the topic
// directories of a stream (topics nil: all of them) belongs to a deleted
// partition, so the tree holds no data the metadata lost.
func (ps *partitionSet) deletedTree(stream uint32, topics []uint32) (bool, error) {
	if topics == nil {
		var err error
		if topics, err = ps.numericDirs(path.Join(ps.streamDir(stream), "topics")); err != nil {
			return false, err
		}
	}
	for _, tid := range topics {
		parts, err := ps.numericDirs(path.Join(ps.topicDir(stream, tid), "partitions"))
		if err != nil {
			return false, err
		}
		for _, pid := range parts {
			k := partKey{stream, tid, pid}
			if !ps.deletedPartition(k, ps.partitionDir(k)) {
				return false, nil
			}
		}
	}
	return true, nil
}

// orphan names a stream, topic or partition directory for
// removeOrMoveAside: what is "stream", "topic" or "partition", ids its
// ids joined by dashes ("3-1-0").
type orphan struct {
	dir, what, ids string
}

func streamOrphan(ps *partitionSet, stream uint32) orphan {
	return orphan{ps.streamDir(stream), "stream", strconv.FormatUint(uint64(stream), 10)}
}

func topicOrphan(ps *partitionSet, stream, topic uint32) orphan {
	return orphan{ps.topicDir(stream, topic), "topic", fmt.Sprintf("%d-%d", stream, topic)}
}

func partitionOrphan(ps *partitionSet, k partKey) orphan {
	return orphan{ps.partitionDir(k), "partition", fmt.Sprintf("%d-%d-%d", k.stream, k.topic, k.partition)}
}

// removeOrMoveAside settles a directory the recovered metadata does not
// have (or has for another partition): removed when a replayed deletion
// accounts for everything in it (deleted), moved under streams/.orphaned
// otherwise, and logged either way.
func (ps *partitionSet) removeOrMoveAside(o orphan, deleted bool, reason string) error {
	if deleted {
		ps.s.log.Warn("removing the directory of a deleted "+o.what+" (finishing a deletion the metadata journal committed)",
			zap.String("dir", o.dir))
		return ps.removeDir(o.dir)
	}
	to, err := ps.moveAside(o)
	if err != nil {
		return err
	}
	ps.s.log.Warn("directory of a "+o.what+" unknown to the recovered metadata moved aside, not deleted; "+
		"check it and delete or restore it by hand",
		zap.String("dir", o.dir), zap.String("moved_to", to), zap.String("reason", reason))
	return nil
}

// moveAside renames o.dir to streams/.orphaned/{what}-{ids}.{UTC time} (a
// counter appended when that name is taken) and makes the move durable.
// It returns the new path.
func (ps *partitionSet) moveAside(o orphan) (string, error) {
	root := path.Join(ps.s.cfg.System.Path, "streams")
	orphans := path.Join(root, orphanedDir)
	existed, err := storage.Exists(ps.s.fs, orphans)
	if err != nil {
		return "", fmt.Errorf("stat %s: %w", orphans, err)
	}
	if err := ps.s.fs.MkdirAll(orphans); err != nil {
		return "", fmt.Errorf("create %s: %w", orphans, err)
	}
	if !existed {
		if err := ps.s.fs.SyncDir(root); err != nil {
			return "", fmt.Errorf("sync %s: %w", root, err)
		}
	}
	name := o.what + "-" + o.ids + "." + time.UnixMicro(int64(ps.s.nowMicros())).UTC().Format("20060102T150405Z")
	to := path.Join(orphans, name)
	for i := 1; ; i++ {
		exists, err := storage.Exists(ps.s.fs, to)
		if err != nil {
			return "", fmt.Errorf("stat %s: %w", to, err)
		}
		if !exists {
			break
		}
		if i == orphanMovesMax {
			return "", fmt.Errorf("move %s aside: %d names under %s taken", o.dir, orphanMovesMax, orphans)
		}
		to = path.Join(orphans, name+"."+strconv.Itoa(i))
	}
	if err := ps.s.fs.Rename(o.dir, to); err != nil {
		return "", fmt.Errorf("move %s aside to %s: %w", o.dir, to, err)
	}
	var errs []error
	for _, d := range []string{orphans, path.Dir(o.dir)} {
		if err := ps.s.fs.SyncDir(d); err != nil && !errors.Is(err, storage.ErrNotExist) {
			errs = append(errs, fmt.Errorf("sync %s: %w", d, err))
		}
	}
	return to, errors.Join(errs...)
}
