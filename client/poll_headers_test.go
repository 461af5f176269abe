package client

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// poisonedPollReply is a poll reply of three messages at offsets 7..9 in
// one batch, the middle one carrying user headers that tile its frame but
// are not TLV (a kind-0 item): what a broker that stored such a send
// would return. wire.BatchBuilder does not look at header bytes, which is
// what lets this test build it.
func poisonedPollReply(t *testing.T) (reply, good, poisoned []byte) {
	t.Helper()
	good, err := AppendHeaders(nil, []Header{StringHeader("trace", "t-1")})
	if err != nil {
		t.Fatal(err)
	}
	poisoned = []byte{0, 1, 0, 0, 0, 'k', 2, 1, 0, 0, 0, 'v'}
	var bb wire.BatchBuilder
	for i, h := range [][]byte{good, poisoned, good} {
		if err := bb.Add(wire.MessageID{Low: uint64(i + 1)}, fmt.Appendf(nil, "payload-%d", i), h, uint64(100+i)); err != nil {
			t.Fatal(err)
		}
	}
	batch, err := bb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.StampBatch(batch, 0, 7, 1000); err != nil {
		t.Fatal(err)
	}
	head := wire.PolledMessagesHeader{PartitionID: 0, CurrentOffset: 9, Count: 3}
	return append(head.AppendTo(nil), batch...), good, poisoned
}

// TestPollSurfacesABadHeaderMessage: one message whose headers do not
// decode comes back with its raw header bytes and HeadersErr; the poll
// succeeds and the other messages decode normally. Before, the whole poll
// failed ("invalid TLV item"), so no consumer could get past the message.
func TestPollSurfacesABadHeaderMessage(t *testing.T) {
	reply, good, poisoned := poisonedPollReply(t)
	dst := &PolledMessages{buf: reply}
	if err := decodePolled(dst); err != nil {
		t.Fatalf("poll with one bad-header message failed: %v", err)
	}
	if len(dst.Messages) != 3 {
		t.Fatalf("%d messages, want 3", len(dst.Messages))
	}
	for i, m := range dst.Messages {
		if m.Offset != uint64(7+i) || string(m.Payload) != fmt.Sprintf("payload-%d", i) {
			t.Fatalf("message %d: offset %d payload %q", i, m.Offset, m.Payload)
		}
		if i == 1 {
			if m.HeadersErr == nil || !errors.Is(m.HeadersErr, ErrProtocol) || m.Headers != nil || !bytes.Equal(m.RawHeaders, poisoned) {
				t.Fatalf("bad message: err %v headers %v raw %x", m.HeadersErr, m.Headers, m.RawHeaders)
			}
			continue
		}
		if m.HeadersErr != nil || len(m.Headers) != 1 || m.Headers[0].Value.String() != "t-1" || !bytes.Equal(m.RawHeaders, good) {
			t.Fatalf("message %d: err %v headers %+v", i, m.HeadersErr, m.Headers)
		}
	}

	// The REST API sends a block it cannot decode as base64: the HTTP
	// client treats it the same way.
	data := fmt.Appendf(nil, `{"partition_id":0,"current_offset":9,"messages":[`+
		`{"header":{"id":"1","offset":7},"payload":"YQ==","user_headers":[{"key":{"kind":"string","value":"aw=="},"value":{"kind":"string","value":"dg=="}}]},`+
		`{"header":{"id":"2","offset":8},"payload":"Yg==","user_headers":%q}]}`, base64.StdEncoding.EncodeToString(poisoned))
	polled, err := decodePolledJSON(data)
	if err != nil {
		t.Fatalf("REST poll with one bad-header message failed: %v", err)
	}
	if len(polled.Messages) != 2 || polled.Messages[0].HeadersErr != nil || len(polled.Messages[0].Headers) != 1 ||
		polled.Messages[1].HeadersErr == nil || !bytes.Equal(polled.Messages[1].RawHeaders, poisoned) || string(polled.Messages[1].Payload) != "b" {
		t.Fatalf("REST poll decoded as %+v", polled.Messages)
	}
}
