package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// The metadata group's files: metadata/journal.wal is the group's VSR WAL,
// snapshot.bin its checkpoint, superblock.a/.b its superblock copies
// (storage/FORMATS.md).

// TestMetadataJournalIsTheGroupWAL: every metadata change of a fresh
// server (the root user, a login, streams, a topic, a user) is an op of
// the metadata group, in order, in metadata/journal.wal: a version-2
// metadata WAL whose prepare slots hold them.
func TestMetadataJournalIsTheGroupWAL(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	for _, name := range []string{"a", "b"} {
		if _, err := c.CreateStream(ctx(t), name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateUser(ctx(t), "user", "secret1", client.UserActive, nil); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	meta := filepath.Join(ts.dir, "metadata")
	head := make([]byte, 8)
	f, err := os.Open(filepath.Join(meta, "journal.wal"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.ReadAt(head, 0)
	f.Close()
	if err != nil || string(head[:4]) != "SMVW" || binary.LittleEndian.Uint16(head[4:]) != 3 {
		t.Fatalf("journal.wal header %q (%v), want the metadata WAL magic SMVW version 3", head, err)
	}
	checkpoint, entries, err := server.MetaJournalForTest(meta, 1024)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range entries {
		if e.Op != uint64(i+1) {
			t.Fatalf("journal ops %+v are not 1, 2, ...", entries)
		}
		got = append(got, strconv.Itoa(int(e.Operation)))
	}
	want := []string{
		strconv.Itoa(int(wire.OpCreateUser)), strconv.Itoa(int(wire.OpRegister)),
		strconv.Itoa(int(wire.OpCreateStream)), strconv.Itoa(int(wire.OpCreateStream)),
		strconv.Itoa(int(wire.OpCreateTopic)), strconv.Itoa(int(wire.OpCreateUser)),
	}
	if checkpoint != 0 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("checkpoint %d, journal operations %v, want 0 and %v", checkpoint, got, want)
	}
}

// metadataView renders what a client sees of the metadata: streams,
// topics and their partition counts, consumer groups, users, the root's
// personal access tokens.
func metadataView(t *testing.T, c *client.Client) string {
	t.Helper()
	var b strings.Builder
	streams, err := c.GetStreams(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range streams {
		fmt.Fprintf(&b, "stream %d %s topics=%d\n", s.ID, s.Name, s.TopicsCount)
		topics, err := c.GetTopics(ctx(t), client.ID(s.ID))
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range topics {
			fmt.Fprintf(&b, "  topic %d %s partitions=%d expiry=%d\n", tp.ID, tp.Name, tp.PartitionsCount, tp.MessageExpiry)
			groups, err := c.GetConsumerGroups(ctx(t), client.ID(s.ID), client.ID(tp.ID))
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range groups {
				fmt.Fprintf(&b, "    group %d %s partitions=%d\n", g.ID, g.Name, g.PartitionsCount)
			}
		}
	}
	users, err := c.GetUsers(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		fmt.Fprintf(&b, "user %d %s status=%d\n", u.ID, u.Username, u.Status)
	}
	tokens, err := c.GetPersonalAccessTokens(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tokens {
		fmt.Fprintf(&b, "token %s\n", p.Name)
	}
	return b.String()
}

// metadataChurn makes every kind of metadata change, enough of them for
// several checkpoints of a 16-slot journal, and returns how many
// operations were acknowledged.
func metadataChurn(t *testing.T, c *client.Client, prefix string, rounds int) int {
	t.Helper()
	acked := 0
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		acked++
	}
	for i := 0; i < rounds; i++ {
		s, err := c.CreateStream(ctx(t), prefix+"stream-"+strconv.Itoa(i))
		check(err)
		_, err = c.CreateTopic(ctx(t), client.ID(s.ID), "topic", 2, nil)
		check(err)
		check(c.CreatePartitions(ctx(t), client.ID(s.ID), client.ID(0), 1))
		_, err = c.CreateConsumerGroup(ctx(t), client.ID(s.ID), client.ID(0), "group")
		check(err)
		_, err = c.CreateUser(ctx(t), prefix+"user-"+strconv.Itoa(i), "secret1", client.UserActive, nil)
		check(err)
		if i%3 == 1 {
			check(c.UpdateStream(ctx(t), client.ID(s.ID), prefix+"renamed-"+strconv.Itoa(i)))
			check(c.DeletePartitions(ctx(t), client.ID(s.ID), client.ID(0), 1))
			check(c.DeleteUser(ctx(t), client.Named(prefix+"user-"+strconv.Itoa(i))))
		}
		if i%3 == 2 {
			_, err = c.CreateTopic(ctx(t), client.ID(s.ID), "second", 1, nil)
			check(err)
			check(c.DeleteTopic(ctx(t), client.ID(s.ID), client.ID(0)))
		}
		if i%4 == 3 {
			_, err = c.CreatePersonalAccessToken(ctx(t), prefix+"pat-"+strconv.Itoa(i), 0)
			check(err)
		}
	}
	return acked
}

// TestMetadataSurvivesPowerLoss runs the broker on the in-memory file
// system, which loses every unsynced write on Crash, with a 16-slot
// metadata journal: every kind of metadata change, over several
// checkpoints, then the power is cut right after the last acknowledgement
// (no shutdown). A broker on what survived shows exactly the metadata the
// clients saw acknowledged: the journal's ops above the checkpoint are
// applied again, in order.
func TestMetadataSurvivesPowerLoss(t *testing.T) {
	fsys := &lockedFS{fs: memfs.New()}
	const dir = "/data"
	slots := "STRATA_METADATA_JOURNAL_SLOTS=16"
	srv, addr := startOnFSWith(t, fsys, dir, slots)
	c := connectTo(t, addr)
	acked := metadataChurn(t, c, "", 12)
	before := metadataView(t, c)
	fsys.crash() // power loss right after the last acknowledgement
	_ = srv.Shutdown(context.Background())
	_ = c.Close()
	if _, err := fsys.Stat(dir + "/metadata/snapshot.bin"); err != nil {
		t.Fatalf("no checkpoint survived %d ops into a 16-slot journal: %v", acked, err)
	}

	srv, addr = startOnFSWith(t, fsys, dir, slots)
	c = connectTo(t, addr)
	if after := metadataView(t, c); after != before {
		t.Fatalf("%d acknowledged metadata operations, then a power loss; before:\n%s\nafter:\n%s", acked, before, after)
	}
	// The restarted group goes on numbering and checkpointing.
	more := metadataChurn(t, c, "more-", 4)
	before = metadataView(t, c)
	fsys.crash()
	_ = srv.Shutdown(context.Background())
	srv, addr = startOnFSWith(t, fsys, dir, slots)
	defer srv.Shutdown(context.Background())
	if after := metadataView(t, connectTo(t, addr)); after != before {
		t.Fatalf("second power loss: before:\n%s\nafter:\n%s", before, after)
	}
	t.Logf("%d then %d acknowledged metadata operations survived power losses", acked, more)
}

// startOnFSWith is startOnFS with configuration overrides.
func startOnFSWith(t *testing.T, fsys storage.FS, dir string, env ...string) (*server.Server, string) {
	t.Helper()
	cfg, err := config.Load("", append(append([]string{"STRATA_SYSTEM_PATH=" + dir, "STRATA_TCP_ADDRESS=127.0.0.1:0"}, engineEnv()...), env...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, FS: fsys, Logger: zap.NewNop(), Root: server.RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return srv, srv.TCPAddr().String()
}

// TestOldFormatMetadataDirIsRefused: a data directory whose metadata a
// build before the metadata group wrote (journal.wal an entry log of
// "SMJE" entries, snapshot.bin an "SMSN" snapshot, 128-byte "SMSB"
// superblocks, all version 1) is refused at boot with an error naming the
// file and its version; nothing in it is changed.
func TestOldFormatMetadataDirIsRefused(t *testing.T) {
	oldEntry := func() []byte {
		b := make([]byte, 64+20)
		copy(b, "SMJE")
		binary.LittleEndian.PutUint16(b[4:], 1)
		b[6] = byte(wire.OpRegister)
		binary.LittleEndian.PutUint64(b[8:], 1)
		binary.LittleEndian.PutUint32(b[24:], 20)
		return b
	}
	oldFile := func(magic string, size int) []byte {
		b := make([]byte, size)
		copy(b, magic)
		binary.LittleEndian.PutUint16(b[4:], 1)
		return b
	}
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"entry log", map[string][]byte{"journal.wal": oldEntry()}, "journal.wal is a metadata journal of format version 1"},
		{"checkpointed", map[string][]byte{"journal.wal": {}, "snapshot.bin": oldFile("SMSN", 64+40),
			"superblock.a": oldFile("SMSB", 128), "superblock.b": oldFile("SMSB", 128)}, "snapshot.bin is a metadata snapshot of format version 1"},
		{"superblock only", map[string][]byte{"superblock.b": oldFile("SMSB", 128)}, "superblock.b is a metadata superblock of format version 1"},
		{"another version of the group WAL", map[string][]byte{"journal.wal": oldFile("SMVW", 4096)}, "journal.wal is a metadata journal of format version 1; this build reads version 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			meta := filepath.Join(dir, "metadata")
			if err := os.MkdirAll(meta, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(meta, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := fileTree(t, meta)
			_, err := newServerErr(t, dir)
			if err == nil {
				t.Fatal("a server booted over a metadata directory of an older format")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), meta) {
				t.Fatalf("boot error %q does not name the file and version (%q)", err, tc.want)
			}
			sameTree(t, "the refused metadata directory", fileTree(t, meta), before)
			t.Logf("refused: %v", err)
		})
	}
}

// TestFailedMetadataCheckpointRefusesWritesUntilRestart blocks the
// metadata group's first checkpoint on the real file system (a directory
// where snapshot.bin must be created) while streams are created in a
// 16-slot journal. The group stops at the storage failure: later metadata
// writes are answered 57 (TransientNotCommitted), never acknowledged
// without being durable. After a restart with the obstacle gone every
// acknowledged stream is there (the journal kept them: the failed
// checkpoint dropped nothing) and the checkpoint is taken.
func TestFailedMetadataCheckpointRefusesWritesUntilRestart(t *testing.T) {
	dir := t.TempDir()
	slots := "STRATA_METADATA_JOURNAL_SLOTS=16"
	ts := startServer(t, dir, slots)
	blocker := filepath.Join(dir, "metadata", "snapshot.bin")
	if err := os.MkdirAll(filepath.Join(blocker, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(ctx(t), ts.addr, client.WithTransientBackoff(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.LoginUser(ctx(t), "iggy", "iggy"); err != nil {
		t.Fatal(err)
	}
	acked, refused := 0, 0
	for i := 0; i < 32; i++ {
		_, err := c.CreateStream(ctx(t), "s"+strconv.Itoa(i))
		switch {
		case err == nil && refused == 0:
			acked++
		case err == nil:
			t.Fatalf("stream %d acknowledged after a refusal", i)
		case errors.Is(err, wire.ErrTransientNotCommitted):
			refused++
		default:
			t.Fatalf("create stream %d: %v", i, err)
		}
	}
	if refused == 0 {
		t.Fatal("32 streams into a 16-slot journal whose checkpoint cannot be written were all accepted")
	}
	ts.mustLog("metadata writes are refused until restart", "snapshot.bin")
	t.Logf("%d acknowledged, then %d refused", acked, refused)
	ts.stop()
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, dir, slots)
	c2 := ts.connect()
	streams, err := c2.GetStreams(ctx(t))
	if err != nil || len(streams) != acked {
		t.Fatalf("after the restart: %d streams, want the %d acknowledged (%v)", len(streams), acked, err)
	}
	for i := 0; i < 20; i++ {
		if _, err := c2.CreateStream(ctx(t), "after-"+strconv.Itoa(i)); err != nil {
			t.Fatalf("create stream %d after the restart: %v", i, err)
		}
	}
	if _, err := os.Stat(blocker); err != nil {
		t.Fatalf("no snapshot.bin after the restart: %v", err)
	}
}

// TestMetadataRequestLargerThanAPrepareIsRefused: a metadata request whose
// body does not fit a prepare of the metadata group (a user with
// permissions for 40,000 streams, about 440 KB) is answered 4022
// (TooBigMessagePayload), which a client does not retry, not 57 forever;
// the next request is served.
func TestMetadataRequestLargerThanAPrepareIsRefused(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	perms := &client.Permissions{}
	for i := 0; i < 40000; i++ {
		perms.Streams = append(perms.Streams, client.StreamPermissions{StreamID: uint32(i), ReadStream: true})
	}
	_, err := c.CreateUser(ctx(t), "huge", "secret1", client.UserActive, perms)
	if !errors.Is(err, wire.ErrTooBigMessagePayload) {
		t.Fatalf("a user of 40,000 stream permissions: %v, want 4022", err)
	}
	if _, err := c.CreateUser(ctx(t), "small", "secret1", client.UserActive, &client.Permissions{Streams: perms.Streams[:100]}); err != nil {
		t.Fatalf("the next request: %v", err)
	}
}

// TestChangedJournalSlotsAreRefused: the metadata WAL's layout follows
// metadata.journal_slots (a slot per op, op mod slots), so a data
// directory written with another value is refused at boot, naming the
// file and the setting, not misread.
func TestChangedJournalSlotsAreRefused(t *testing.T) {
	ts := startServer(t, t.TempDir())
	if _, err := ts.connect().CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	cfg, err := config.Load("", append([]string{"STRATA_SYSTEM_PATH=" + ts.dir, "STRATA_TCP_ADDRESS=127.0.0.1:0", "STRATA_METADATA_JOURNAL_SLOTS=64"}, engineEnv()...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Logger: zap.NewNop()})
	if err == nil {
		_ = srv.Shutdown(context.Background())
		t.Fatal("a server with journal_slots 64 booted on a journal of 1024 slots")
	}
	if !strings.Contains(err.Error(), filepath.Join(ts.dir, "metadata", "journal.wal")) || !strings.Contains(err.Error(), "journal_slots") {
		t.Fatalf("boot error does not name the file and the setting: %v", err)
	}
	if streams, err := startServer(t, ts.dir).connect().GetStreams(ctx(t)); err != nil || len(streams) != 1 {
		t.Fatalf("back with 1024 slots: %d streams, %v", len(streams), err)
	}
}

// TestTornWALCreationBootsFresh: a crash during the first boot's creation
// of journal.wal can leave its header sector as zeros (nothing else is
// written before that header is synced): the next boot starts fresh
// instead of refusing the directory; a header that is not zeros is
// refused.
func TestTornWALCreationBootsFresh(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "metadata")
	if err := os.MkdirAll(meta, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(meta, "journal.wal"), make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir)
	if _, err := ts.connect().CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	if streams, err := startServer(t, dir).connect().GetStreams(ctx(t)); err != nil || len(streams) != 1 {
		t.Fatalf("after the restart: %d streams, %v", len(streams), err)
	}

	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	garbage := make([]byte, 4096)
	copy(garbage, "not a metadata file")
	if err := os.WriteFile(filepath.Join(other, "metadata", "journal.wal"), garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := newServerErr(t, other); err == nil || !strings.Contains(err.Error(), "journal.wal") {
		t.Fatalf("a journal.wal of unknown bytes: %v", err)
	}
}
