package httpapi

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// samplePollReply builds a poll reply with one stamped batch.
func samplePollReply(t testing.TB) []byte {
	var bb wire.BatchBuilder
	headers, err := wire.AppendTLVItem(nil, wire.TLVString, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	if headers, err = wire.AppendTLVItem(headers, wire.TLVUint8, []byte{9}); err != nil {
		t.Fatal(err)
	}
	if err := bb.Add(wire.MessageID{Low: 1}, []byte("hello"), nil, 100); err != nil {
		t.Fatal(err)
	}
	if err := bb.Add(wire.MessageID{Low: 2, High: 3}, []byte("world"), headers, 150); err != nil {
		t.Fatal(err)
	}
	batch, err := bb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.StampBatch(batch, 4, 10, 200); err != nil {
		t.Fatal(err)
	}
	head := wire.PolledMessagesHeader{PartitionID: 4, CurrentOffset: 11, Count: 2}
	return append(head.AppendTo(nil), batch...)
}

func TestDecodePolled(t *testing.T) {
	out, err := decodePolled(samplePollReply(t))
	if err != nil {
		t.Fatal(err)
	}
	if out.PartitionID != 4 || out.CurrentOffset != 11 || len(out.Messages) != 2 {
		t.Fatalf("decoded %+v", out)
	}
	m := out.Messages[1]
	if m.Header.Offset != 11 || m.Header.Timestamp != 200 || m.Header.OriginTimestamp != 150 ||
		m.Payload != base64.StdEncoding.EncodeToString([]byte("world")) {
		t.Fatalf("second message %+v", m)
	}
	want := new(big.Int).Lsh(big.NewInt(3), 64)
	want.Add(want, big.NewInt(2))
	if m.Header.ID.String() != want.String() {
		t.Fatalf("id %s, want %s", m.Header.ID, want)
	}
	entries, ok := m.UserHeaders.([]headerEntryJSON)
	if !ok || len(entries) != 1 || entries[0].Key.Kind != "string" || entries[0].Value.Kind != "uint8" {
		t.Fatalf("user headers %#v", m.UserHeaders)
	}
	// Truncated replies are errors, never panics.
	full := samplePollReply(t)
	for _, n := range []int{0, 15, 16 + 100, len(full) - 1} {
		if _, err := decodePolled(full[:n]); err == nil {
			t.Fatalf("decoded a reply cut at %d bytes", n)
		}
	}
}

func FuzzDecodePolled(f *testing.F) {
	f.Add(samplePollReply(f))
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := decodePolled(b)
		if err == nil {
			if _, err := json.Marshal(out); err != nil {
				t.Fatalf("decoded reply does not marshal: %v", err)
			}
		}
	})
}

func TestUserHeadersRoundTrip(t *testing.T) {
	block, err := wire.AppendTLVItem(nil, wire.TLVString, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if block, err = wire.AppendTLVItem(block, wire.TLVUint32, binary.LittleEndian.AppendUint32(nil, 5)); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(userHeadersJSON(block))
	if err != nil {
		t.Fatal(err)
	}
	back, err := parseUserHeaders(raw)
	if err != nil || string(back) != string(block) {
		t.Fatalf("entries round trip: %x %v, want %x", back, err, block)
	}
	encoded, err := json.Marshal(base64.StdEncoding.EncodeToString(block))
	if err != nil {
		t.Fatal(err)
	}
	if back, err = parseUserHeaders(encoded); err != nil || string(back) != string(block) {
		t.Fatalf("base64 round trip: %x %v", back, err)
	}
	for _, bad := range []string{`"AA=="`, `[{"key":{"kind":"planet","value":"YQ=="},"value":{"kind":"raw","value":"YQ=="}}]`, `7`} {
		if _, err := parseUserHeaders(json.RawMessage(bad)); err == nil {
			t.Fatalf("accepted user headers %s", bad)
		}
	}
}

func FuzzParseUserHeaders(f *testing.F) {
	f.Add([]byte(`[{"key":{"kind":"string","value":"YQ=="},"value":{"kind":"uint8","value":"BQ=="}}]`))
	f.Add([]byte(`"AgEAAABh"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		block, err := parseUserHeaders(b)
		if err != nil || len(block) == 0 {
			return
		}
		// Whatever is accepted is a valid block that renders back.
		if _, err := wire.ValidateTLV(block); err != nil {
			t.Fatalf("accepted an invalid block %x: %v", block, err)
		}
		raw, err := json.Marshal(userHeadersJSON(block))
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseUserHeaders(raw)
		if err != nil || string(again) != string(block) {
			t.Fatalf("round trip %x → %x %v", block, again, err)
		}
	})
}

func FuzzMessageID(f *testing.F) {
	f.Add(uint64(0), uint64(0))
	f.Add(uint64(1), uint64(0))
	f.Add(^uint64(0), ^uint64(0))
	f.Fuzz(func(t *testing.T, low, high uint64) {
		id := wire.MessageID{Low: low, High: high}
		text := messageIDText(id)
		for _, raw := range []string{text.String(), `"` + text.String() + `"`} {
			back, err := parseMessageID(json.RawMessage(raw))
			if err != nil || back != id {
				t.Fatalf("%s → %+v %v, want %+v", raw, back, err, id)
			}
		}
	})
}

func FuzzParseMessageID(f *testing.F) {
	f.Add([]byte(`"0f0e0d0c-0b0a-0908-0706-050403020100"`))
	f.Add([]byte(`340282366920938463463374607431768211456`))
	f.Add([]byte(`-1`))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := parseMessageID(b)
		if err != nil {
			return
		}
		back, err := parseMessageID(json.RawMessage(messageIDText(id)))
		if err != nil || back != id {
			t.Fatalf("%q → %+v → %+v %v", b, id, back, err)
		}
	})
}
