package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/config"
)

// allocsPerBatchSlack allows the allocations of an occasional segment
// flush (index entry, growing buffers) on top of a send's fixed cost.
const allocsPerBatchSlack = 3

// allocsServer starts a server with one topic of one partition and a
// connection bound as root, driven through handleFrame (the path every
// transport takes after reading a frame).
func allocsServer(t testing.TB) (*Server, *connection) {
	t.Helper()
	cfg, err := config.Load("", []string{"STRATA_SYSTEM_PATH=" + t.TempDir(), "STRATA_TCP_ENABLED=false"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Config: cfg, Root: RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	ls, err := s.OpenLocalSession(wire.TransportTCP, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Login("iggy", "iggy"); err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Do(&wire.CreateStreamRequest{Name: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Do(&wire.CreateTopicRequest{StreamID: wire.NumericID(0), PartitionsCount: 1, Name: "t"}); err != nil {
		t.Fatal(err)
	}
	// Lend the connection pooled buffers as a network transport does.
	s.initBuffers(ls.conn)
	return s, ls.conn
}

// sendFrame builds a SendMessages frame of n messages of 100 bytes.
func sendFrame(t *testing.T, c *connection, n int) []byte {
	t.Helper()
	var bb wire.BatchBuilder
	payload := make([]byte, 100)
	for i := 0; i < n; i++ {
		if err := bb.Add(wire.MessageID{Low: uint64(i + 1)}, payload, nil, 1); err != nil {
			t.Fatal(err)
		}
	}
	batch, err := bb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	_, _, client, session := c.binding()
	h := wire.RequestHeader{Client: client, Operation: wire.OpSendMessages, Session: session, Request: 1}
	req := wire.SendMessagesRequest{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0),
		Partitioning: wire.PartitionIDPartitioning(0), MessagesCount: uint32(n), Batch: batch}
	frame, err := wire.AppendRequest(nil, &h, &req, false)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// pollFrame builds a PollMessages frame for n messages from offset 0.
func pollFrame(t *testing.T, c *connection, n int) []byte {
	t.Helper()
	_, _, client, session := c.binding()
	h := wire.RequestHeader{Client: client, Operation: wire.OpNonReplicated, Code: wire.CodePollMessages, Session: session, Request: 1}
	req := wire.PollMessagesRequest{Consumer: wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NumericID(1)},
		StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), Partition: wire.OptionalPartition{Present: true},
		Strategy: wire.PollingStrategy{Kind: wire.PollingKind(1)}, Count: uint32(n)}
	frame, err := wire.AppendRequest(nil, &h, &req, false)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// TestNoAllocationPerMessage shows that the send and poll paths allocate
// per batch, never per message: a batch of 1000 messages costs the same
// number of allocations as a batch of 10, give or take the few of a flush
// (a per-message allocation would add about a thousand).
// The send goes through the partition's consensus group (request,
// prepare and reply are a few allocations per batch, none per message).
func TestNoAllocationPerMessage(t *testing.T) {
	s, c := allocsServer(t)
	measure := func(frame []byte) float64 {
		run := func() {
			out, _ := s.handleFrame(c, frame[:wire.HeaderSize], frame[wire.HeaderSize:])
			if out.head == nil || wire.PeekCommand(out.head) != wire.CommandReply {
				panic(fmt.Sprintf("no reply: % x", out.head))
			}
			c.keepScratch()
		}
		run() // warm the buffers
		return testing.AllocsPerRun(50, run)
	}
	small, large := measure(sendFrame(t, c, 10)), measure(sendFrame(t, c, 1000))
	t.Logf("send: %.1f allocations for 10 messages, %.1f for 1000", small, large)
	if large > small+allocsPerBatchSlack {
		t.Fatalf("send allocates per message: %.1f allocations for 10 messages, %.1f for 1000", small, large)
	}
	small, large = measure(pollFrame(t, c, 10)), measure(pollFrame(t, c, 1000))
	t.Logf("poll: %.1f allocations for 10 messages, %.1f for 1000", small, large)
	if large > small+allocsPerBatchSlack {
		t.Fatalf("poll allocates per message: %.1f allocations for 10 messages, %.1f for 1000", small, large)
	}
}
