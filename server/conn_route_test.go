package server_test

import (
	"fmt"
	"testing"

	"github.com/stratabroker/strata/client"
)

// TestConnectionsHandedToShards checks the round-robin hand-off of TCP
// connections to shards, with and without shard 0 in the rotation, and
// that partition requests run on the connection's shard when it owns the
// partition and on the owner otherwise (in an invariants build every
// partition access asserts it runs on the owner).
func TestConnectionsHandedToShards(t *testing.T) {
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip_shard_zero=%v", skip), func(t *testing.T) {
			ts := startServer(t, t.TempDir(), "STRATA_SYSTEM_SHARDING_CPU_ALLOCATION=2",
				fmt.Sprintf("STRATA_SYSTEM_SHARDING_SKIP_SHARD_ZERO_FOR_CLIENTS=%v", skip))
			admin := ts.connect()
			if _, err := admin.CreateStream(ctx(t), "s"); err != nil {
				t.Fatal(err)
			}
			const partitions = 8
			if _, err := admin.CreateTopic(ctx(t), client.ID(0), "t", partitions, nil); err != nil {
				t.Fatal(err)
			}
			clients := []*client.Client{admin}
			for len(clients) < 4 {
				clients = append(clients, ts.connect())
			}
			values := metricValues(t, ts)
			want0, want1 := 2.0, 2.0
			if skip {
				want0, want1 = 0, 4
			}
			if got0, got1 := values["strata_shard_connections,shard=0"], values["strata_shard_connections,shard=1"]; got0 != want0 || got1 != want1 {
				t.Fatalf("connections per shard: shard 0 %v, shard 1 %v; want %v and %v", got0, got1, want0, want1)
			}
			// Every client sends to and polls every partition: some of the
			// partitions are its shard's, the rest belong to the other.
			for i, c := range clients {
				for p := uint32(0); p < partitions; p++ {
					msgs := []client.Message{{Payload: []byte(fmt.Sprintf("c%d-p%d", i, p))}}
					if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(p), msgs); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i, c := range clients {
				for p := uint32(0); p < partitions; p++ {
					res, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(uint32(i + 1))),
						Stream: client.ID(0), Topic: client.ID(0), Partition: p, Strategy: client.PollFirst(), Count: 100, AutoCommit: true})
					if err != nil {
						t.Fatal(err)
					}
					if len(res.Messages) != len(clients) {
						t.Fatalf("partition %d: %d messages, want %d", p, len(res.Messages), len(clients))
					}
				}
			}
			values = metricValues(t, ts)
			onShard, forwarded := values["strata_requests_placed_total,place=shard"], values["strata_requests_placed_total,place=forward"]
			t.Logf("requests on the connection's shard %v, forwarded %v", onShard, forwarded)
			// 4 clients × 8 partitions × (send + poll) = 64 partition
			// requests, split between the two places by ownership.
			if onShard < 8 || forwarded < 8 {
				t.Fatalf("requests on the connection's shard %v, forwarded %v: want both", onShard, forwarded)
			}
		})
	}
}
