package server

import (
	"fmt"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/storage"
)

// metaJournal adapts storage.MetaJournal to the metadata store: every
// append is synced before the operation is applied and answered.
type metaJournal struct {
	journal *storage.MetaJournal
}

// openMetaJournal opens metadata/journal.wal and replays it into m. A
// corrupt entry in the middle of the journal stops the boot with an error
// naming the file and offset; nothing is deleted.
func openMetaJournal(s *Server, m *metaStore) (*metaJournal, error) {
	dir := filepath.Join(s.cfg.System.Path, "metadata")
	// This runs on shard 0: the journal's IO goes through its engine.
	journal, report, err := storage.OpenMetaJournal(s.shardFS[0], dir,
		storage.MetaJournalOptions{Slots: int(s.cfg.Metadata.JournalSlots)},
		m.restore,
		func(e storage.MetaEntry) error { return m.replay(e.Op, e.Timestamp, e.Operation, e.Body) })
	if err != nil {
		return nil, fmt.Errorf("metadata journal: %w", err)
	}
	for _, invalid := range report.Superblock.Invalid {
		s.log.Warn("metadata superblock copy invalid; the other copy is used", zap.String("copy", invalid))
	}
	if t := report.Truncation; t != nil {
		s.log.Warn("metadata journal: cut a torn last entry",
			zap.String("file", t.File), zap.Int64("position", t.Position),
			zap.Int64("bytes_dropped", t.BytesDropped), zap.Uint64("entries_dropped", t.MessagesDropped),
			zap.String("reason", t.Reason))
	}
	s.log.Info("metadata recovered", zap.Uint64("snapshot_op", report.SnapshotOp),
		zap.Int("replayed", report.Replayed), zap.Uint64("last_op", journal.LastOp()))
	return &metaJournal{journal: journal}, nil
}

// append makes one operation durable.
func (j *metaJournal) append(op, timestamp uint64, operation uint8, body []byte) error {
	return j.journal.Append(storage.MetaEntry{Op: op, Timestamp: timestamp, Operation: operation, Body: body}, true)
}

// needsCheckpoint reports whether the journal's slots are used up.
func (j *metaJournal) needsCheckpoint() bool { return j.journal.NeedsCheckpoint() }

// checkpoint writes the state as of op to snapshot.bin and empties the
// journal.
func (j *metaJournal) checkpoint(op uint64, state []byte) error {
	if op != j.journal.LastOp() {
		return fmt.Errorf("checkpoint at op %d but the journal ends at %d", op, j.journal.LastOp())
	}
	return j.journal.Checkpoint(state)
}

// close closes the journal file.
func (j *metaJournal) close() error { return j.journal.Close() }
