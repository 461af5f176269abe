package server_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/vsr"
)

// partitionPath is the directory of partition p of topic t in stream s.
func partitionPath(dir string, s, t, p int) string {
	return filepath.Join(dir, "streams", strconv.Itoa(s), "topics", strconv.Itoa(t), "partitions", strconv.Itoa(p))
}

// lastBatchAt returns the byte position of the last batch record of a
// segment log image.
func lastBatchAt(t *testing.T, image []byte) int {
	t.Helper()
	last := -1
	for pos := 0; pos+wire.BatchHeaderSize <= len(image); {
		n := int(wire.BatchView(image[pos:]).BatchLength())
		if n < wire.BatchHeaderSize || pos+n > len(image) {
			t.Fatalf("segment does not tile at byte %d", pos)
		}
		last, pos = pos, pos+n
	}
	if last < 0 {
		t.Fatal("empty segment")
	}
	return last
}

// TestBitFlipInAcknowledgedBatchFencesAndKeepsIt is the case: a
// bit flips inside the last acknowledged, fsynced batch of a persisted
// topic. The superblock recorded that batch as durable, so it is not a
// torn tail: after the restart the partition is fenced, its 10 messages
// are still in the file (the bytes unchanged), appends are refused, and
// other partitions serve.
func TestBitFlipInAcknowledgedBatchFencesAndKeepsIt(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	persisted := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 2, persisted); err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 5; b++ {
		msgs := make([]client.Message, 10)
		for i := range msgs {
			msgs[i].Payload = []byte(fmt.Sprintf("batch %d message %d with some payload bytes", b, i))
		}
		for p := uint32(0); p < 2; p++ {
			if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(p), msgs); err != nil {
				t.Fatal(err)
			}
		}
	}
	ts.stop()
	logPath := filepath.Join(partitionPath(ts.dir, 0, 0, 0), "00000000000000000000.log")
	image, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	at := lastBatchAt(t, image) + wire.BatchHeaderSize + 70 // inside a message of the last batch
	image[at] ^= 0x04
	if err := os.WriteFile(logPath, image, 0o644); err != nil {
		t.Fatal(err)
	}

	ts2 := startServer(t, ts.dir)
	after, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, image) {
		t.Fatalf("recovery changed the damaged segment: %d bytes, was %d", len(after), len(image))
	}
	ts2.mustLog("partition fenced", "not a torn write", logPath)
	c2 := ts2.connect()
	if _, err := c2.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("x")}}); err == nil {
		t.Fatal("a fenced partition accepted a send")
	}
	// The other partition is healthy.
	res, err := c2.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 1, Strategy: client.PollOffset(0), Count: 100})
	if err != nil || len(res.Messages) != 50 {
		t.Fatalf("the healthy partition: %d messages, %v", len(res.Messages), err)
	}
	if _, err := c2.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(1), []client.Message{{Payload: []byte("x")}}); err != nil {
		t.Fatalf("send to the healthy partition: %v", err)
	}
}

