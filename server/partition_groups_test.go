package server_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
)

// consensusGroup is the consensus group of partition p of stream 0
// topic 0 on a running server.
func consensusGroup(t *testing.T, ts *testServer, p uint32) uint64 {
	t.Helper()
	st, ok := ts.srv.PartitionReplicaStatus(0, 0, p)
	if !ok {
		t.Fatalf("no partition %d", p)
	}
	return st.Group
}

// TestRecreatedTopicGetsNewConsensusGroups: on a single node too, a topic
// deleted and created again has the same ids and new consensus groups,
// which a restart keeps (they come from the metadata), and it serves
// only what was sent to it.
func TestRecreatedTopicGetsNewConsensusGroups(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 2, nil); err != nil {
		t.Fatal(err)
	}
	old := []uint64{consensusGroup(t, ts, 0), consensusGroup(t, ts, 1)}
	if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("old")}}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTopic(ctx(t), client.ID(0), client.ID(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 2, nil); err != nil {
		t.Fatal(err)
	}
	recreated := []uint64{consensusGroup(t, ts, 0), consensusGroup(t, ts, 1)}
	for _, g := range recreated {
		if g == old[0] || g == old[1] || recreated[0] == recreated[1] {
			t.Fatalf("groups %v before the re-create, %v after", old, recreated)
		}
	}
	if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	ts.stop()

	ts = startServer(t, dir)
	if got := []uint64{consensusGroup(t, ts, 0), consensusGroup(t, ts, 1)}; got[0] != recreated[0] || got[1] != recreated[1] {
		t.Fatalf("groups %v after the restart, %v before", got, recreated)
	}
	c = ts.connect()
	polled, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(0), Count: 10})
	if err != nil || len(polled.Messages) != 1 || string(polled.Messages[0].Payload) != "new" {
		t.Fatalf("poll after the restart: %+v %v", polled, err)
	}
}

// TestConsensusFileOfAnotherGroupRefusedAtBoot: consensus.vsr names its
// consensus group; a partition directory whose file is another group's
// (here partition 1's, copied over partition 0's) is refused at boot with
// an error naming the file and both groups, and nothing is changed: the
// file is never adopted as the partition's consensus state.
func TestConsensusFileOfAnotherGroupRefusedAtBoot(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 2, nil); err != nil {
		t.Fatal(err)
	}
	g0, g1 := consensusGroup(t, ts, 0), consensusGroup(t, ts, 1)
	ts.stop()
	other, err := os.ReadFile(filepath.Join(partitionPath(dir, 0, 0, 1), "consensus.vsr"))
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(partitionPath(dir, 0, 0, 0), "consensus.vsr")
	if err := os.WriteFile(name, other, 0o644); err != nil {
		t.Fatal(err)
	}
	if g, err := server.ConsensusFileGroup(partitionPath(dir, 0, 0, 0)); err != nil || g != g1 {
		t.Fatalf("the copied file names group %d (%v), want %d", g, err, g1)
	}
	_, err = newServerErr(t, dir)
	if err == nil {
		t.Fatal("a partition with another group's consensus file was opened")
	}
	for _, want := range []string{name, "of another group", "consensus group " + strconv.FormatUint(g1, 10), "partition's group is " + strconv.FormatUint(g0, 10)} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("boot error %q does not say %q", err, want)
		}
	}
	if after, err := os.ReadFile(name); err != nil || !bytes.Equal(after, other) {
		t.Fatalf("the refused consensus file was changed (%v)", err)
	}
}

// TestBootTombstonesSlotsOfDeletedPartitions: a deleted partition whose
// superblock slot stayed allocated (a crash after the deletion committed,
// before its tombstone) never gets it back, since its group id never
// comes again: the next boot tombstones it, and keeps every live group's.
func TestBootTombstonesSlotsOfDeletedPartitions(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "a", 2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "b", 1, nil); err != nil {
		t.Fatal(err)
	}
	deleted := []uint64{consensusGroup(t, ts, 0), consensusGroup(t, ts, 1)}
	st, _ := ts.srv.PartitionReplicaStatus(0, 1, 0)
	live := st.Group
	ts.stop()
	sbFile := server.SuperblockFile(dir)
	before, err := os.ReadFile(sbFile)
	if err != nil {
		t.Fatal(err)
	}

	ts = startServer(t, dir)
	if err := ts.connect().DeleteTopic(ctx(t), client.ID(0), client.Named("a")); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	slotted := func(image []byte, g uint64) bool {
		_, _, ok := server.SuperblockZoneAt(image, g)
		return ok
	}
	image, err := os.ReadFile(sbFile)
	if err != nil {
		t.Fatal(err)
	}
	if slotted(image, deleted[0]) || slotted(image, deleted[1]) || !slotted(image, live) {
		t.Fatal("the deletion did not tombstone its slots")
	}
	// The file as it was before the deletion: its tombstones were never
	// written.
	if err := os.WriteFile(sbFile, before, 0o644); err != nil {
		t.Fatal(err)
	}

	ts = startServer(t, dir)
	ts.mustLog("tombstoned the superblock slots of deleted partitions")
	if _, err := ts.connect().SendMessages(ctx(t), client.ID(0), client.Named("b"), client.PartitionID(0), []client.Message{{Payload: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	image, err = os.ReadFile(sbFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range deleted {
		if slotted(image, g) {
			t.Fatalf("deleted group %d still has a slot after the boot", g)
		}
	}
	if !slotted(image, live) {
		t.Fatalf("the live group %d lost its slot", live)
	}
}
