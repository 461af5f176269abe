package iofs

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

// journalState records what a metadata journal replays.
type journalState struct {
	snapshotOp uint64
	snapshot   string
	ops        []uint64
}

func (s *journalState) restore(op uint64, state []byte) error {
	s.snapshotOp, s.snapshot = op, string(state)
	return nil
}

func (s *journalState) apply(e storage.MetaEntry) error {
	if want := fmt.Sprintf("op-%d", e.Op); string(e.Body) != want {
		return fmt.Errorf("op %d carries %q", e.Op, e.Body)
	}
	s.ops = append(s.ops, e.Op)
	return nil
}

func openJournal(t *testing.T, fsys storage.FS, dir string) (*storage.MetaJournal, *journalState) {
	t.Helper()
	s := &journalState{}
	j, _, err := storage.OpenMetaJournal(fsys, dir, storage.MetaJournalOptions{Slots: 16}, s.restore, s.apply)
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	return j, s
}

// TestMetaJournalOverUring appends, checkpoints (snapshot, superblock,
// journal reset: writes at offsets, truncation, renames) and replays the
// metadata journal on the uring FS, then replays it with the sync engine.
func TestMetaJournalOverUring(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newFS fsMaker) {
		fsys := newFS(t, uring.Config{Entries: 8})
		dir := filepath.Join(t.TempDir(), "metadata")
		j, _ := openJournal(t, fsys, dir)
		appendN := func(j *storage.MetaJournal, n int) {
			t.Helper()
			for i := 0; i < n; i++ {
				op := j.LastOp() + 1
				if err := j.Append(storage.MetaEntry{Op: op, Timestamp: op, Body: fmt.Appendf(nil, "op-%d", op)}, i%3 == 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		appendN(j, 10)
		if err := j.Checkpoint([]byte("state@10")); err != nil {
			t.Fatal(err)
		}
		appendN(j, 5)
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		for _, engine := range []storage.FS{fsys, storage.OSFS{}} {
			j, s := openJournal(t, engine, dir)
			if s.snapshotOp != 10 || s.snapshot != "state@10" || len(s.ops) != 5 || s.ops[0] != 11 || s.ops[4] != 15 || j.LastOp() != 15 {
				t.Fatalf("%T replay: snapshot %d %q, ops %v, last %d", engine, s.snapshotOp, s.snapshot, s.ops, j.LastOp())
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