// TestPartitionWithoutValidSuperblockIsFencedAlone: both superblock copies
// of one partition are damaged; the broker starts, that partition is
// fenced (its files untouched), and every other partition and stream
// serves.
func TestPartitionWithoutValidSuperblockIsFencedAlone(t *testing.T) {
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
	if _, err := c.CreateTopic(ctx(t), client.ID(1), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	sent := sendAll(t, c, client.ID(0), client.ID(0), 2, 30, 100, 10)
	sentB := sendAll(t, c, client.ID(1), client.ID(0), 1, 20, 100, 10)
	ts.stop()
	damaged := partitionPath(ts.dir, 0, 0, 0)
	for _, name := range []string{"superblock.a", "superblock.b"} {
		p := filepath.Join(damaged, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[20] ^= 0xff
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	segment := filepath.Join(damaged, "00000000000000000000.log")
	before, err := os.ReadFile(segment)
	if err != nil {
		t.Fatal(err)
	}

	ts2 := startServer(t, ts.dir) // before the fix: New fails, the broker does not start
	ts2.mustLog("no valid copy", "partition fenced")
	c2 := ts2.connect()
	pollAll(t, c2, client.ID(0), client.ID(0), 1, sent[1])
	pollAll(t, c2, client.ID(1), client.ID(0), 0, sentB[0])
	for _, target := range []struct{ stream, partition uint32 }{{0, 1}, {1, 0}} {
		if _, err := c2.SendMessages(ctx(t), client.ID(target.stream), client.ID(0), client.PartitionID(target.partition), []client.Message{{Payload: []byte("after")}}); err != nil {
			t.Fatalf("send to stream %d partition %d: %v", target.stream, target.partition, err)
		}
	}
	if _, err := c2.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("x")}}); err == nil {
		t.Fatal("a partition without a valid superblock accepted a send")
	}
	if _, err := c2.CreateStream(ctx(t), "c"); err != nil {
		t.Fatalf("metadata after the boot: %v", err)
	}
	ts2.stop()
	after, err := os.ReadFile(segment)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the fenced partition's segment changed (%v)", err)
	}
	for _, name := range []string{"superblock.a", "superblock.b"} {
		if _, err := os.Stat(filepath.Join(damaged, name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// TestMetadataSuperblockHasTwoCopiesFromTheFirstCheckpoint: the metadata
// group's superblock copies are files from the first checkpoint on
// (before it, neither they nor snapshot.bin exist: the architecture seed's
// "on a single node, neither file exists until the first checkpoint"); one
// damaged copy does not stop the broker (the other is used and the damage
// logged), and the next checkpoint rewrites it.
func TestMetadataSuperblockHasTwoCopiesFromTheFirstCheckpoint(t *testing.T) {
	slots := "STRATA_METADATA_JOURNAL_SLOTS=16"
	ts := startServer(t, t.TempDir(), slots)
	c := ts.connect()
	meta := filepath.Join(ts.dir, "metadata")
	for _, name := range []string{"snapshot.bin", "superblock.a", "superblock.b"} {
		if _, err := os.Stat(filepath.Join(meta, name)); !os.IsNotExist(err) {
			t.Fatalf("%s before the first checkpoint: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(meta, "journal.wal")); err != nil {
		t.Fatalf("no journal.wal at the first boot: %v", err)
	}
	for i := 0; i < 20; i++ {
		if _, err := c.CreateStream(ctx(t), "stream-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	ts.stop()
	if _, err := os.Stat(filepath.Join(meta, "snapshot.bin")); err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	for _, name := range []string{"superblock.a", "superblock.b"} {
		if _, err := os.Stat(filepath.Join(meta, name)); err != nil {
			t.Fatalf("after the second checkpoint: %v", err)
		}
	}
	newest := func() string {
		t.Helper()
		best, name := uint64(0), ""
		for _, n := range []string{"superblock.a", "superblock.b"} {
			data, err := os.ReadFile(filepath.Join(meta, n))
			if err != nil {
				t.Fatal(err)
			}
			if s, err := vsr.DecodeSuperblockCopy(data); err == nil && s.Sequence > best {
				best, name = s.Sequence, n
			}
		}
		return name
	}
	damage := func(name string) {
		t.Helper()
		p := filepath.Join(meta, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[40] ^= 0x01
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := newest() // the copy a load would pick
	damage(first)
	ts2 := startServer(t, ts.dir, slots)
	ts2.mustLog("metadata superblock copy invalid", first)
	c2 := ts2.connect()
	streams, err := c2.GetStreams(ctx(t))
	if err != nil || len(streams) != 20 {
		t.Fatalf("after the restart: %d streams, %v", len(streams), err)
	}
	// Enough ops for the next checkpoint, which writes the damaged copy.
	for i := 20; i < 40; i++ {
		if _, err := c2.CreateStream(ctx(t), "stream-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	ts2.stop()
	other := "superblock.a"
	if first == other {
		other = "superblock.b"
	}
	damage(other)
	streams, err = startServer(t, ts.dir, slots).connect().GetStreams(ctx(t))
	if err != nil || len(streams) != 40 {
		t.Fatalf("after the second restart: %d streams, %v", len(streams), err)
	}
}

// TestPartitionWhoseSuperblocksAreGoneKeepsItsData: both superblock files
// of a partition holding messages are missing. That is not a partition
// never created (its superblock comes before its first segment): it is
// fenced and its segments are kept, not wiped.
func TestPartitionWhoseSuperblocksAreGoneKeepsItsData(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	sendAll(t, c, client.ID(0), client.ID(0), 1, 20, 100, 10)
	ts.stop()
	dir := partitionPath(ts.dir, 0, 0, 0)
	for _, name := range []string{"superblock.a", "superblock.b"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	segment := filepath.Join(dir, "00000000000000000000.log")
	before, err := os.ReadFile(segment)
	if err != nil {
		t.Fatal(err)
	}
	ts2 := startServer(t, ts.dir)
	after, err := os.ReadFile(segment)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the partition's segment was changed or wiped (%d bytes, was %d): %v", len(after), len(before), err)
	}
	ts2.mustLog("no superblock copy, but segments hold data", "partition fenced")
	if _, err := ts2.connect().SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("x")}}); err == nil {
		t.Fatal("a partition without its superblock accepted a send as if it were new")
	}
}
