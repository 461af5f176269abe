package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// vsrCheckpointed reports whether a partition's consensus.vsr holds a
// checkpoint: the file reaches past its header sector into a checkpoint
// area (its superblock copies are in the node's consensus/superblocks.sb).
func vsrCheckpointed(partition string) bool {
	info, err := os.Stat(filepath.Join(partition, "consensus.vsr"))
	return err == nil && info.Size() > 4096
}

// segmentMessages counts the messages the segment logs of a partition
// hold (what was flushed).
func segmentMessages(t *testing.T, partition string) uint64 {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(partition, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, name := range logs {
		image, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for pos := 0; pos+wire.BatchHeaderSize <= len(image); {
			v := wire.BatchView(image[pos:])
			if v.BatchLength() < wire.BatchHeaderSize {
				break // preallocated zeros
			}
			n += uint64(v.MessageCount())
			pos += int(v.BatchLength())
		}
	}
	return n
}

// TestKill9OnVSRKeepsFlushedAndAcknowledged: the partitions run on their
// consensus groups (a group of one); the test kills the server with SIGKILL
// after the groups checkpointed: a checkpoint is a small descriptor taken
// after a flush, so the restart restores it and then the partition's
// files. Nothing flushed of the replicated topic may be lost (what its
// segment files hold at the kill; the unflushed tail is what its
// durability may lose), nothing acknowledged of
// the persisted topic, and no explicitly stored offset; no offset is
// given to two messages after the restart.
func TestKill9OnVSRKeepsFlushedAndAcknowledged(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, dir)
	c := dialRoot(t, p.addr)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, client.ID(0), "replicated", 1, nil); err != nil {
		t.Fatal(err)
	}
	persisted := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	if _, err := c.CreateTopic(ctx, client.ID(0), "persisted", 1, persisted); err != nil {
		t.Fatal(err)
	}
	acked := [2]map[uint64]string{{}, {}} // topic -> offset -> payload
	send := func(c *client.Client, topic uint32, round, batches int) (first uint64) {
		t.Helper()
		for b := 0; b < batches; b++ {
			msgs := make([]client.Message, 7)
			for i := range msgs {
				msgs[i].Payload = []byte(fmt.Sprintf("topic %d round %d batch %d message %d", topic, round, b, i))
			}
			conf, err := c.SendMessages(ctx, client.ID(0), client.ID(topic), client.PartitionID(0), msgs)
			if err != nil {
				t.Fatalf("topic %d round %d send %d: %v", topic, round, b, err)
			}
			if b == 0 {
				first = conf[0].BaseOffset
			}
			for i, m := range msgs {
				offset := conf[0].BaseOffset + uint64(i)
				if before, ok := acked[topic][offset]; ok && before != string(m.Payload) {
					t.Fatalf("topic %d: offset %d acknowledged for %q and then for %q", topic, offset, before, m.Payload)
				}
				acked[topic][offset] = string(m.Payload)
			}
		}
		return first
	}
	send(c, 0, 1, 300)
	send(c, 1, 1, 300)
	if err := c.StoreConsumerOffset(ctx, client.IndividualConsumer(client.ID(9)), client.ID(0), client.ID(0), 0, 1500); err != nil {
		t.Fatal(err)
	}
	for topic := 0; topic < 2; topic++ {
		part := filepath.Join(dir, "streams", "0", "topics", fmt.Sprint(topic), "partitions", "0")
		deadline := time.Now().Add(30 * time.Second)
		for !vsrCheckpointed(part) {
			if time.Now().After(deadline) {
				t.Fatalf("topic %d: no checkpoint in %s", topic, part)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	flushedReplicated := segmentMessages(t, filepath.Join(dir, "streams", "0", "topics", "0", "partitions", "0"))
	p.kill9(t)

	t.Logf("replicated topic: %d messages flushed at the kill", flushedReplicated)
	p2 := startProcess(t, dir)
	c2 := dialRoot(t, p2.addr)
	second := [2]uint64{send(c2, 0, 2, 20), send(c2, 1, 2, 20)}
	for topic := uint32(0); topic < 2; topic++ {
		stored := map[uint64]string{}
		for next := uint64(0); ; {
			res, err := c2.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(0)),
				Stream: client.ID(0), Topic: client.ID(topic), Partition: 0, Strategy: client.PollOffset(next), Count: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Messages) == 0 {
				break
			}
			for _, m := range res.Messages {
				stored[m.Offset] = string(m.Payload)
				next = m.Offset + 1
			}
		}
		lost := 0
		for offset, payload := range acked[topic] {
			got, ok := stored[offset]
			switch {
			case !ok && topic == 0 && offset >= flushedReplicated && offset < second[topic]:
				lost++ // the unflushed tail of the replicated topic
			case !ok:
				t.Fatalf("topic %d: acknowledged offset %d is missing after the kill (next offset after the restart %d)", topic, offset, second[topic])
			case got != payload:
				t.Fatalf("topic %d: offset %d holds %q, acknowledged %q", topic, offset, got, payload)
			}
		}
		t.Logf("topic %d: %d acknowledged messages, %d lost with the unflushed tail, next offset after the restart %d", topic, len(acked[topic]), lost, second[topic])
	}
	stored, err := c2.GetConsumerOffset(ctx, client.IndividualConsumer(client.ID(9)), client.ID(0), client.ID(0), 0)
	if err != nil || stored == nil || stored.StoredOffset != 1500 {
		t.Fatalf("stored offset after the kill: %+v %v", stored, err)
	}
	p2.terminate(t)
}
