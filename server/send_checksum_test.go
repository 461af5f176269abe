package server

import (
	"fmt"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// bigSendFrame builds a SendMessages frame of n messages of size bytes.
func bigSendFrame(t testing.TB, c *connection, n, size int) []byte {
	t.Helper()
	var bb wire.BatchBuilder
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
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

// BenchmarkSendOneMiB sends batches of 1 MiB (1024 messages of 1 KiB)
// through handleFrame on a group of one: the figure for the checksum
// passes of a send (go test -bench SendOneMiB -cpuprofile shows them).
func BenchmarkSendOneMiB(b *testing.B) {
	s, c := allocsServer(b)
	frame := bigSendFrame(b, c, 1024, 1024-wire.MessageHeaderSize)
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, _ := s.handleFrame(c, frame[:wire.HeaderSize], frame[wire.HeaderSize:])
		if out.head == nil || wire.PeekCommand(out.head) != wire.CommandReply {
			panic(fmt.Sprintf("no reply: % x", out.head))
		}
		c.keepScratch()
	}
}
