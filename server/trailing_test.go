package server_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stratabroker/strata/client"
)

// TestRequestTrailingBytesAreIgnored: over a real TCP socket, DeleteTopic
// sent the way one of Iggy's SDKs sends it (stream id, topic id and a u32
// partitions count) deletes the topic, and a GetTopic with bytes after its
// ids is answered, as Iggy's server decodes requests ignoring trailing
// bytes. A length that runs past the end is still refused. Before, both
// were denied with 3 InvalidCommand.
func TestRequestTrailingBytesAreIgnored(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "trail"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"doomed", "kept"} {
		if _, err := c.CreateTopic(ctx(t), client.Named("trail"), name, 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	r := dialRaw(t, ts.addr)
	r.login()
	ids := append(numericID(0), []byte{2, 6, 'd', 'o', 'o', 'm', 'e', 'd'}...)

	// GetTopic (NonReplicated code 300) with four extra bytes.
	get := r.roundTrip(r.requestFrame(2, 300, r.counter, r.session, false, binary.LittleEndian.AppendUint32(append([]byte{}, ids...), 3)))
	if get.command != 8 || get.status != 0 || len(get.body) == 0 {
		t.Fatalf("get topic with trailing bytes: command %d status %d body %d bytes", get.command, get.status, len(get.body))
	}
	// A topic id whose length runs past the end is still refused.
	bad := r.roundTrip(r.requestFrame(2, 300, r.counter, r.session, false, append(numericID(0), 2, 40, 'd')))
	if bad.status != 3 {
		t.Fatalf("get topic with a truncated id: status %d, want 3", bad.status)
	}

	// DeleteTopic (operation 134): stream id, topic id, partitions count.
	if _, result := r.metadataOp(134, binary.LittleEndian.AppendUint32(append([]byte{}, ids...), 3)); result != 0 {
		t.Fatalf("delete topic with a partitions count: result %d", result)
	}
	if _, err := c.GetTopic(ctx(t), client.Named("trail"), client.Named("doomed")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("deleted topic: %v", err)
	}
	if _, err := c.GetTopic(ctx(t), client.Named("trail"), client.Named("kept")); err != nil {
		t.Fatalf("the other topic: %v", err)
	}
}
