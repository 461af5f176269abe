package storage_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// kvState is a toy metadata state machine: op bodies are "key=value"
// strings applied in order; its snapshot is the applied bodies joined.
type kvState struct {
	restoredOp uint64
	restored   string
	applied    []string
	ops        []uint64
}

func (s *kvState) restore(op uint64, state []byte) error {
	s.restoredOp, s.restored = op, string(state)
	return nil
}

func (s *kvState) apply(e storage.MetaEntry) error {
	s.applied = append(s.applied, string(e.Body))
	s.ops = append(s.ops, e.Op)
	return nil
}

func openJournal(t *testing.T, fsys storage.FS, dir string, slots int) (*storage.MetaJournal, *kvState, storage.MetaJournalReport) {
	t.Helper()
	s := &kvState{}
	j, report, err := storage.OpenMetaJournal(fsys, dir, storage.MetaJournalOptions{Slots: slots}, s.restore, s.apply)
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j, s, report
}

func appendOps(t *testing.T, j *storage.MetaJournal, n int, sync bool) {
	t.Helper()
	for i := 0; i < n; i++ {
		op := j.LastOp() + 1
		e := storage.MetaEntry{Op: op, Timestamp: 1000 * op, Operation: uint8(op % 7), Body: fmt.Appendf(nil, "op-%d", op)}
		if err := j.Append(e, sync); err != nil {
			t.Fatalf("append op %d: %v", op, err)
		}
	}
}

func expectOps(t *testing.T, s *kvState, from, to uint64) {
	t.Helper()
	if uint64(len(s.ops)) != to-from+1 && !(to < from && len(s.ops) == 0) {
		t.Fatalf("replayed ops %v, want %d..%d", s.ops, from, to)
	}
	for i, op := range s.ops {
		if op != from+uint64(i) || s.applied[i] != fmt.Sprintf("op-%d", op) {
			t.Fatalf("replayed %d %q at %d", op, s.applied[i], i)
		}
	}
}

