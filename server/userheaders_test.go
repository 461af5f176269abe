package server_test

import (
	"encoding/binary"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/client"
)

// rawMessage is one message of a hand-built batch: payload and the raw
// user-headers block, sent as they are.
type rawMessage struct {
	payload string
	headers []byte
}

// rawBatchWithHeaders builds a SendMessages batch (§6.1-6.3) whose frames
// carry the given user-headers bytes unchecked: frame = 48-byte header,
// payload, user headers; checksums over frame[8:] and the batch fields.
func rawBatchWithHeaders(messages ...rawMessage) []byte {
	var frames []byte
	var sums []uint64
	for i, m := range messages {
		f := make([]byte, 48+len(m.payload)+len(m.headers))
		binary.LittleEndian.PutUint64(f[8:], uint64(500+i))
		binary.LittleEndian.PutUint32(f[24:], uint32(i))
		binary.LittleEndian.PutUint32(f[32:], uint32(len(m.headers)))
		binary.LittleEndian.PutUint32(f[36:], uint32(len(m.payload)))
		copy(f[48:], m.payload)
		copy(f[48+len(m.payload):], m.headers)
		sum := xxh3.Hash(f[8:])
		binary.LittleEndian.PutUint64(f[0:], sum)
		sums = append(sums, sum)
		frames = append(frames, f...)
	}
	h := make([]byte, 256)
	binary.LittleEndian.PutUint64(h[24:], 1_700_000_000_000_000)
	binary.LittleEndian.PutUint64(h[32:], uint64(256+len(frames)))
	binary.LittleEndian.PutUint32(h[48:], uint32(len(messages)))
	input := append([]byte{}, h[0:40]...)
	input = append(input, h[48:52]...)
	for _, s := range sums {
		input = binary.LittleEndian.AppendUint64(input, s)
	}
	binary.LittleEndian.PutUint64(h[40:], xxh3.Hash(input))
	return append(h, frames...)
}

// tlvItem is one raw TLV item [kind u8][len u32][data] with any kind and
// any declared length.
func tlvItem(kind byte, declared uint32, data string) []byte {
	return append(binary.LittleEndian.AppendUint32([]byte{kind}, declared), data...)
}

// TestPoisonedUserHeadersAreRefused: a send whose user headers fill their
// frame exactly (so the batch is well formed) but are not valid header
// TLV is refused with Iggy's code and stores nothing; the partition keeps
// serving, and a healthy message sent next polls back with its headers.
// Before the fix such a batch was stored and every later poll of the
// partition failed in the Go client ("invalid TLV item").
func TestPoisonedUserHeadersAreRefused(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "poison"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.Named("poison"), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, ts.addr)
	r.login()

	goodKey := tlvItem(2, 1, "k")
	cases := []struct {
		name    string
		headers []byte
		status  uint32
	}{
		{"kind 0 key", append(tlvItem(0, 1, "k"), tlvItem(2, 1, "v")...), 4040},
		{"kind 0 block of zeros", make([]byte, 12), 4040},
		{"kind 16 value", append(goodKey, tlvItem(16, 1, "v")...), 4040},
		{"key of length 0", append(tlvItem(2, 0, ""), tlvItem(2, 1, "v")...), 4018},
		{"key longer than its block", tlvItem(2, 9, "k"), 4018},
		{"int32 key of 3 bytes", append(tlvItem(6, 3, "abc"), tlvItem(2, 1, "v")...), 4018},
		{"key without a value", goodKey, 4019},
		{"value of 256 bytes", append(goodKey, tlvItem(1, 256, string(make([]byte, 256)))...), 4019},
		{"bool value of 2 bytes", append(goodKey, tlvItem(3, 2, "\x01\x00")...), 4019},
		{"value header cut short", append(goodKey, 2, 1, 0), 4019},
	}
	meta := append(numericID(0), numericID(0)...)
	meta = append(meta, 2, 4, 0, 0, 0, 0) // partition_id 0
	for _, tc := range cases {
		// A healthy first message: the whole batch must be refused.
		batch := rawBatchWithHeaders(rawMessage{"fine", append(tlvItem(2, 1, "a"), tlvItem(2, 1, "b")...)},
			rawMessage{"poisoned", tc.headers})
		m := binary.LittleEndian.AppendUint32(append([]byte{}, meta...), 2)
		body := binary.LittleEndian.AppendUint32(nil, uint32(len(m)))
		body = append(append(body, m...), batch...)
		reply := r.roundTrip(r.requestFrame(160, 0, r.counter, r.session, false, body))
		if reply.command != 8 || reply.status != tc.status {
			t.Errorf("%s: command %d status %d, want status %d", tc.name, reply.command, reply.status, tc.status)
		}
	}

	poll := func() *client.PolledMessages {
		t.Helper()
		polled, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
			Stream: client.Named("poison"), Topic: client.Named("t"), Partition: 0, Strategy: client.PollFirst(), Count: 100})
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		return polled
	}
	if got := poll(); len(got.Messages) != 0 {
		t.Fatalf("refused batches stored %d messages", len(got.Messages))
	}
	if _, err := c.SendMessages(ctx(t), client.Named("poison"), client.Named("t"), client.PartitionID(0),
		[]client.Message{{Payload: []byte("healthy"), Headers: []client.Header{client.StringHeader("trace", "42")}}}); err != nil {
		t.Fatalf("healthy send: %v", err)
	}
	got := poll()
	if len(got.Messages) != 1 || string(got.Messages[0].Payload) != "healthy" || got.Messages[0].HeadersErr != nil ||
		len(got.Messages[0].Headers) != 1 || got.Messages[0].Headers[0].Value.String() != "42" {
		t.Fatalf("healthy message polled as %+v", got.Messages)
	}
	if got.Messages[0].Offset != 0 {
		t.Fatalf("healthy message at offset %d: a refused batch took offsets", got.Messages[0].Offset)
	}
}
