package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage"
)

// partitionDir is partition p of topic 0 in stream 0.
func partitionDir(dataDir string, p int) string {
	return filepath.Join(dataDir, "streams", "0", "topics", "0", "partitions", strconv.Itoa(p))
}

// skippedLine is the recovery log line that says how many offsets a
// partition skipped.
var skippedLine = regexp.MustCompile(`"offsets_skipped": (\d+)`)

// TestKill9OnReplicatedTopicNeverReusesOffsets sends to a replicated
// topic, kills the server with SIGKILL while its last messages are still
// unflushed (they are lost, as the durability allows), restarts it and
// sends again: no offset may then hold another message than the one
// acknowledged for it, and a consumer whose stored offset is a lost one
// continues at the next stored message.
func TestKill9OnReplicatedTopicNeverReusesOffsets(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, dir)
	c := dialRoot(t, p.addr)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	acked := map[uint64]string{} // offset -> the payload acknowledged for it
	reused := 0
	send := func(c *client.Client, round, batches int) (first uint64) {
		t.Helper()
		for b := 0; b < batches; b++ {
			msgs := make([]client.Message, 7)
			for i := range msgs {
				msgs[i].Payload = []byte(fmt.Sprintf("round %d batch %d message %d", round, b, i))
			}
			conf, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(0), msgs)
			if err != nil {
				t.Fatalf("round %d send %d: %v", round, b, err)
			}
			if b == 0 {
				first = conf[0].BaseOffset
			}
			for i, m := range msgs {
				offset := conf[0].BaseOffset + uint64(i)
				if before, ok := acked[offset]; ok && before != string(m.Payload) {
					reused++
				}
				acked[offset] = string(m.Payload)
			}
		}
		return first
	}
	// 300 batches of 7: flushes at the 1024-message threshold (1029 and
	// 2058 messages) leave 42 acknowledged messages unflushed.
	send(c, 1, 300)
	p.kill9(t)

	p2 := startProcess(t, dir)
	c2 := dialRoot(t, p2.addr)
	second := send(c2, 2, 50)
	if reused > 0 {
		t.Fatalf("%d offsets acknowledged before the kill were given to other messages after it", reused)
	}
	skipped, err := strconv.ParseUint(p2.waitFor(t, skippedLine)[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}

	stored := map[uint64]string{}
	for next := uint64(0); ; {
		res, err := c2.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(0)),
			Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(next), Count: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) == 0 {
			break
		}
		for _, m := range res.Messages {
			if m.Offset < next {
				t.Fatalf("poll from %d returned offset %d", next, m.Offset)
			}
			stored[m.Offset] = string(m.Payload)
			next = m.Offset + 1
		}
	}
	lost := 0
	var firstLost uint64
	for offset, payload := range acked {
		got, ok := stored[offset]
		switch {
		case !ok && offset < second:
			if lost == 0 || offset < firstLost {
				firstLost = offset
			}
			lost++
		case !ok:
			t.Fatalf("offset %d acknowledged after the restart is missing", offset)
		case got != payload:
			t.Fatalf("offset %d holds %q, acknowledged %q", offset, got, payload)
		}
	}
	if lost == 0 {
		t.Fatal("the kill lost nothing: the test did not exercise a lost tail")
	}
	if second < firstLost+uint64(lost) || skipped < uint64(lost) {
		t.Fatalf("after the restart the first offset is %d (%d skipped) but offsets %d.. were lost", second, skipped, firstLost)
	}
	// A consumer that stored a lost offset continues at the next stored
	// message.
	if err := c2.StoreConsumerOffset(ctx, client.IndividualConsumer(client.ID(7)), client.ID(0), client.ID(0), 0, firstLost); err != nil {
		t.Fatal(err)
	}
	res, err := c2.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(7)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollNext(), Count: 3, AutoCommit: true})
	if err != nil || len(res.Messages) != 3 || res.Messages[0].Offset != second || res.Messages[2].Offset != second+2 {
		t.Fatalf("poll across the skipped offsets: %+v %v", res.Messages, err)
	}
	res, err = c2.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(7)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollNext(), Count: 1})
	if err != nil || len(res.Messages) != 1 || res.Messages[0].Offset != second+3 {
		t.Fatalf("auto-commit after the skipped offsets: %+v %v", res.Messages, err)
	}
	t.Logf("kill -9: %d acknowledged messages lost with the unflushed tail (offsets %d..), %d offsets skipped at recovery, next message at %d, 0 reused",
		lost, firstLost, skipped, second)
	p2.terminate(t)
}

