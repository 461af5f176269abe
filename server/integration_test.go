package server_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

func TestLoginPingAndErrors(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c, err := client.Dial(ctx(t), ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(ctx(t)); err != nil {
		t.Fatalf("ping before login: %v", err)
	}
	if _, err := c.GetStreams(ctx(t)); !errors.Is(err, wire.ErrUnauthenticated) {
		t.Fatalf("read before login: %v, want Unauthenticated", err)
	}
	if _, err := c.LoginUser(ctx(t), "iggy", "wrong"); !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("bad password: %v, want InvalidCredentials", err)
	}
	if _, err := c.LoginUser(ctx(t), "iggy", "iggy"); err != nil {
		t.Fatalf("login: %v", err)
	}
	me, err := c.GetMe(ctx(t))
	if err != nil || me.UserID != 0 {
		t.Fatalf("GetMe = %+v, %v", me, err)
	}
	if _, err := c.GetStream(ctx(t), client.ID(42)); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("unknown stream: %v, want not found", err)
	}
	if err := c.DeleteStream(ctx(t), client.ID(42)); !errors.Is(err, wire.ErrStreamIdNotFound) {
		t.Fatalf("delete unknown stream: %v, want 1009", err)
	}
}

func TestStreamTopicPartitionLifecycle(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	s, err := c.CreateStream(ctx(t), "orders")
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 0 || s.Name != "orders" {
		t.Fatalf("stream %+v", s)
	}
	if _, err := c.CreateStream(ctx(t), "orders"); !errors.Is(err, wire.ErrStreamNameAlreadyExists) {
		t.Fatalf("duplicate stream: %v", err)
	}
	opts := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	topic, err := c.CreateTopic(ctx(t), client.Named("orders"), "eu", 3, opts)
	if err != nil {
		t.Fatal(err)
	}
	if topic.ID != 0 || len(topic.Partitions) != 3 {
		t.Fatalf("topic %+v", topic)
	}
	for p := 0; p < 3; p++ {
		dir := filepath.Join(ts.dir, "streams", "0", "topics", "0", "partitions", string(rune('0'+p)))
		if _, err := os.Stat(filepath.Join(dir, "00000000000000000000.log")); err != nil {
			t.Fatalf("partition %d segment: %v", p, err)
		}
	}
	if err := c.CreatePartitions(ctx(t), client.ID(0), client.ID(0), 2); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetTopic(ctx(t), client.ID(0), client.Named("eu"))
	if err != nil || len(got.Partitions) != 5 {
		t.Fatalf("after create partitions: %+v %v", got, err)
	}
	if err := c.DeletePartitions(ctx(t), client.ID(0), client.ID(0), 1); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateStream(ctx(t), client.ID(0), "orders-v2"); err != nil {
		t.Fatal(err)
	}
	streams, err := c.GetStreams(ctx(t))
	if err != nil || len(streams) != 1 || streams[0].Name != "orders-v2" || streams[0].TopicsCount != 1 {
		t.Fatalf("streams %+v %v", streams, err)
	}
	if err := c.DeleteTopic(ctx(t), client.ID(0), client.ID(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ts.dir, "streams", "0", "topics", "0")); !os.IsNotExist(err) {
		t.Fatalf("topic directory survives delete: %v", err)
	}
	if err := c.DeleteStream(ctx(t), client.ID(0)); err != nil {
		t.Fatal(err)
	}
}

// sendAll sends count messages of size bytes to each of partitions, in
// batches of batch, and returns the payloads by partition.
func sendAll(t *testing.T, c *client.Client, stream, topic client.Identifier, partitions, count, size, batch int) [][][]byte {
	t.Helper()
	sent := make([][][]byte, partitions)
	msgs := make([]client.Message, 0, batch)
	for p := 0; p < partitions; p++ {
		for i := 0; i < count; i += batch {
			msgs = msgs[:0]
			for j := i; j < i+batch && j < count; j++ {
				payload := payloadFor(p, j, size)
				sent[p] = append(sent[p], payload)
				msgs = append(msgs, client.Message{ID: client.MessageID{Low: uint64(j + 1), High: uint64(p)}, Payload: payload})
			}
			conf, err := c.SendMessages(ctx(t), stream, topic, client.PartitionID(uint32(p)), msgs)
			if err != nil {
				t.Fatalf("send p%d i%d: %v", p, i, err)
			}
			if len(conf) != 1 || conf[0].BaseOffset != uint64(i) || conf[0].PartitionID != uint32(p) {
				t.Fatalf("confirmation %+v, want base offset %d", conf, i)
			}
		}
	}
	return sent
}

