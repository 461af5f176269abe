package server_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage"
)

// TestBootRecoversFullMetadataJournal starts a server over a data dir in
// the state a server that never checkpointed after session entries left:
// metadata/journal.wal holds journal_slots entries (the root user, a
// stream, then logins and logouts) and there is no snapshot.bin. The
// entries are appended with the storage API exactly as the server journals
// a Register or Logout. The server must boot, take the checkpoint, accept
// a login and metadata writes, and keep all of it across another restart.
func TestBootRecoversFullMetadataJournal(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "before"); err != nil {
		t.Fatal(err)
	}
	ts.stop()

	metaDir := filepath.Join(dir, "metadata")
	journal, report, err := storage.OpenMetaJournal(storage.OSFS{}, metaDir, storage.MetaJournalOptions{},
		func(uint64, []byte) error { return nil },
		func(storage.MetaEntry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if report.SnapshotUsed {
		t.Fatal("the data dir already has a snapshot")
	}
	last, _ := lastMetaEntry(t, filepath.Join(metaDir, "journal.wal"))
	for i := 0; !journal.NeedsCheckpoint(); i++ {
		body := make([]byte, 20) // client id u128, user id u32 (root: 0)
		binary.LittleEndian.PutUint64(body, uint64(1000+i/2))
		operation := wire.OpRegister
		if i%2 == 1 {
			operation = wire.OpLogout
		}
		e := storage.MetaEntry{Op: journal.LastOp() + 1, Timestamp: last.Timestamp + uint64(i) + 1, Operation: uint8(operation), Body: body}
		if err := journal.Append(e, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := journal.Close(); err != nil {
		t.Fatal(err)
	}
	full, err := os.Stat(filepath.Join(metaDir, "journal.wal"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(metaDir, "snapshot.bin")); !os.IsNotExist(err) {
		t.Fatalf("snapshot.bin before the boot: %v", err)
	}
	t.Logf("full journal: %d bytes, %d entries, no snapshot.bin", full.Size(), storage.MetaJournalSlotsDefault)

	ts = startServer(t, dir)
	c = ts.connect()
	if _, err := c.CreateStream(ctx(t), "after"); err != nil {
		t.Fatalf("create a stream after booting on a full journal: %v", err)
	}
	ts.mustLog("metadata journal was full at boot; checkpoint taken")
	if n := metricValues(t, ts)["strata_metadata_checkpoints_total"]; n != 1 {
		t.Fatalf("strata_metadata_checkpoints_total %v after the boot checkpoint, want 1", n)
	}
	if _, err := os.Stat(filepath.Join(metaDir, "snapshot.bin")); err != nil {
		t.Fatalf("no snapshot.bin after the boot: %v", err)
	}
	ts.stop()

	c = startServer(t, dir).connect()
	streams, err := c.GetStreams(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !hasStreams(streams, "before", "after") || len(streams) != 2 {
		t.Fatalf("streams after the second restart: %+v", streams)
	}
}

// hasStreams reports whether every name is among the streams.
func hasStreams(streams []client.Stream, names ...string) bool {
	have := map[string]bool{}
	for _, s := range streams {
		have[s.Name] = true
	}
	for _, n := range names {
		if !have[n] {
			return false
		}
	}
	return true
}

// lastMetaEntry decodes the journal at path and returns its last entry and
// the byte offset where that entry starts.
func lastMetaEntry(t *testing.T, path string) (storage.MetaEntry, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var last storage.MetaEntry
	at, pos := -1, 0
	var previous uint64
	for pos < len(data) {
		e, sum, n, err := storage.DecodeMetaEntry(data[pos:], previous)
		if err != nil {
			t.Fatalf("%s at byte %d: %v", path, pos, err)
		}
		last, at, previous = e, pos, sum
		pos += n
	}
	if at < 0 {
		t.Fatalf("%s holds no entry", path)
	}
	return last, at
}

// TestFailedCheckpointIsRetried blocks the metadata checkpoint on the real
// file system (a directory where snapshot.bin.tmp must be created) while
// logins and logouts fill a 16-slot journal. Operations are refused (57)
// once the journal is full and its checkpoint fails, but the state is not
// permanent: as soon as the checkpoint can be written, the next operation
// takes it and everything goes on.
func TestFailedCheckpointIsRetried(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, "STRATA_METADATA_JOURNAL_SLOTS=16")
	blocker := filepath.Join(dir, "metadata", "snapshot.bin.tmp")
	if err := os.MkdirAll(filepath.Join(blocker, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(ctx(t), ts.addr, client.WithTransientBackoff(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	refused := -1
	for i := 0; i < 64 && refused < 0; i++ {
		if _, err := c.LoginUser(ctx(t), "iggy", "iggy"); err != nil {
			if !errors.Is(err, wire.ErrTransientNotCommitted) {
				t.Fatalf("login %d: %v", i, err)
			}
			refused = i
			break
		}
		if err := c.Logout(ctx(t)); err != nil {
			if !errors.Is(err, wire.ErrTransientNotCommitted) {
				t.Fatalf("logout %d: %v", i, err)
			}
			refused = i
		}
	}
	if refused < 0 {
		t.Fatal("64 logins and logouts into a 16-slot journal whose checkpoint cannot be written were all accepted")
	}
	t.Logf("refused at round %d while the checkpoint could not be written", refused)
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoginUser(ctx(t), "iggy", "iggy"); err != nil {
		t.Fatalf("login once the checkpoint can be written: %v", err)
	}
	ts.mustLog("metadata checkpoint failed")
	for i := 0; i < 40; i++ {
		if _, err := c.CreateStream(ctx(t), "s"+strconv.Itoa(i)); err != nil {
			t.Fatalf("create stream %d: %v", i, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "metadata", "snapshot.bin")); err != nil {
		t.Fatalf("no snapshot.bin: %v", err)
	}
	ts.stop()
	streams, err := startServer(t, dir, "STRATA_METADATA_JOURNAL_SLOTS=16").connect().GetStreams(ctx(t))
	if err != nil || len(streams) != 40 {
		t.Fatalf("after restart: %d streams, %v", len(streams), err)
	}
}
