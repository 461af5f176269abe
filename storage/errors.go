package storage

import "errors"

// Sentinel errors of the storage package, wrapped with %w and a message
// naming the file and byte position where one applies.
var (
	// ErrCorrupt: on-disk bytes fail a checksum or structural check and
	// cannot be repaired locally (not a torn tail).
	ErrCorrupt = errors.New("storage: corrupt data")
	// ErrLogFenced: the log found corruption before its end at open; it
	// serves only the range before the damage and refuses appends until
	// it is repaired.
	ErrLogFenced = errors.New("storage: log fenced by corruption")
	// ErrLogFailed: a write or sync failed, so the file state is unknown;
	// the log refuses further work until it is reopened (recovery).
	ErrLogFailed = errors.New("storage: log failed, reopen to recover")
	// ErrBadAppend: the caller handed Append bytes that are not whole
	// stamped batches continuing the log's offsets.
	ErrBadAppend = errors.New("storage: append of invalid batches")
	// ErrJournalCorrupt: a metadata journal entry before the last one is
	// damaged; nothing was deleted.
	ErrJournalCorrupt = errors.New("storage: metadata journal corrupt")
	// ErrJournalFull: the journal holds journal_slots entries; the caller
	// must Checkpoint before appending more.
	ErrJournalFull = errors.New("storage: metadata journal full, checkpoint needed")
	// ErrInvalidArgument: a caller passed a value outside the documented
	// domain (an unknown offset kind, superblock sequence 0).
	ErrInvalidArgument = errors.New("storage: invalid argument")
	// ErrBadOp: a journal append whose op number does not follow the last.
	ErrBadOp = errors.New("storage: journal op out of sequence")
	// ErrNoSuperblock: neither superblock copy is valid although at least
	// one exists.
	ErrNoSuperblock = errors.New("storage: no valid superblock copy")
	// ErrSnapshotMissing: the superblock records a checkpoint whose
	// snapshot is missing or older.
	ErrSnapshotMissing = errors.New("storage: snapshot missing for checkpoint")
)
