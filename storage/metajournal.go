package storage

import (
	"errors"
	"fmt"
	"path"
)

// Metadata directory files (DESIGN.md decision 8).
const (
	// MetaJournalSlotsDefault is `[metadata] journal_slots`.
	MetaJournalSlotsDefault = 1024
	metaJournalFile         = "journal.wal"
	metaSnapshotFile        = "snapshot.bin"
)

// MetaJournalOptions configures the metadata journal.
type MetaJournalOptions struct {
	// Slots is how many entries the journal holds before a checkpoint is
	// required. 0 = MetaJournalSlotsDefault.
	Slots int
}

// MetaJournalReport says what OpenMetaJournal loaded and repaired; the
// caller logs Truncation and Superblock.Invalid as warnings.
type MetaJournalReport struct {
	Superblock   SuperblockReport
	SnapshotOp   uint64 // op of the snapshot handed to restore (0: none)
	SnapshotUsed bool
	Replayed     int // entries handed to apply
	Skipped      int // entries already covered by the snapshot
	// Truncation is set when a torn or corrupt last entry was cut;
	// MessagesDropped counts the dropped entries (0 or 1).
	Truncation *Truncation
	// SuperblockHealed: only one valid superblock copy was found and the
	// other was rewritten from it.
	SuperblockHealed bool
}

// MetaJournal is the metadata write-ahead journal `metadata/journal.wal`
// with its checkpoint (`snapshot.bin` + `superblock.a/.b`). One goroutine
// (shard 0) owns it.
type MetaJournal struct {
	fs         FS
	dir        string
	slots      int
	file       File
	superblock MetadataSuperblock // the last stored (Sequence 0: none)
	// Invariant: lastOp is the op of the last entry in the file, or the
	// checkpoint op when the file holds none after it.
	lastOp       uint64
	checkpointOp uint64
	previous     uint64 // header checksum of the last entry in the file
	entries      int    // entries in the file
	size         int64
	failed       error
}

// OpenMetaJournal opens (creating when missing) the metadata journal in
// dir (`{system.path}/metadata`) and replays it: the superblock is loaded,
// the snapshot it names is verified and handed to restore (op, state),
// then every journal entry with op > the snapshot op goes to apply, in
// order. A torn or corrupt last entry is truncated and reported; damage
// followed by valid entries returns ErrJournalCorrupt naming the file and
// byte offset, and changes nothing. restore is not called when there is no
// snapshot. Entry bodies handed to apply stay valid after it returns.
func OpenMetaJournal(fsys FS, dir string, opts MetaJournalOptions, restore func(op uint64, state []byte) error, apply func(MetaEntry) error) (*MetaJournal, MetaJournalReport, error) {
	var report MetaJournalReport
	if opts.Slots <= 0 {
		opts.Slots = MetaJournalSlotsDefault
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, report, fmt.Errorf("create %s: %w", dir, err)
	}
	j := &MetaJournal{fs: fsys, dir: dir, slots: opts.Slots}
	record, sbReport, err := loadSuperblock(fsys, dir, metadataKind, func(r superblockRecord) error {
		_, err := metadataSuperblockOf(r)
		return err
	})
	report.Superblock = sbReport
	if err != nil {
		return nil, report, err
	}
	if sbReport.Found {
		if j.superblock, err = metadataSuperblockOf(record); err != nil {
			return nil, report, fmt.Errorf("%s: %w", sbReport.File, err)
		}
		if sbReport.Valid < 2 {
			// One copy is damaged or missing (a directory from before
			// both were written at the first checkpoint): rewrite the
			// valid record into it, so one more damaged file does not
			// leave none.
			healed := j.superblock
			healed.Sequence++
			if err := storeSuperblock(fsys, dir, metadataKind, healed.record()); err != nil {
				return nil, report, fmt.Errorf("rewrite the other metadata superblock copy: %w", err)
			}
			j.superblock = healed
			report.SuperblockHealed = true
		}
	}
	if err := j.loadSnapshot(restore, &report); err != nil {
		return nil, report, err
	}
	if err := j.replay(apply, &report); err != nil {
		return nil, report, err
	}
	return j, report, nil
}

