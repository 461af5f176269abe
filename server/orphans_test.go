package server_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// damageLastEntry damages the last op of the metadata journal of a
// stopped server's data dir (a journal of slots), after checking that it
// is the operation the test acknowledged last: a byte of its prepare and
// a byte of its slot's header record are flipped, so that the journal
// holds no valid record of it, as if the crash had torn both writes. The
// boot then ends the log before it and the metadata forgets the
// operation. (A prepare whose header record survives is corruption of
// what may have been acknowledged: the boot refuses it,
// TestCorruptMetadataJournalEntryStopsTheServer.)
func damageLastEntry(t *testing.T, dir string, slots uint32, want wire.Operation) {
	t.Helper()
	_, entries, err := server.MetaJournalForTest(filepath.Join(dir, "metadata"), slots)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("the metadata journal holds no op above its checkpoint")
	}
	last := entries[len(entries)-1]
	if last.Operation != want {
		t.Fatalf("last journal op %d is operation %d, want %d", last.Op, last.Operation, want)
	}
	p := filepath.Join(dir, "metadata", "journal.wal")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[last.PrepareAt+300] ^= 0x5A
	data[last.HeaderAt+100] ^= 0x5A
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileTree maps every file under root (relative, slash-separated) to its
// contents, and every directory to nil.
func fileTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	tree := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		if d.IsDir() {
			tree[filepath.ToSlash(rel)] = nil
			return nil
		}
		data, err := os.ReadFile(p)
		tree[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// sameTree fails unless the two trees hold the same paths and contents.
func sameTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	var names []string
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data, ok := got[name]
		if !ok {
			t.Fatalf("%s: %s is missing", what, name)
		}
		if !bytes.Equal(data, want[name]) {
			t.Fatalf("%s: %s changed (%d bytes, had %d)", what, name, len(data), len(want[name]))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, had %d", what, len(got), len(want))
	}
}

// orphanOf returns the one directory under streams/.orphaned whose name
// starts with prefix, and checks the server log names it.
func orphanOf(t *testing.T, ts *testServer, prefix string) string {
	t.Helper()
	root := filepath.Join(ts.dir, "streams", ".orphaned")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("no orphaned directory: %v", err)
	}
	var found []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			found = append(found, filepath.Join(root, e.Name()))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d directories named %s* under %s: %v", len(found), prefix, root, found)
	}
	ts.mustLog("moved aside, not deleted", found[0])
	return found[0]
}