// pollAll reads every message of a partition from offset 0 and checks it
// against want.
func pollAll(t *testing.T, c *client.Client, stream, topic client.Identifier, partition uint32, want [][]byte) {
	t.Helper()
	next := uint64(0)
	var polled client.PolledMessages
	for next < uint64(len(want)) {
		err := c.PollMessagesInto(ctx(t), client.PollRequest{
			Consumer: client.IndividualConsumer(client.ID(1)), Stream: stream, Topic: topic,
			Partition: partition, Strategy: client.PollOffset(next), Count: 1000,
		}, &polled)
		if err != nil {
			t.Fatalf("poll p%d at %d: %v", partition, next, err)
		}
		if len(polled.Messages) == 0 {
			t.Fatalf("poll p%d at %d: no messages (current offset %d, want %d messages)", partition, next, polled.CurrentOffset, len(want))
		}
		for _, m := range polled.Messages {
			if m.Offset != next {
				t.Fatalf("p%d: offset %d, want %d", partition, m.Offset, next)
			}
			if !bytes.Equal(m.Payload, want[next]) {
				t.Fatalf("p%d offset %d: payload differs", partition, next)
			}
			if m.ID.Low != next+1 || m.ID.High != uint64(partition) {
				t.Fatalf("p%d offset %d: id %+v", partition, next, m.ID)
			}
			next++
		}
	}
	if polled.CurrentOffset != uint64(len(want)-1) {
		t.Fatalf("p%d current offset %d, want %d", partition, polled.CurrentOffset, len(want)-1)
	}
}

func TestHundredThousandMessagesRoundTrip(t *testing.T) {
	const partitions, total, size = 3, 100_000, 1000
	count := (total + partitions - 1) / partitions
	if testing.Short() {
		count = 2000
	}
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "bulk"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", partitions, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sent := sendAll(t, c, client.ID(0), client.ID(0), partitions, count, size, 500)
	sendTime := time.Since(start)
	for p := 0; p < partitions; p++ {
		pollAll(t, c, client.ID(0), client.ID(0), uint32(p), sent[p])
	}
	t.Logf("%d messages of %d bytes in %d partitions: send %v, total %v", partitions*count, size, partitions, sendTime, time.Since(start))

	// Everything survives a graceful restart, including what was still
	// below the flush threshold.
	ts.stop()
	ts2 := startServer(t, ts.dir)
	c2 := ts2.connect()
	for p := 0; p < partitions; p++ {
		pollAll(t, c2, client.ID(0), client.ID(0), uint32(p), sent[p])
	}
}

