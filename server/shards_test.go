package server_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stratabroker/strata/client"
)

// TestPartitionsSpreadAcrossShards runs two shards, checks the namespace
// hash gives both of them partitions, and drives 4 producers over 8
// partitions: in an invariants build every access to a partition asserts
// it runs on the partition's owning shard.
func TestPartitionsSpreadAcrossShards(t *testing.T) {
	ts := startServer(t, t.TempDir(), "STRATA_SYSTEM_SHARDING_CPU_ALLOCATION=2")
	if n := ts.srv.Shards(); n != 2 {
		t.Fatalf("%d shards, want 2", n)
	}
	ts.mustLog("shards")
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	const partitions = 8
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", partitions, nil); err != nil {
		t.Fatal(err)
	}
	perShard := map[int]int{}
	for p := uint32(0); p < partitions; p++ {
		perShard[ts.srv.PartitionShard(0, 0, p)]++
	}
	if perShard[0] == 0 || perShard[1] == 0 {
		t.Fatalf("partitions per shard %v: one shard serves nothing", perShard)
	}
	t.Logf("partitions per shard: %v", perShard)

	const producers, batches, batchSize = 4, 50, 20
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for w := 0; w < producers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			pc, err := dialLogin(t, ts.addr)
			if err != nil {
				errs <- err
				return
			}
			for b := 0; b < batches; b++ {
				msgs := make([]client.Message, batchSize)
				for i := range msgs {
					msgs[i].Payload = []byte(fmt.Sprintf("w%d-b%d-m%d", w, b, i))
				}
				partition := uint32((w*batches + b) % partitions)
				if _, err := pc.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(partition), msgs); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for p := uint32(0); p < partitions; p++ {
		res, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
			Stream: client.ID(0), Topic: client.ID(0), Partition: p, Strategy: client.PollFirst(), Count: 100000})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range res.Messages {
			if m.Offset != uint64(i) {
				t.Fatalf("partition %d: offset %d at position %d", p, m.Offset, i)
			}
		}
		total += len(res.Messages)
	}
	if total != producers*batches*batchSize {
		t.Fatalf("polled %d messages, sent %d", total, producers*batches*batchSize)
	}
}