// TestDamagedCreateStreamMovesTheStreamAside damages the last journal
// entry, an acknowledged CreateStream: the metadata forgets the stream,
// and its directory is moved under streams/.orphaned (the log says where),
// not deleted. The rest serves, and the stream id can be used again.
func TestDamagedCreateStreamMovesTheStreamAside(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "kept"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	sent := sendAll(t, c, client.ID(0), client.ID(0), 1, 30, 100, 10)
	if _, err := c.CreateStream(ctx(t), "lost"); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	before := fileTree(t, filepath.Join(ts.dir, "streams", "1"))
	damageLastEntry(t, ts.dir, 1024, wire.OpCreateStream)

	ts = startServer(t, ts.dir)

	orphan := orphanOf(t, ts, "stream-1.")
	sameTree(t, "the moved stream directory", fileTree(t, orphan), before)
	if _, err := os.Stat(filepath.Join(ts.dir, "streams", "1")); !os.IsNotExist(err) {
		t.Fatalf("streams/1 still there: %v", err)
	}
	c = ts.connect()
	pollAll(t, c, client.ID(0), client.ID(0), 0, sent[0])
	s, err := c.CreateStream(ctx(t), "again")
	if err != nil || s.ID != 1 {
		t.Fatalf("new stream %+v %v", s, err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(1), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	sendAll(t, c, client.ID(1), client.ID(0), 1, 5, 10, 5)
}

// TestDamagedCreateTopicMovesTheTopicAside damages the last journal
// entry, an acknowledged CreateTopic whose partitions then received
// acknowledged messages: the topic directory, every segment, index,
// superblock and offset file in it, is moved aside byte for byte.
func TestDamagedCreateTopicMovesTheTopicAside(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 2, nil); err != nil {
		t.Fatal(err)
	}
	sendAll(t, c, client.ID(0), client.ID(0), 2, 50, 200, 10)
	if err := c.StoreConsumerOffset(ctx(t), client.IndividualConsumer(client.ID(7)), client.ID(0), client.ID(0), 0, 10); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	before := fileTree(t, filepath.Join(ts.dir, "streams", "0", "topics", "0"))
	damageLastEntry(t, ts.dir, 1024, wire.OpCreateTopic)

	ts = startServer(t, ts.dir)
	orphan := orphanOf(t, ts, "topic-0-0.")
	sameTree(t, "the moved topic directory", fileTree(t, orphan), before)
	t.Logf("moved aside: %s, %d entries", orphan, len(before))
	c = ts.connect()
	stream, err := c.GetStream(ctx(t), client.ID(0))
	if err != nil || len(stream.Topics) != 0 {
		t.Fatalf("stream after the boot: %+v %v", stream, err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	sendAll(t, c, client.ID(0), client.ID(0), 1, 5, 10, 5)
}

// TestDamagedCreatePartitionsMovesThePartitionsAside: the same for the
// partitions an acknowledged CreatePartitions (the damaged last entry)
// added and that then received messages; the topic's first partition is
// untouched and serves.
func TestDamagedCreatePartitionsMovesThePartitionsAside(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePartitions(ctx(t), client.ID(0), client.ID(0), 2); err != nil {
		t.Fatal(err)
	}
	sent := sendAll(t, c, client.ID(0), client.ID(0), 3, 20, 100, 10)
	ts.stop()
	partitions := filepath.Join(ts.dir, "streams", "0", "topics", "0", "partitions")
	before := map[string]map[string][]byte{}
	for _, p := range []string{"1", "2"} {
		before[p] = fileTree(t, filepath.Join(partitions, p))
	}
	damageLastEntry(t, ts.dir, 1024, wire.OpCreatePartitions)

	ts = startServer(t, ts.dir)
	for _, p := range []string{"1", "2"} {
		orphan := orphanOf(t, ts, "partition-0-0-"+p+".")
		sameTree(t, "moved partition "+p, fileTree(t, orphan), before[p])
	}
	c = ts.connect()
	pollAll(t, c, client.ID(0), client.ID(0), 0, sent[0])
	topic, err := c.GetTopic(ctx(t), client.ID(0), client.ID(0))
	if err != nil || len(topic.Partitions) != 1 {
		t.Fatalf("topic after the boot: %+v %v", topic, err)
	}
}

// TestDamagedTopicOfARecreatedStreamIsMovedAside: stream 0 is deleted and
// created again (same id), then a topic of the new stream (the damaged
// last entry) receives messages. The replayed deletion of stream 0 must
// not be taken for the deletion of the new topic: its partitions were
// created after it, so the topic directory is moved aside.
func TestDamagedTopicOfARecreatedStreamIsMovedAside(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "old"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteStream(ctx(t), client.ID(0)); err != nil {
		t.Fatal(err)
	}
	if s, err := c.CreateStream(ctx(t), "new"); err != nil || s.ID != 0 {
		t.Fatalf("recreated stream %+v %v", s, err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	sendAll(t, c, client.ID(0), client.ID(0), 1, 20, 100, 10)
	ts.stop()
	before := fileTree(t, filepath.Join(ts.dir, "streams", "0", "topics", "0"))
	damageLastEntry(t, ts.dir, 1024, wire.OpCreateTopic)

	ts = startServer(t, ts.dir)
	sameTree(t, "the moved topic directory", fileTree(t, orphanOf(t, ts, "topic-0-0.")), before)
}

// TestCommittedDeletionIsFinishedAtBoot: a stream whose DeleteStream was
// committed but whose directory is still on disk (the crash came between
// the journal and the removal; reproduced by putting the directory back)
// is removed at boot, not moved aside: the journal accounts for it.
func TestCommittedDeletionIsFinishedAtBoot(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 2, nil); err != nil {
		t.Fatal(err)
	}
	sendAll(t, c, client.ID(0), client.ID(0), 2, 10, 100, 10)
	ts.stop()
	streamDir := filepath.Join(ts.dir, "streams", "0")
	saved := filepath.Join(t.TempDir(), "saved")
	if err := os.CopyFS(saved, os.DirFS(streamDir)); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, ts.dir)
	if err := ts.connect().DeleteStream(ctx(t), client.ID(0)); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	if err := os.CopyFS(streamDir, os.DirFS(saved)); err != nil {
		t.Fatal(err)
	}

	ts = startServer(t, ts.dir)
	ts.mustLog("removing the directory of a deleted stream")
	if _, err := os.Stat(streamDir); !os.IsNotExist(err) {
		t.Fatalf("the deleted stream's directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ts.dir, "streams", ".orphaned")); !os.IsNotExist(err) {
		t.Fatalf("a committed deletion was moved aside: %v", err)
	}
}

// replaceDir replaces dir with a copy of from.
func replaceDir(t *testing.T, dir, from string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// journalOperations lists the operations of the ops a data dir's
// metadata journal (of slots) holds above its checkpoint: the ops a boot
// replays.
func journalOperations(t *testing.T, dir string, slots uint32) map[wire.Operation]int {
	t.Helper()
	_, entries, err := server.MetaJournalForTest(filepath.Join(dir, "metadata"), slots)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[wire.Operation]int{}
	for _, e := range entries {
		ops[e.Operation]++
	}
	return ops
}

// TestOlderPartitionDirectoryWithTheSameIDs puts the directory of an
// older partition back where the metadata's partition with the same ids
// lives (topic deleted and created again). With the deletion in the
// replayed journal, the boot wipes it (finishing the committed deletion);
// once a checkpoint has absorbed the deletion, nothing accounts for the
// directory any more and it is moved aside, not deleted.
func TestOlderPartitionDirectoryWithTheSameIDs(t *testing.T) {
	for _, checkpointed := range []bool{false, true} {
		name := "deletion replayed"
		if checkpointed {
			name = "deletion checkpointed"
		}
		t.Run(name, func(t *testing.T) {
			ts := startServer(t, t.TempDir(), "STRATA_METADATA_JOURNAL_SLOTS=16")
			c := ts.connect()
			if _, err := c.CreateStream(ctx(t), "s"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
				t.Fatal(err)
			}
			sendAll(t, c, client.ID(0), client.ID(0), 1, 20, 100, 10)
			partition := filepath.Join(ts.dir, "streams", "0", "topics", "0", "partitions", "0")
			ts.stop()
			saved := filepath.Join(t.TempDir(), "saved")
			if err := os.CopyFS(saved, os.DirFS(partition)); err != nil {
				t.Fatal(err)
			}
			old := fileTree(t, saved)
			ts = startServer(t, ts.dir, "STRATA_METADATA_JOURNAL_SLOTS=16")
			c = ts.connect()
			if err := c.DeleteTopic(ctx(t), client.ID(0), client.ID(0)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
				t.Fatal(err)
			}
			if checkpointed {
				for i := 0; i < 16; i++ {
					if _, err := c.CreateStream(ctx(t), "filler-"+strconv.Itoa(i)); err != nil {
						t.Fatal(err)
					}
				}
			}
			ts.stop()
			if replayed := journalOperations(t, ts.dir, 16)[wire.OpDeleteTopic] > 0; replayed == checkpointed {
				t.Fatalf("DeleteTopic in the journal: %v, want %v", replayed, !checkpointed)
			}
			replaceDir(t, partition, saved)

			ts = startServer(t, ts.dir, "STRATA_METADATA_JOURNAL_SLOTS=16")
			if checkpointed {
				sameTree(t, "the moved partition", fileTree(t, orphanOf(t, ts, "partition-0-0-0.")), old)
			} else {
				ts.mustLog("removing the directory of a deleted partition")
				if _, err := os.Stat(filepath.Join(ts.dir, "streams", ".orphaned")); !os.IsNotExist(err) {
					t.Fatalf("a committed deletion was moved aside: %v", err)
				}
			}
			// Either way the metadata's partition starts empty and works.
			c = ts.connect()
			sent := sendAll(t, c, client.ID(0), client.ID(0), 1, 5, 10, 5)
			pollAll(t, c, client.ID(0), client.ID(0), 0, sent[0])
		})
	}
}