// loadSnapshot verifies the snapshot against the superblock and restores
// it. A snapshot newer than the superblock (a crash between the two
// writes of a checkpoint) is used: the journal still holds what follows.
func (j *MetaJournal) loadSnapshot(restore func(uint64, []byte) error, report *MetaJournalReport) error {
	p := path.Join(j.dir, metaSnapshotFile)
	image, err := readFull(j.fs, p)
	if errors.Is(err, ErrNotExist) {
		if j.superblock.Sequence != 0 {
			return fmt.Errorf("%s for checkpoint op %d: %w", p, j.superblock.CheckpointOp, ErrSnapshotMissing)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	op, state, checksum, err := DecodeSnapshot(image)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	switch sb := j.superblock; {
	case op < sb.CheckpointOp:
		return fmt.Errorf("%s holds op %d, checkpoint is op %d: %w", p, op, sb.CheckpointOp, ErrSnapshotMissing)
	case op == sb.CheckpointOp && sb.Sequence != 0 && (checksum != sb.StateChecksum || uint64(len(state)) != sb.StateLength):
		return fmt.Errorf("%s does not match the superblock's checkpoint: %w", p, ErrCorrupt)
	}
	if err := restore(op, state); err != nil {
		return fmt.Errorf("restore snapshot op %d: %w", op, err)
	}
	j.checkpointOp, j.lastOp = op, op
	report.SnapshotOp, report.SnapshotUsed = op, true
	return nil
}

// replay reads the journal file, verifies the chain and hands the entries
// after the checkpoint to apply.
func (j *MetaJournal) replay(apply func(MetaEntry) error, report *MetaJournalReport) error {
	p := path.Join(j.dir, metaJournalFile)
	existed, err := Exists(j.fs, p)
	if err != nil {
		return fmt.Errorf("stat %s: %w", p, err)
	}
	f, err := j.fs.OpenReadWrite(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	j.file = f
	if !existed {
		// The new name must be durable before entries synced into the
		// file can be.
		if err := j.fs.SyncDir(j.dir); err != nil {
			return errors.Join(fmt.Errorf("sync directory %s: %w", j.dir, err), j.Close())
		}
	}
	image, err := readAll(f)
	if err != nil {
		return errors.Join(fmt.Errorf("read %s: %w", p, err), j.Close())
	}
	pos := 0
	var previous uint64
	var lastOp uint64
	for pos < len(image) {
		e, sum, n, derr := DecodeMetaEntry(image[pos:], previous)
		if derr != nil {
			if validMetaHeaderAfter(image, pos) {
				return errors.Join(fmt.Errorf("%s at byte %d: %w: %w", p, pos, ErrJournalCorrupt, derr), j.Close())
			}
			if err := j.truncateTail(int64(pos), int64(len(image)), derr, report); err != nil {
				return errors.Join(err, j.Close())
			}
			break
		}
		// Entries that verify but break the op sequence are missing
		// history, never a torn write: nothing is truncated.
		if j.entries > 0 && e.Op != lastOp+1 {
			return errors.Join(fmt.Errorf("%s at byte %d: op %d follows op %d: %w", p, pos, e.Op, lastOp, ErrJournalCorrupt), j.Close())
		}
		if e.Op > j.checkpointOp+1 && (j.entries == 0 || lastOp < j.checkpointOp) {
			return errors.Join(fmt.Errorf("%s at byte %d: op %d after checkpoint op %d leaves a gap: %w", p, pos, e.Op, j.checkpointOp, ErrJournalCorrupt), j.Close())
		}
		if e.Op > j.checkpointOp {
			if err := apply(e); err != nil {
				return errors.Join(fmt.Errorf("apply op %d: %w", e.Op, err), j.Close())
			}
			report.Replayed++
			j.lastOp = e.Op
		} else {
			report.Skipped++
		}
		previous, lastOp = sum, e.Op
		j.entries++
		pos += n
	}
	if report.Replayed == 0 && j.entries > 0 {
		// Every entry is covered by the snapshot (a crash stopped a
		// checkpoint before it emptied the journal): finish the job, so
		// new entries follow the checkpoint op directly.
		if err := j.emptyJournal(); err != nil {
			return errors.Join(err, j.Close())
		}
		return nil
	}
	j.previous, j.size = previous, int64(pos)
	return nil
}

// truncateTail cuts the journal at pos (the start of a torn or corrupt
// last entry) and records it in the report.
func (j *MetaJournal) truncateTail(pos, size int64, cause error, report *MetaJournalReport) error {
	p := path.Join(j.dir, metaJournalFile)
	if err := j.file.Truncate(pos); err != nil {
		return fmt.Errorf("truncate %s: %w", p, err)
	}
	if err := j.file.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", p, err)
	}
	dropped := uint64(0)
	if size-pos >= MetaEntryHeaderSize {
		dropped = 1
	}
	report.Truncation = &Truncation{File: p, Position: pos, BytesDropped: size - pos, MessagesDropped: dropped, Reason: cause.Error()}
	return nil
}

// LastOp returns the op of the last journaled (or checkpointed) operation.
func (j *MetaJournal) LastOp() uint64 { return j.lastOp }

// CheckpointOp returns the op of the last checkpoint (0: none).
func (j *MetaJournal) CheckpointOp() uint64 { return j.checkpointOp }

// NeedsCheckpoint reports whether the journal is full: Append fails with
// ErrJournalFull until Checkpoint.
func (j *MetaJournal) NeedsCheckpoint() bool { return j.entries >= j.slots }

// Append writes e (e.Op must be LastOp()+1) at the end of the journal;
// with sync it also makes it durable (metadata replies wait for that).
// A write or sync failure poisons the journal (ErrLogFailed) until it is
// reopened.
func (j *MetaJournal) Append(e MetaEntry, sync bool) error {
	p := path.Join(j.dir, metaJournalFile)
	if j.failed != nil {
		return fmt.Errorf("%s: %w (%v)", p, ErrLogFailed, j.failed)
	}
	if e.Op != j.lastOp+1 {
		return fmt.Errorf("append op %d after op %d: %w", e.Op, j.lastOp, ErrBadOp)
	}
	if len(e.Body) > MetaEntryBodyMax {
		return fmt.Errorf("entry body of %d bytes: %w", len(e.Body), ErrInvalidArgument)
	}
	if j.NeedsCheckpoint() {
		return fmt.Errorf("%s holds %d entries: %w", p, j.entries, ErrJournalFull)
	}
	header, sum := EncodeMetaEntryHeader(e, j.previous)
	n, err := j.file.AppendVector([][]byte{header[:], e.Body})
	if err != nil || n != MetaEntryHeaderSize+len(e.Body) {
		j.failed = fmt.Errorf("append op %d: wrote %d bytes: %v", e.Op, n, err)
		return fmt.Errorf("%s: %w: %w", p, ErrLogFailed, j.failed)
	}
	if sync {
		if err := j.file.Sync(); err != nil {
			j.failed = fmt.Errorf("sync: %w", err)
			return fmt.Errorf("%s: %w: %w", p, ErrLogFailed, err)
		}
	}
	j.previous, j.lastOp = sum, e.Op
	j.entries++
	j.size += int64(n)
	return nil
}

// Sync makes every appended entry durable.
func (j *MetaJournal) Sync() error {
	if j.failed != nil {
		return fmt.Errorf("%s: %w (%v)", j.dir, ErrLogFailed, j.failed)
	}
	if err := j.file.Sync(); err != nil {
		j.failed = err
		return fmt.Errorf("%s: %w: %w", j.dir, ErrLogFailed, err)
	}
	return nil
}

// Checkpoint records state, the caller's encoding of the metadata after
// LastOp(), and empties the journal: snapshot.bin is written through a
// temporary file, synced and renamed; then the next superblock copy
// records the checkpoint op; then the journal is truncated and synced. A
// crash at any point leaves a state Open recovers from.
func (j *MetaJournal) Checkpoint(state []byte) error {
	if j.failed != nil {
		return fmt.Errorf("%s: %w (%v)", j.dir, ErrLogFailed, j.failed)
	}
	if len(state) > SnapshotStateMax {
		return fmt.Errorf("snapshot state of %d bytes: %w", len(state), ErrInvalidArgument)
	}
	op := j.lastOp
	image := EncodeSnapshot(op, state)
	_, _, checksum, err := DecodeSnapshot(image) // verify before writing
	if err != nil {
		return err
	}
	if err := writeFileAtomic(j.fs, j.dir, path.Join(j.dir, metaSnapshotFile), image, true); err != nil {
		return err
	}
	next := MetadataSuperblock{Sequence: j.superblock.Sequence + 1, CheckpointOp: op, StateChecksum: checksum, StateLength: uint64(len(state))}
	if j.superblock.Sequence == 0 {
		// The first checkpoint creates the superblock: both copies.
		r, err := createSuperblock(j.fs, j.dir, metadataKind, next.record())
		if err != nil {
			return err
		}
		next.Sequence = r.sequence
	} else if err := storeSuperblock(j.fs, j.dir, metadataKind, next.record()); err != nil {
		return err
	}
	j.superblock, j.checkpointOp = next, op
	if err := j.emptyJournal(); err != nil {
		j.failed = err
		return fmt.Errorf("%w: %w", ErrLogFailed, err)
	}
	return nil
}

// emptyJournal truncates the journal file to nothing and syncs it.
func (j *MetaJournal) emptyJournal() error {
	p := path.Join(j.dir, metaJournalFile)
	if err := j.file.Truncate(0); err != nil {
		return fmt.Errorf("truncate %s: %w", p, err)
	}
	if err := j.file.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", p, err)
	}
	j.previous, j.entries, j.size = 0, 0, 0
	return nil
}

// Close closes the journal file without syncing.
func (j *MetaJournal) Close() error {
	if j.file == nil {
		return nil
	}
	err := j.file.Close()
	j.file = nil
	return err
}