func TestPollingStrategiesAndOffsets(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	sent := sendAll(t, c, client.ID(0), client.ID(0), 1, 100, 64, 10)
	consumer := client.IndividualConsumer(client.Named("reader"))
	poll := func(strategy client.PollingStrategy, count uint32, autoCommit bool) []client.Message {
		t.Helper()
		res, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: consumer, Stream: client.ID(0), Topic: client.ID(0),
			Strategy: strategy, Count: count, AutoCommit: autoCommit})
		if err != nil {
			t.Fatal(err)
		}
		return res.Messages
	}
	if m := poll(client.PollFirst(), 5, false); len(m) != 5 || m[0].Offset != 0 {
		t.Fatalf("first: %d messages", len(m))
	}
	if m := poll(client.PollLast(), 3, false); len(m) != 3 || m[0].Offset != 97 || !bytes.Equal(m[2].Payload, sent[0][99]) {
		t.Fatalf("last: %+v", m)
	}
	if m := poll(client.PollOffset(42), 1, false); len(m) != 1 || m[0].Offset != 42 {
		t.Fatalf("offset: %+v", m)
	}
	if m := poll(client.PollOffset(100), 10, false); len(m) != 0 {
		t.Fatalf("past the end: %d messages", len(m))
	}
	// next with auto-commit walks the partition.
	if m := poll(client.PollNext(), 30, true); len(m) != 30 || m[0].Offset != 0 {
		t.Fatalf("next #1: %d", len(m))
	}
	if m := poll(client.PollNext(), 30, true); len(m) != 30 || m[0].Offset != 30 {
		t.Fatalf("next #2: first offset %d", m[0].Offset)
	}
	off, err := c.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0)
	if err != nil || off.StoredOffset != 59 || off.CurrentOffset != 99 {
		t.Fatalf("stored offset %+v %v", off, err)
	}
	if err := c.StoreConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0, 10); err != nil {
		t.Fatal(err)
	}
	if m := poll(client.PollNext(), 1, false); len(m) != 1 || m[0].Offset != 11 {
		t.Fatalf("next after store: %+v", m)
	}
	if err := c.StoreConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0, 1000); !errors.Is(err, wire.ErrInvalidOffset) {
		t.Fatalf("store beyond end: %v", err)
	}
	if err := c.DeleteConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0); !errors.Is(err, wire.ErrConsumerOffsetNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	// Timestamps: every message of a later batch is found from its time.
	all := poll(client.PollFirst(), 100, false)
	ts0 := all[50].Timestamp
	if m := poll(client.PollTimestamp(ts0), 1, false); len(m) != 1 || m[0].Timestamp < ts0 {
		t.Fatalf("timestamp: %+v", m)
	}
	// Offsets survive a restart.
	if err := c.StoreConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0, 77); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	c2 := startServer(t, ts.dir).connect()
	off, err = c2.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0)
	if err != nil || off.StoredOffset != 77 {
		t.Fatalf("offset after restart %+v %v", off, err)
	}
}

func TestPartitioningByKeyIsStable(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 4, nil); err != nil {
		t.Fatal(err)
	}
	keys := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
	first := map[string]uint32{}
	for _, k := range keys {
		conf, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.MessagesKey([]byte(k)), []client.Message{{Payload: []byte(k)}})
		if err != nil {
			t.Fatal(err)
		}
		first[k] = conf[0].PartitionID
	}
	ts.stop()
	c2 := startServer(t, ts.dir).connect()
	for _, k := range keys {
		conf, err := c2.SendMessages(ctx(t), client.ID(0), client.ID(0), client.MessagesKey([]byte(k)), []client.Message{{Payload: []byte(k)}})
		if err != nil {
			t.Fatal(err)
		}
		if conf[0].PartitionID != first[k] {
			t.Fatalf("key %q moved from partition %d to %d across a restart", k, first[k], conf[0].PartitionID)
		}
	}
	// Balanced partitioning visits every partition.
	seen := map[uint32]bool{}
	for i := 0; i < 8; i++ {
		conf, err := c2.SendMessages(ctx(t), client.ID(0), client.ID(0), client.Balanced(), []client.Message{{Payload: []byte("b")}})
		if err != nil {
			t.Fatal(err)
		}
		seen[conf[0].PartitionID] = true
	}
	var ids []int
	for id := range seen {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	if len(ids) != 4 {
		t.Fatalf("balanced sends reached partitions %v", ids)
	}
}

