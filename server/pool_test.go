package server_test

import (
	"context"
	"testing"

	"github.com/stratabroker/strata/client"
)

// TestMemoryPoolServesConnections sends and polls through real sockets and
// checks that the frames, replies and unflushed batches came from the
// memory pool and all went back: once the clients are gone and the server
// has shut down (flushing every partition), no pooled byte is still lent.
func TestMemoryPoolServesConnections(t *testing.T) {
	ts := startServer(t, t.TempDir())
	admin := ts.connect()
	if _, err := admin.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateTopic(ctx(t), client.ID(0), "t", 2, nil); err != nil {
		t.Fatal(err)
	}
	for w := 0; w < 3; w++ {
		c := ts.connect()
		for b := 0; b < 20; b++ {
			msgs := make([]client.Message, 50)
			for i := range msgs {
				msgs[i].Payload = payloadFor(w, b*50+i, 2000)
			}
			if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(uint32(b%2)), msgs); err != nil {
				t.Fatal(err)
			}
		}
		res, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
			Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollFirst(), Count: 10000})
		if err != nil || len(res.Messages) != (w+1)*500 {
			t.Fatalf("poll: %d messages, %v", len(res.Messages), err)
		}
		_ = c.Close()
	}
	stats, ok := ts.srv.MemoryPoolStats()
	if !ok {
		t.Fatal("memory pool disabled in the default configuration")
	}
	if stats.Hits == 0 || stats.Misses == 0 || stats.BytesInUse == 0 {
		t.Fatalf("pool not used by the connections: %+v", stats)
	}
	_ = admin.Close()
	if err := ts.srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if stats, _ = ts.srv.MemoryPoolStats(); stats.BytesInUse != 0 || stats.OutsideBytesInUse != 0 {
		t.Fatalf("pooled buffers still lent after shutdown: %+v", stats)
	}
}
