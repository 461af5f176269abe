package main

import (
	"errors"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// producedBatch builds a batch with the real wire.BatchBuilder exactly as
// the client does for a benchmark producer, then decodes it as a poll
// reply would, returning the messages with offsets from base.
func producedBatch(t *testing.T, partition uint32, base uint64, n, size int, producer uint32) []client.Message {
	t.Helper()
	var bb wire.BatchBuilder
	origin := uint64(1_700_000_000_000_000)
	payload := make([]byte, size)
	for j := 0; j < n; j++ {
		key := base + uint64(j)
		fillPayload(payload, partition, key, uint32(j), producer)
		stampOrigin(payload, origin)
		if err := bb.Add(wire.MessageID{Low: key, High: uint64(producer) + 1}, payload, nil, origin); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.ValidateBatch(b, uint32(n)); err != nil {
		t.Fatalf("builder made an invalid batch: %v", err)
	}
	it := wire.BatchView(b).Frames()
	var out []client.Message
	for {
		f, ok := it.Next()
		if !ok {
			break
		}
		out = append(out, client.Message{Offset: base + uint64(f.OffsetDelta()), ID: f.ID(),
			OriginTimestamp: origin + uint64(f.TimestampDelta()), Checksum: f.Checksum(),
			Payload: append([]byte(nil), f.Payload()...)})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) != n {
		t.Fatalf("decoded %d messages, built %d", len(out), n)
	}
	return out
}

func checkAll(v *Verifier, msgs []client.Message) error {
	for i := range msgs {
		if err := v.Check(&msgs[i]); err != nil {
			return err
		}
	}
	return nil
}

func TestVerifierAcceptsWhatProducersSend(t *testing.T) {
	v := NewVerifier(3, 0, true)
	for b := 0; b < 3; b++ {
		if err := checkAll(v, producedBatch(t, 3, uint64(b*10), 10, 100, 0)); err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
	}
	if v.Verified != 30 || v.Next() != 30 {
		t.Fatalf("verified %d, next %d; want 30, 30", v.Verified, v.Next())
	}
}

func TestVerifierDetectsTampering(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(msgs []client.Message) []client.Message
	}{
		{"payload byte flipped", func(m []client.Message) []client.Message { m[4].Payload[60] ^= 1; return m }},
		{"payload header flipped", func(m []client.Message) []client.Message { m[4].Payload[9] ^= 0x80; return m }},
		{"payload truncated", func(m []client.Message) []client.Message { m[2].Payload = m[2].Payload[:50]; return m }},
		{"stored checksum wrong", func(m []client.Message) []client.Message { m[1].Checksum++; return m }},
		{"message dropped", func(m []client.Message) []client.Message { return append(m[:3], m[4:]...) }},
		{"message duplicated", func(m []client.Message) []client.Message { return append(m[:4], m[3:]...) }},
		{"messages reordered", func(m []client.Message) []client.Message {
			m[5], m[6] = m[6], m[5]
			return m
		}},
		{"payloads swapped between offsets", func(m []client.Message) []client.Message {
			m[5].Payload, m[6].Payload = m[6].Payload, m[5].Payload
			return m
		}},
		{"id changed", func(m []client.Message) []client.Message { m[7].ID.Low++; return m }},
		{"origin changed", func(m []client.Message) []client.Message { m[8].OriginTimestamp++; return m }},
		{"user header added", func(m []client.Message) []client.Message {
			m[9].Headers = []client.Header{client.StringHeader("k", "v")}
			return m
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msgs := tc.tamper(producedBatch(t, 1, 0, 10, 80, 2))
			err := checkAll(NewVerifier(1, 0, true), msgs)
			if !errors.Is(err, ErrVerify) {
				t.Fatalf("tampered batch passed or failed otherwise: %v", err)
			}
		})
	}
}

func TestVerifierChecksPartitionAndStart(t *testing.T) {
	msgs := producedBatch(t, 1, 0, 5, 64, 0)
	if err := checkAll(NewVerifier(2, 0, true), msgs); !errors.Is(err, ErrVerify) {
		t.Fatalf("partition 1's messages accepted as partition 2's: %v", err)
	}
	if err := checkAll(NewVerifier(1, 1, true), msgs); !errors.Is(err, ErrVerify) {
		t.Fatalf("offset 0 accepted where 1 was expected: %v", err)
	}
	// Without frames (NATS) the id and checksum are not checked, the
	// offsets and payload still are.
	v := NewVerifier(1, 0, true)
	v.frames = false
	msgs[0].Checksum = 0
	if err := checkAll(v, msgs); err != nil {
		t.Fatalf("frameless verification: %v", err)
	}
	msgs = producedBatch(t, 1, 0, 5, 64, 0)
	msgs[3].Payload[40] ^= 4
	v = NewVerifier(1, 0, true)
	v.frames = false
	if err := checkAll(v, msgs); !errors.Is(err, ErrVerify) {
		t.Fatalf("frameless verification missed a corrupted payload: %v", err)
	}
}

func TestPayloadRoundTripOddSizes(t *testing.T) {
	for _, size := range []int{payloadHeaderSize, payloadHeaderSize + 1, 100, 1000, 1003} {
		p := make([]byte, size)
		fillPayload(p, 7, 12345, 9, 4)
		stampOrigin(p, 99)
		f, err := checkPayload(p)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if f.partition != 7 || f.key != 12345 || f.index != 9 || f.producer != 4 || f.origin != 99 {
			t.Fatalf("size %d: decoded %+v", size, f)
		}
		if size > payloadHeaderSize {
			p[size-1] ^= 1
			if _, err := checkPayload(p); !errors.Is(err, ErrVerify) {
				t.Fatalf("size %d: last byte flip not detected: %v", size, err)
			}
		}
	}
}

func TestVerifierCheckDoesNotAllocate(t *testing.T) {
	msgs := producedBatch(t, 0, 0, 1, 1000, 0)
	v := NewVerifier(0, 0, true)
	allocs := testing.AllocsPerRun(100, func() {
		v.next = 0
		if err := v.Check(&msgs[0]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Check allocates %.1f times per message", allocs)
	}
}