func TestMetaJournalReplay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "metadata")
	j, _, report := openJournal(t, storage.OSFS{}, dir, 0)
	if report.SnapshotUsed || report.Replayed != 0 || report.Superblock.Found {
		t.Fatalf("fresh journal report %+v", report)
	}
	appendOps(t, j, 10, true)
	if err := j.Append(storage.MetaEntry{Op: 5}, true); !errors.Is(err, storage.ErrBadOp) {
		t.Fatalf("out-of-sequence op: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j2, s, report := openJournal(t, storage.OSFS{}, dir, 0)
	expectOps(t, s, 1, 10)
	if report.Replayed != 10 || report.Truncation != nil || j2.LastOp() != 10 {
		t.Fatalf("report %+v last op %d", report, j2.LastOp())
	}
	appendOps(t, j2, 1, true)
}

func TestMetaJournalTornLastEntryTruncated(t *testing.T) {
	fsys := memfs.New()
	j, _, _ := openJournal(t, fsys, "/data/metadata", 0)
	appendOps(t, j, 7, true)  // 7 × 68 bytes = 476
	appendOps(t, j, 1, false) // op 8 at 476..544, unsynced
	// The power loss keeps the file up to the sector boundary 512: 36
	// bytes of op 8's header.
	fsys.CrashTorn("/data/metadata/journal.wal", 40)
	if data, _ := fsys.ReadFile("/data/metadata/journal.wal"); len(data) != 512 {
		t.Fatalf("torn file holds %d bytes", len(data))
	}
	j2, s, report := openJournal(t, fsys, "/data/metadata", 0)
	expectOps(t, s, 1, 7)
	tr := report.Truncation
	if tr == nil || tr.Position != 476 || tr.BytesDropped != 36 || tr.MessagesDropped != 0 || tr.File != "/data/metadata/journal.wal" {
		t.Fatalf("truncation %+v", tr)
	}
	if j2.LastOp() != 7 {
		t.Fatalf("last op %d", j2.LastOp())
	}
	appendOps(t, j2, 2, true)
	if err := j2.Close(); err != nil {
		t.Fatal(err)
	}
	_, s3, report := openJournal(t, fsys, "/data/metadata", 0)
	expectOps(t, s3, 1, 9)
	if report.Truncation != nil {
		t.Fatalf("second open truncated again: %+v", report.Truncation)
	}
}

func TestMetaJournalTruncationCounts(t *testing.T) {
	dir := t.TempDir()
	j, _, _ := openJournal(t, storage.OSFS{}, dir, 0)
	appendOps(t, j, 4, true) // 4 × (64 + len("op-N") = 4) = 272 bytes
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cut     int64 // bytes removed from the end
		dropped uint64
	}{{2, 1}, {50, 0}} {
		fsys := storage.OSFS{}
		f, err := fsys.OpenReadWrite(filepath.Join(dir, "journal.wal"))
		if err != nil {
			t.Fatal(err)
		}
		size, _ := f.Size()
		if err := f.Truncate(size - c.cut); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		j, s, report := openJournal(t, fsys, dir, 0)
		tr := report.Truncation
		want := size - 68 // the last entry's start
		if tr == nil || tr.Position != want || tr.BytesDropped != 68-c.cut || tr.MessagesDropped != c.dropped {
			t.Fatalf("cut %d: truncation %+v, want position %d", c.cut, tr, want)
		}
		expectOps(t, s, 1, j.LastOp())
		appendOps(t, j, 1, true) // restore one entry for the next case
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMetaJournalCorruptMiddleEntryIsAnError(t *testing.T) {
	fsys := memfs.New()
	j, _, _ := openJournal(t, fsys, "/m", 0)
	appendOps(t, j, 6, true)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := fsys.ReadFile("/m/journal.wal")
	// Entry 3 (ops are 68 bytes each) starts at 136; flip a body byte.
	fsys.Corrupt("/m/journal.wal", 136+64+1, 0x10)
	s := &kvState{}
	_, _, err := storage.OpenMetaJournal(fsys, "/m", storage.MetaJournalOptions{}, s.restore, s.apply)
	if !errors.Is(err, storage.ErrJournalCorrupt) {
		t.Fatalf("corrupt middle entry: %v", err)
	}
	if want := "journal.wal at byte 136"; !contains(err.Error(), want) {
		t.Fatalf("error %q does not name %q", err, want)
	}
	after, _ := fsys.ReadFile("/m/journal.wal")
	if len(after) != len(before) {
		t.Fatal("a corrupt journal was modified")
	}
	// A header flip is found the same way.
	fsys.Corrupt("/m/journal.wal", 136+64+1, 0x10)
	fsys.Corrupt("/m/journal.wal", 68+9, 0x01)
	if _, _, err := storage.OpenMetaJournal(fsys, "/m", storage.MetaJournalOptions{}, s.restore, s.apply); !errors.Is(err, storage.ErrJournalCorrupt) {
		t.Fatalf("corrupt middle header: %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestMetaJournalCheckpoint(t *testing.T) {
	fsys := memfs.New()
	const slots = 8
	j, _, _ := openJournal(t, fsys, "/m", slots)
	appendOps(t, j, slots, true)
	if !j.NeedsCheckpoint() {
		t.Fatal("a full journal must need a checkpoint")
	}
	if err := j.Append(storage.MetaEntry{Op: j.LastOp() + 1}, true); !errors.Is(err, storage.ErrJournalFull) {
		t.Fatalf("append to a full journal: %v", err)
	}
	if err := j.Checkpoint([]byte("state@8")); err != nil {
		t.Fatal(err)
	}
	// The first checkpoint creates the superblock: both copies.
	for _, name := range []string{"/m/superblock.a", "/m/superblock.b"} {
		if data, ok := fsys.ReadFile(name); !ok || len(data) != storage.SuperblockSize {
			t.Fatalf("%s after the first checkpoint: %d bytes", name, len(data))
		}
	}
	if j.NeedsCheckpoint() || j.CheckpointOp() != 8 {
		t.Fatal("checkpoint did not empty the journal")
	}
	if data, _ := fsys.ReadFile("/m/journal.wal"); len(data) != 0 {
		t.Fatalf("journal holds %d bytes after a checkpoint", len(data))
	}
	appendOps(t, j, 3, true)
	if err := j.Checkpoint([]byte("state@11")); err != nil {
		t.Fatal(err)
	}
	appendOps(t, j, 2, true)
	fsys.Crash()

	j2, s, report := openJournal(t, fsys, "/m", slots)
	if !report.SnapshotUsed || s.restoredOp != 11 || s.restored != "state@11" {
		t.Fatalf("restored %d %q, report %+v", s.restoredOp, s.restored, report)
	}
	expectOps(t, s, 12, 13)
	if report.Superblock.File != "/m/superblock.a" || report.Superblock.Valid != 2 || report.SuperblockHealed {
		t.Fatalf("second checkpoint (sequence 3) must use superblock.a: %+v", report.Superblock)
	}
	if j2.LastOp() != 13 {
		t.Fatalf("last op %d", j2.LastOp())
	}

	// The superblock copy just written is damaged: the older copy is used;
	// the snapshot is newer than it (op 11 > 8) and valid, so recovery
	// still restores op 11 and replays 12..13.
	if err := j2.Close(); err != nil {
		t.Fatal(err)
	}
	fsys.Corrupt("/m/superblock.a", 20, 0xff)
	j3, s3, report := openJournal(t, fsys, "/m", slots)
	if report.Superblock.File != "/m/superblock.b" || len(report.Superblock.Invalid) != 1 || s3.restoredOp != 11 || !report.SuperblockHealed {
		t.Fatalf("fallback: %+v restored %d", report, s3.restoredOp)
	}
	expectOps(t, s3, 12, 13)
	// The damaged copy was rewritten from the valid one.
	if err := j3.Close(); err != nil {
		t.Fatal(err)
	}
	_, _, report = openJournal(t, fsys, "/m", slots)
	if report.Superblock.Valid != 2 || report.SuperblockHealed {
		t.Fatalf("after healing: %+v", report)
	}

	// A damaged snapshot is an error, never an empty state.
	fsys.Corrupt("/m/snapshot.bin", 70, 0x01)
	s4 := &kvState{}
	if _, _, err := storage.OpenMetaJournal(fsys, "/m", storage.MetaJournalOptions{Slots: slots}, s4.restore, s4.apply); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("damaged snapshot: %v", err)
	}
	// So is a missing one that the superblock names.
	if err := fsys.Remove("/m/snapshot.bin"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := storage.OpenMetaJournal(fsys, "/m", storage.MetaJournalOptions{Slots: slots}, s4.restore, s4.apply); !errors.Is(err, storage.ErrSnapshotMissing) {
		t.Fatalf("missing snapshot: %v", err)
	}
}

func TestMetaJournalCrashInsideCheckpoint(t *testing.T) {
	// Snapshot written, superblock not: the journal still has everything.
	fsys := memfs.New()
	j, _, _ := openJournal(t, fsys, "/m", 0)
	appendOps(t, j, 5, true)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Create("/m/snapshot.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(storage.EncodeSnapshot(3, []byte("state@3")), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	j2, s, report := openJournal(t, fsys, "/m", 0)
	if s.restoredOp != 3 || report.Skipped != 3 {
		t.Fatalf("restored op %d, report %+v", s.restoredOp, report)
	}
	expectOps(t, s, 4, 5)
	appendOps(t, j2, 1, true)

	// Snapshot and superblock written, journal not emptied, and its tail
	// lost: every entry is covered, the journal is emptied at open and new
	// entries follow the checkpoint op.
	fsys2 := memfs.New()
	j3, _, _ := openJournal(t, fsys2, "/m", 0)
	appendOps(t, j3, 4, true)
	appendOps(t, j3, 2, false)
	if err := j3.Checkpoint([]byte("state@6")); err != nil {
		t.Fatal(err)
	}
	appendOps(t, j3, 1, true)
	fsys2.Crash()
	data, _ := fsys2.ReadFile("/m/journal.wal")
	if len(data) == 0 {
		t.Fatal("expected op 7 in the journal")
	}
	j4, s4, _ := openJournal(t, fsys2, "/m", 0)
	if s4.restoredOp != 6 || j4.LastOp() != 7 {
		t.Fatalf("restored %d last %d", s4.restoredOp, j4.LastOp())
	}
	expectOps(t, s4, 7, 7)
}
