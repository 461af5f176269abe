package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stratabroker/strata/client/clienttest"
	"github.com/stratabroker/strata/net/wire"
)

// sendFixture is a batch of messages of payloadSize bytes with one header.
func sendFixture(count, payloadSize int) []Message {
	payload := make([]byte, payloadSize)
	msgs := make([]Message, count)
	headers := []Header{StringHeader("source", "bench")}
	for i := range msgs {
		msgs[i] = Message{ID: MessageID{Low: uint64(i)}, Payload: payload, Headers: headers, OriginTimestamp: uint64(1000 + i)}
	}
	return msgs
}

// pollFixture is a poll reply holding count messages of payloadSize bytes
// in batches of perBatch.
func pollFixture(t testing.TB, count, perBatch, payloadSize int) []byte {
	reply := make([]byte, pollHeaderSize)
	binary.LittleEndian.PutUint32(reply[12:], uint32(count))
	var bb wire.BatchBuilder
	payload := make([]byte, payloadSize)
	for base := 0; base < count; base += perBatch {
		bb.Reset()
		for i := 0; i < perBatch && base+i < count; i++ {
			if err := bb.Add(wire.MessageID{Low: uint64(base + i)}, payload, nil, 1); err != nil {
				t.Fatal(err)
			}
		}
		b, err := bb.Finish()
		if err != nil {
			t.Fatal(err)
		}
		start := len(reply)
		reply = append(reply, b...)
		if err := wire.StampBatch(reply[start:], 0, uint64(base), 2); err != nil {
			t.Fatal(err)
		}
	}
	return reply
}

// TestSendBodyAllocations guards the send hot path: building a batch body
// into the reused frame allocates nothing after warm-up.
func TestSendBodyAllocations(t *testing.T) {
	c := &Client{}
	msgs := sendFixture(100, 512)
	var frame []byte
	build := func() {
		var err error
		frame, err = c.appendSendBody(frame[:0], ID(1), Named("topic"), PartitionID(2), msgs, 1)
		if err != nil {
			t.Fatal(err)
		}
	}
	build()
	if n := testing.AllocsPerRun(50, build); n != 0 {
		t.Fatalf("appendSendBody allocates %v times per batch", n)
	}
}

// TestDecodePolledAllocations guards the poll hot path: decoding into a
// reused PolledMessages allocates nothing for messages without headers.
func TestDecodePolledAllocations(t *testing.T) {
	reply := pollFixture(t, 1000, 100, 256)
	dst := &PolledMessages{}
	decode := func() {
		dst.buf = append(dst.buf[:0], reply...)
		if err := decodePolled(dst); err != nil {
			t.Fatal(err)
		}
	}
	decode()
	if len(dst.Messages) != 1000 || dst.Messages[999].Offset != 999 {
		t.Fatalf("decoded %d messages", len(dst.Messages))
	}
	if n := testing.AllocsPerRun(20, decode); n != 0 {
		t.Fatalf("decodePolled allocates %v times per reply", n)
	}
}

func BenchmarkSendBody(b *testing.B) {
	for _, size := range []int{100, 1000} {
		b.Run(fmt.Sprintf("1000x%dB", size), func(b *testing.B) {
			c := &Client{}
			msgs := sendFixture(1000, size)
			var frame []byte
			b.SetBytes(int64(1000 * size))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if frame, err = c.appendSendBody(frame[:0], ID(1), ID(2), Balanced(), msgs, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodePolled(b *testing.B) {
	reply := pollFixture(b, 1000, 100, 1000)
	dst := &PolledMessages{}
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		dst.buf = append(dst.buf[:0], reply...)
		if err := decodePolled(dst); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPingRoundTrip measures one lockstep request/reply over loopback
// TCP against the fake server.
func BenchmarkPingRoundTrip(b *testing.B) {
	srv, err := clienttest.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := Dial(ctx, srv.Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Ping(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
