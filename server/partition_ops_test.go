package server_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
)

// segmentFiles returns the sizes of the `.log` files of a partition
// directory, by name.
func segmentFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".log" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.Size()
	}
	return out
}

// partitionRecord returns partition p of topic 0 of stream 0.
func partitionRecord(t *testing.T, c *client.Client, p int) client.Partition {
	t.Helper()
	topic, err := c.GetTopic(ctx(t), client.ID(0), client.ID(0))
	if err != nil {
		t.Fatal(err)
	}
	return topic.Partitions[p]
}

// TestDeleteSegmentsForgetsTheirMessages: DeleteSegments over TCP removes
// the oldest sealed segment files and the partition's counters lose
// exactly what they held, the same before and after a restart; offsets go
// on from where they were.
func TestDeleteSegmentsForgetsTheirMessages(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	opts := client.Options{}.With(client.OptionSegmentSize, client.StringValue("1 MiB"))
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, opts); err != nil {
		t.Fatal(err)
	}
	const messages = 4000
	sent := sendAll(t, c, client.ID(0), client.ID(0), 1, messages, 1000, 100)[0]
	dir := partitionDir(ts.dir)
	before := partitionRecord(t, c, 0)
	files := segmentFiles(t, dir)
	if before.SegmentsCount < 4 || before.MessagesCount != messages || int(before.SegmentsCount) != len(files) {
		t.Fatalf("before: %+v, %d files", before, len(files))
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	deletedBytes := files[names[0]] + files[names[1]]

	if err := c.DeleteSegments(ctx(t), client.ID(0), client.ID(0), 0, 2); err != nil {
		t.Fatal(err)
	}
	after := segmentFiles(t, dir)
	if len(after) != len(files)-2 || after[names[0]] != 0 || after[names[1]] != 0 {
		t.Fatalf("files after deleting 2 segments: %v (were %v)", after, files)
	}
	first, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollFirst(), Count: 1})
	if err != nil || len(first.Messages) != 1 {
		t.Fatalf("first message after the deletion: %+v %v", first, err)
	}
	firstKept := first.Messages[0].Offset
	if start, err := strconv.ParseUint(strings.TrimSuffix(names[2], ".log"), 10, 64); err != nil || start != firstKept {
		t.Fatalf("first message kept at %d, the third segment is %s", firstKept, names[2])
	}
	check := func(when string, got client.Partition) {
		t.Helper()
		if got.SegmentsCount != before.SegmentsCount-2 || got.MessagesCount != messages-firstKept ||
			got.SizeBytes != before.SizeBytes-uint64(deletedBytes) || got.CurrentOffset != messages-1 {
			t.Fatalf("%s: %+v; before %+v, %d messages and %d bytes deleted", when, got, before, firstKept, deletedBytes)
		}
	}
	check("after the deletion", partitionRecord(t, c, 0))
	ts.stop()

	ts2 := startServer(t, ts.dir)
	c2 := ts2.connect()
	check("after a restart", partitionRecord(t, c2, 0))
	conf, err := c2.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("next")}})
	if err != nil || conf[0].BaseOffset != messages {
		t.Fatalf("send after the deletion: %+v %v", conf, err)
	}
	polled, err := c2.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(firstKept), Count: 1})
	if err != nil || len(polled.Messages) != 1 || !bytes.Equal(polled.Messages[0].Payload, sent[firstKept]) {
		t.Fatalf("first kept message after the restart: %+v %v", polled, err)
	}
}

// TestPurgeEmptiesThePartitionOnce: PurgeTopic over TCP empties every
// partition (messages, consumer offsets, segment files); messages sent
// after it survive a restart, which does not purge again.
func TestPurgeEmptiesThePartitionOnce(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	opts := client.Options{}.With(client.OptionSegmentSize, client.StringValue("1 MiB"))
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 2, opts); err != nil {
		t.Fatal(err)
	}
	sendAll(t, c, client.ID(0), client.ID(0), 2, 1500, 1000, 100)
	consumer := client.IndividualConsumer(client.ID(7))
	for p := uint32(0); p < 2; p++ {
		if err := c.StoreConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), p, 100); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.PurgeTopic(ctx(t), client.ID(0), client.ID(0)); err != nil {
		t.Fatal(err)
	}
	for p := 0; p < 2; p++ {
		if got := partitionRecord(t, c, p); got.MessagesCount != 0 || got.SizeBytes != 0 || got.CurrentOffset != 0 || got.SegmentsCount != 1 {
			t.Fatalf("partition %d after the purge: %+v", p, got)
		}
		if _, err := c.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), uint32(p)); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("partition %d offset after the purge: %v", p, err)
		}
		dir := filepath.Join(ts.dir, "streams", "0", "topics", "0", "partitions", strconv.Itoa(p))
		if files := segmentFiles(t, dir); len(files) != 1 || files["00000000000000000000.log"] != 0 {
			t.Fatalf("partition %d files after the purge: %v", p, files)
		}
	}
	after := sendAll(t, c, client.ID(0), client.ID(0), 2, 5, 10, 5)
	ts.stop()

	ts2 := startServer(t, ts.dir)
	c2 := ts2.connect()
	for p := 0; p < 2; p++ {
		pollAll(t, c2, client.ID(0), client.ID(0), uint32(p), after[p])
		if _, err := c2.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), uint32(p)); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("partition %d offset after the restart: %v", p, err)
		}
	}
}