// superblockFrontier returns the highest durable offset a valid copy of
// the partition superblock in dir records.
func superblockFrontier(dir string) uint64 {
	var frontier uint64
	for _, name := range []string{"superblock.a", "superblock.b"} {
		image, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if _, err := storage.DecodePartitionSuperblock(image); err == nil {
			frontier = max(frontier, binary.LittleEndian.Uint64(image[32:])) // field 2
		}
	}
	return frontier
}

// TestKill9BitFlipInAcknowledgedPersistedBatchFences is the case
// with a crash instead of a graceful stop: once the partition superblock
// records the last acknowledged batch of a persisted topic as durable
// (the server does so in the background as soon as the partition's syncs
// go idle), a bit flip inside that batch after a kill -9 fences the
// partition and its 10 messages stay in the file.
func TestKill9BitFlipInAcknowledgedPersistedBatchFences(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, dir)
	c := dialRoot(t, p.addr)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	opts := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	if _, err := c.CreateTopic(ctx, client.ID(0), "t", 1, opts); err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 5; b++ {
		msgs := make([]client.Message, 10)
		for i := range msgs {
			msgs[i].Payload = []byte(fmt.Sprintf("batch %d message %d, acknowledged once durable", b, i))
		}
		if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(0), msgs); err != nil {
			t.Fatal(err)
		}
	}
	part := partitionDir(dir, 0)
	deadline := time.Now().Add(20 * time.Second)
	for superblockFrontier(part) < 50 {
		if time.Now().After(deadline) {
			t.Fatalf("the partition superblock never recorded the acknowledged messages as durable (frontier %d)", superblockFrontier(part))
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.kill9(t)
	logPath := filepath.Join(part, "00000000000000000000.log")
	image, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	last := 0
	for pos := 0; pos+wire.BatchHeaderSize <= len(image); pos += int(wire.BatchView(image[pos:]).BatchLength()) {
		last = pos
	}
	image[last+wire.BatchHeaderSize+60] ^= 0x02
	if err := os.WriteFile(logPath, image, 0o644); err != nil {
		t.Fatal(err)
	}

	p2 := startProcess(t, dir)
	after, err := os.ReadFile(logPath)
	if err != nil || !bytes.Equal(after, image) {
		t.Fatalf("recovery changed the damaged segment: %d bytes, was %d (%v)", len(after), len(image), err)
	}
	p2.waitFor(t, regexp.MustCompile(`partition fenced`))
	c2 := dialRoot(t, p2.addr)
	if _, err := c2.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("x")}}); err == nil {
		t.Fatal("a fenced partition accepted a send")
	}
	p2.terminate(t)
}

// TestKill9FreshPartitionSurvivesOneDamagedSuperblock: a partition
// created and then killed has both superblock copies, so damaging one
// leaves the broker starting and the partition serving.
func TestKill9FreshPartitionSurvivesOneDamagedSuperblock(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, dir)
	c := dialRoot(t, p.addr)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	p.kill9(t)
	sbPath := filepath.Join(partitionDir(dir, 0), "superblock.a")
	image, err := os.ReadFile(sbPath)
	if err != nil {
		t.Fatal(err)
	}
	image[17] ^= 0x80
	if err := os.WriteFile(sbPath, image, 0o644); err != nil {
		t.Fatal(err)
	}
	p2 := startProcess(t, dir) // before the fix: no valid copy, the broker refused to start
	c2 := dialRoot(t, p2.addr)
	conf, err := c2.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("hello")}})
	if err != nil || conf[0].BaseOffset != 0 {
		t.Fatalf("send: %+v %v", conf, err)
	}
	res, err := c2.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(0)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(0), Count: 10})
	if err != nil || len(res.Messages) != 1 || string(res.Messages[0].Payload) != "hello" {
		t.Fatalf("poll: %+v %v", res, err)
	}
	p2.terminate(t)
}