func TestTornSegmentTailIsRecovered(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	sent := sendAll(t, c, client.ID(0), client.ID(0), 1, 50, 200, 10)
	// A crash leaves the superblock as it was before the shutdown that
	// never happened: keep its copies from now and put them back after the
	// graceful stop, so the disk looks as a crash leaves it.
	dir := filepath.Join(ts.dir, "streams", "0", "topics", "0", "partitions", "0")
	saved := map[string][]byte{}
	for _, name := range []string{"superblock.a", "superblock.b"} {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			saved[name] = data
		}
	}
	ts.stop()
	for _, name := range []string{"superblock.a", "superblock.b"} {
		path := filepath.Join(dir, name)
		if data, ok := saved[name]; ok {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(dir, "00000000000000000000.log")
	info, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the file in the middle of the last message of the last batch.
	if err := os.Truncate(logPath, info.Size()-100); err != nil {
		t.Fatal(err)
	}
	ts2 := startServer(t, ts.dir)
	ts2.mustLog("torn", "dropped", "offsets_skipped")
	c2 := ts2.connect()
	res, err := c2.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(0), Count: 1000})
	if err != nil || len(res.Messages) != 40 {
		t.Fatalf("poll after recovery: %d messages, %v", len(res.Messages), err)
	}
	for i, m := range res.Messages {
		if m.Offset != uint64(i) || !bytes.Equal(m.Payload, sent[0][i]) {
			t.Fatalf("message %d: offset %d", i, m.Offset)
		}
	}
	// Offsets 40..49 were handed out before the crash and lost with the
	// torn tail: the partition goes on after the reservation, never
	// giving one of them to another message.
	conf, err := c2.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("after")}})
	if err != nil || conf[0].BaseOffset < 50 {
		t.Fatalf("send after recovery: %+v %v", conf, err)
	}
	// A consumer at a lost offset continues at the next stored message.
	res, err = c2.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(45), Count: 10})
	if err != nil || len(res.Messages) != 1 || res.Messages[0].Offset != conf[0].BaseOffset || string(res.Messages[0].Payload) != "after" {
		t.Fatalf("poll across the skipped offsets: %+v %v", res.Messages, err)
	}
	t.Logf("offsets skipped: %d (next message at %d)", conf[0].BaseOffset-40, conf[0].BaseOffset)
}

func TestUsersTokensAndPermissions(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := ts.connect()
	perms := &client.Permissions{}
	perms.Global.ReadStreams = true
	if _, err := root.CreateUser(ctx(t), "reader", "secret1", 1, perms); err != nil {
		t.Fatal(err)
	}
	if _, err := root.CreateUser(ctx(t), "reader", "secret1", 1, nil); !errors.Is(err, wire.ErrUserAlreadyExists) {
		t.Fatalf("duplicate user: %v", err)
	}
	reader, err := client.Dial(ctx(t), ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if _, err := reader.LoginUser(ctx(t), "reader", "secret1"); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.GetStreams(ctx(t)); err != nil {
		t.Fatalf("reader lists streams: %v", err)
	}
	if _, err := reader.CreateStream(ctx(t), "nope"); !errors.Is(err, wire.ErrUnauthorized) {
		t.Fatalf("reader creates a stream: %v, want Unauthorized", err)
	}
	token, err := reader.CreatePersonalAccessToken(ctx(t), "ci", 0)
	if err != nil || token == "" {
		t.Fatalf("token %q %v", token, err)
	}
	tokens, err := reader.GetPersonalAccessTokens(ctx(t))
	if err != nil || len(tokens) != 1 || tokens[0].Name != "ci" {
		t.Fatalf("tokens %+v %v", tokens, err)
	}
	byToken, err := client.Dial(ctx(t), ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer byToken.Close()
	id, err := byToken.LoginWithToken(ctx(t), token)
	if err != nil || id.UserID != 1 {
		t.Fatalf("token login %+v %v", id, err)
	}
	if err := reader.ChangePassword(ctx(t), client.Named("reader"), "secret1", "secret2"); err != nil {
		t.Fatal(err)
	}
	again, err := client.Dial(ctx(t), ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.LoginUser(ctx(t), "reader", "secret1"); !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("old password: %v", err)
	}
	if _, err := again.LoginUser(ctx(t), "reader", "secret2"); err != nil {
		t.Fatalf("new password: %v", err)
	}
	if err := root.DeleteUser(ctx(t), client.ID(0)); !errors.Is(err, wire.ErrCannotDeleteUser) {
		t.Fatalf("delete root: %v", err)
	}
	users, err := root.GetUsers(ctx(t))
	if err != nil || len(users) != 2 {
		t.Fatalf("users %+v %v", users, err)
	}
	if !strings.Contains(ts.logs.String(), "login") {
		t.Log("no login lines in the log")
	}
}

func TestCorruptMetadataJournalEntryStopsTheServer(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if _, err := c.CreateStream(ctx(t), name); err != nil {
			t.Fatal(err)
		}
	}
	ts.stop()
	path := filepath.Join(ts.dir, "metadata", "journal.wal")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Flip a byte in the prepare of op 3 (ops 1..7: the root user, five
	// streams, a login): acknowledged ops follow it, so this is
	// corruption, not a torn tail, and a group of one has no peer to
	// repair it from.
	data[server.MetaPrepareOffsetForTest(1024, 3)+300] ^= 0xFF
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = newServerErr(t, ts.dir)
	if err == nil {
		t.Fatal("server started over a corrupt metadata journal")
	}
	if !strings.Contains(err.Error(), "journal.wal") {
		t.Fatalf("error does not name the file: %v", err)
	}
	after, err2 := os.ReadFile(path)
	if err2 != nil || !bytes.Equal(after, data) {
		t.Fatalf("the journal was changed (%v)", err2)
	}
	t.Logf("boot refused: %v", err)
}

func TestMissingSegmentFencesThePartition(t *testing.T) {
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
	dir := filepath.Join(ts.dir, "streams", "0", "topics", "0", "partitions", "0")
	for _, name := range []string{"00000000000000000000.log", "00000000000000000000.index"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ts2 := startServer(t, ts.dir)
	ts2.mustLog("missing history")
	c2 := ts2.connect()
	_, err := c2.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("x")}})
	if err == nil {
		t.Fatal("a partition that lost its segments accepted a send as if it were empty")
	}
}