// TestAutoCommitSurvivesRestart: a poll's auto-commit is an offset
// operation like a store: GetConsumerOffset sees it at once, and after a
// restart the consumer's next poll starts after it.
func TestAutoCommitSurvivesRestart(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, client.Options{}); err != nil {
		t.Fatal(err)
	}
	sent := sendAll(t, c, client.ID(0), client.ID(0), 1, 10, 20, 10)[0]
	consumer := client.IndividualConsumer(client.Named("reader"))
	poll := func(c *client.Client, count uint32) *client.PolledMessages {
		t.Helper()
		polled, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: consumer, Stream: client.ID(0), Topic: client.ID(0),
			Partition: 0, Strategy: client.PollNext(), Count: count, AutoCommit: true})
		if err != nil {
			t.Fatal(err)
		}
		return polled
	}
	if got := poll(c, 4); len(got.Messages) != 4 || got.Messages[3].Offset != 3 {
		t.Fatalf("first poll: %+v", got)
	}
	if offset, err := c.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0); err != nil || offset.StoredOffset != 3 {
		t.Fatalf("offset after the auto-commit: %+v %v", offset, err)
	}
	ts.stop()

	ts2 := startServer(t, ts.dir)
	c2 := ts2.connect()
	if offset, err := c2.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0); err != nil || offset.StoredOffset != 3 {
		t.Fatalf("offset after the restart: %+v %v", offset, err)
	}
	got := poll(c2, 100)
	if len(got.Messages) != 6 || got.Messages[0].Offset != 4 || !bytes.Equal(got.Messages[0].Payload, sent[4]) {
		t.Fatalf("poll after the restart: %+v", got)
	}
}

// TestPartitionOperationsReplayToTheSameCheckpoint: every change a
// workload over TCP makes to a partition (sends to replicated and
// persisted topics, polls with auto-commit, offset stores and deletes, a
// consumer group's deletion, a deletion of segments, a purge) is an
// operation: replaying the operations each partition applied into a fresh
// machine gives a byte-identical checkpoint.
func TestPartitionOperationsReplayToTheSameCheckpoint(t *testing.T) {
	ts := startServer(t, t.TempDir())
	ops := server.RecordPartitionOpsForTest(ts.srv)
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	replicated := client.Options{}.With(client.OptionSegmentSize, client.StringValue("1 MiB")).
		With(client.OptionMessagesRequiredToSave, client.Uint32Value(300))
	persisted := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	if _, err := c.CreateTopic(ctx(t), client.Named("s"), "replicated", 2, replicated); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.Named("s"), "persisted", 2, persisted); err != nil {
		t.Fatal(err)
	}
	stream := client.Named("s")
	topics := []client.Identifier{client.Named("replicated"), client.Named("persisted")}
	consumer, reader := client.IndividualConsumer(client.ID(3)), client.IndividualConsumer(client.Named("reader"))
	for _, topic := range topics {
		sendAll(t, c, stream, topic, 2, 2500, 1000, 100)
		if _, err := c.CreateConsumerGroup(ctx(t), stream, topic, "g"); err != nil {
			t.Fatal(err)
		}
		if err := c.JoinConsumerGroup(ctx(t), stream, topic, client.Named("g")); err != nil {
			t.Fatal(err)
		}
		for p := uint32(0); p < 2; p++ {
			for _, who := range []client.Consumer{consumer, reader, client.GroupConsumer(client.Named("g"))} {
				if _, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: who, Stream: stream, Topic: topic,
					Partition: p, Strategy: client.PollNext(), Count: 10, AutoCommit: true}); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.StoreConsumerOffset(ctx(t), consumer, stream, topic, p, 5); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.DeleteConsumerOffset(ctx(t), consumer, stream, topic, 1); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteConsumerGroup(ctx(t), stream, topic, client.Named("g")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeleteSegments(ctx(t), stream, topics[0], 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.PurgeTopic(ctx(t), stream, topics[1]); err != nil {
		t.Fatal(err)
	}
	for _, topic := range topics {
		for p := uint32(0); p < 2; p++ {
			if _, err := c.SendMessages(ctx(t), stream, topic, client.PartitionID(p), []client.Message{{Payload: []byte("after")}}); err != nil {
				t.Fatal(err)
			}
		}
	}

	seen := map[uint8]bool{}
	for topicID := uint32(0); topicID < 2; topicID++ {
		for p := uint32(0); p < 2; p++ {
			live, replayed, applied, err := ops.ReplayForTest(ts.srv, 0, topicID, p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(live, replayed) {
				t.Fatalf("topic %d partition %d: the replay of %d operations %v gives another checkpoint", topicID, p, len(applied), applied)
			}
			for _, operation := range applied {
				seen[operation] = true
			}
			t.Logf("topic %d partition %d: %d operations replayed, checkpoint %d bytes", topicID, p, len(applied), len(live))
		}
	}
	// 160 send, 161 store (and auto-commit), 162 delete, 177 purge, 178
	// delete segments (176, a threshold change, no topic update makes).
	for _, operation := range []uint8{160, 161, 162, 177, 178} {
		if !seen[operation] {
			t.Fatalf("no partition applied operation %d: %v", operation, seen)
		}
	}
}
