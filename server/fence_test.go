package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage/storagetest"
)

// partitionDir is the directory of stream 0, topic 0, partition 0.
func partitionDir(dataDir string) string {
	return filepath.Join(dataDir, "streams", "0", "topics", "0", "partitions", "0")
}

// TestFencedPartitionServesItsVerifiedPrefix damages a batch in the
// middle of a real segment file, restarts the server, and checks over TCP
// that the partition serves every message before the damage, refuses
// polls that reach it and sends with error codes (not an empty reply),
// and shows as fenced in the log, GetStats, GetTopic and the metrics.
func TestFencedPartitionServesItsVerifiedPrefix(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	opts := client.Options{}.With(client.OptionSegmentSize, client.StringValue("1 MiB"))
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, opts); err != nil {
		t.Fatal(err)
	}
	const messages = 3000
	sent := sendAll(t, c, client.ID(0), client.ID(0), 1, messages, 1000, 100)[0]
	ts.stop()
	d, err := storagetest.DamageMiddleSegment(partitionDir(ts.dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("damaged %s at byte %d (offset %d)", d.File, d.Position, d.Offset)
	damaged, err := os.ReadFile(d.File)
	if err != nil {
		t.Fatal(err)
	}

	ts2 := startServer(t, ts.dir)
	c2 := ts2.connect()
	stream, topic := client.ID(0), client.ID(0)
	poll := func(strategy client.PollingStrategy, count uint32) (*client.PolledMessages, error) {
		return c2.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
			Stream: stream, Topic: topic, Partition: 0, Strategy: strategy, Count: count})
	}

	// The verified prefix is served, message for message.
	pollAll(t, c2, stream, topic, 0, sent[:d.Offset])
	// A poll that runs into the damage stops before it.
	tail, err := poll(client.PollOffset(d.Offset-5), 100)
	if err != nil {
		t.Fatalf("poll of the last 5 served messages: %v", err)
	}
	if len(tail.Messages) != 5 || tail.Messages[4].Offset != d.Offset-1 || tail.CurrentOffset != d.Offset-1 {
		t.Fatalf("poll across the damage: %d messages, current offset %d; want 5 up to %d",
			len(tail.Messages), tail.CurrentOffset, d.Offset-1)
	}
	if !bytes.Equal(tail.Messages[4].Payload, sent[d.Offset-1]) {
		t.Fatal("last served message differs from the one sent")
	}
	// Polls that reach the damage, and sends, are refused with a code.
	for name, strategy := range map[string]client.PollingStrategy{
		"offset at the damage": client.PollOffset(d.Offset), "offset past it": client.PollOffset(d.Offset + 10),
		"last": client.PollLast(),
	} {
		if res, err := poll(strategy, 10); !errors.Is(err, wire.ErrCannotReadMessage) {
			t.Errorf("poll %s: %v (%+v), want CannotReadMessage (4011)", name, err, res)
		}
	}
	consumer := client.IndividualConsumer(client.ID(7))
	if err := c2.StoreConsumerOffset(ctx(t), consumer, stream, topic, 0, d.Offset-1); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.PollMessages(ctx(t), client.PollRequest{Consumer: consumer, Stream: stream, Topic: topic,
		Partition: 0, Strategy: client.PollNext(), Count: 10}); !errors.Is(err, wire.ErrCannotReadMessage) {
		t.Errorf("poll next after the prefix: %v, want CannotReadMessage (4011)", err)
	}
	_, err = c2.SendMessages(ctx(t), stream, topic, client.PartitionID(0), []client.Message{{Payload: []byte("x")}})
	if !errors.Is(err, wire.ErrCannotAppendMessage) {
		t.Fatalf("send to a fenced partition: %v, want CannotAppendMessage (4010)", err)
	}

	// The log names the file, the byte and the reason.
	logs := ts2.logs.String()
	if !strings.Contains(logs, "partition fenced") || !strings.Contains(logs, d.File) ||
		!regexp.MustCompile(fmt.Sprintf(`"byte":\s*%d\b`, d.Position)).MatchString(logs) ||
		!strings.Contains(logs, `"reason"`) {
		t.Fatalf("the log does not report the fence with file, byte and reason:\n%s", logs)
	}
	// GetStats lists it (Strata's extension after total_disk_space).
	stats, err := c2.GetStats(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := client.FencedPartition{StreamID: 0, TopicID: 0, PartitionID: 0, ServedBelow: d.Offset,
		File: d.File, Position: uint64(d.Position)}
	if len(stats.FencedPartitions) != 1 {
		t.Fatalf("stats list %d fenced partitions, want 1: %+v", len(stats.FencedPartitions), stats.FencedPartitions)
	}
	got := stats.FencedPartitions[0]
	if got.Reason == "" {
		t.Error("fenced partition without a reason")
	}
	got.Reason = ""
	if got != want {
		t.Fatalf("stats fenced partition %+v, want %+v", got, want)
	}
	// GetTopic keeps Iggy's record and counts the prefix only.
	details, err := c2.GetTopic(ctx(t), stream, topic)
	if err != nil {
		t.Fatal(err)
	}
	if p := details.Partitions[0]; p.CurrentOffset != d.Offset-1 || p.MessagesCount != d.Offset {
		t.Fatalf("GetTopic partition %+v, want current offset %d and %d messages", p, d.Offset-1, d.Offset)
	}
	// The metric.
	if v := metricValues(t, ts2)["strata_partition_fenced,partition_id=0,stream_id=0,topic_id=0"]; v != 1 {
		t.Fatalf("strata_partition_fenced = %v, want 1", v)
	}
	// Nothing on disk was changed.
	if after, err := os.ReadFile(d.File); err != nil || !bytes.Equal(after, damaged) {
		t.Fatalf("the damaged segment was changed (%v)", err)
	}
}