func TestMetadataCheckpointAndRecovery(t *testing.T) {
	ts := startServer(t, t.TempDir(), "STRATA_METADATA_JOURNAL_SLOTS=16")
	c := ts.connect()
	const streams = 40
	for i := 0; i < streams; i++ {
		if _, err := c.CreateStream(ctx(t), "stream-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(39), "t", 2, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteStream(ctx(t), client.ID(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ts.dir, "metadata", "snapshot.bin")); err != nil {
		t.Fatalf("no checkpoint after %d operations with 16 slots: %v", streams, err)
	}
	ts.stop()
	c2 := startServer(t, ts.dir, "STRATA_METADATA_JOURNAL_SLOTS=16").connect()
	got, err := c2.GetStreams(ctx(t))
	if err != nil || len(got) != streams-1 {
		t.Fatalf("after restart: %d streams, %v", len(got), err)
	}
	topic, err := c2.GetTopic(ctx(t), client.ID(39), client.Named("t"))
	if err != nil || len(topic.Partitions) != 2 {
		t.Fatalf("topic after restart: %+v %v", topic, err)
	}
	// New ids continue after the recovered state: the lowest free id is 3.
	s, err := c2.CreateStream(ctx(t), "again")
	if err != nil || s.ID != 3 {
		t.Fatalf("new stream %+v %v", s, err)
	}
}

// TestPreallocatedSegments: a topic with preallocate_segments reserves the
// segment's blocks up front without changing the file size, and messages
// still round-trip and survive a restart.
func TestPreallocatedSegments(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	opts := client.Options{}.
		With(client.OptionPreallocateSegments, client.BoolValue(true)).
		With(client.OptionSegmentSize, client.StringValue("2 MiB"))
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ts.dir, "streams", "0", "topics", "0", "partitions", "0", "00000000000000000000.log")
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != 0 || st.Blocks*512 < 2<<20 {
		t.Fatalf("segment size %d, %d bytes allocated; want size 0 and 2 MiB reserved", st.Size, st.Blocks*512)
	}
	sent := sendAll(t, c, client.ID(0), client.ID(0), 1, 3000, 1000, 500)
	ts.stop()
	c2 := startServer(t, ts.dir).connect()
	pollAll(t, c2, client.ID(0), client.ID(0), 0, sent[0])
}
