package server_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// TestSingleNodeConsensusSuperblockLostFencesThePartition is the
// single-node cell "disk corruption on a minority" for consensus.vsr: both
// superblock copies of one partition's file are damaged while the server
// is down. A group of one has no peer to recover its consensus state
// from, so that partition alone is fenced, as other fenced partitions
// are: the server starts, the partition serves every message its files
// verify (all of them here: only the consensus file is damaged), refuses
// sends, is listed as fenced naming the file, and the file is left as it
// was found, so the fence holds again at the next start. The server's
// other partition serves and takes sends. In both durabilities.
func TestSingleNodeConsensusSuperblockLostFencesThePartition(t *testing.T) {
	for _, durability := range []string{"replicated", client.DurabilityPersisted} {
		t.Run(durability, func(t *testing.T) {
			ts := startServer(t, t.TempDir())
			c := ts.connect()
			if _, err := c.CreateStream(ctx(t), "s"); err != nil {
				t.Fatal(err)
			}
			opts := client.Options{}.With(client.OptionDurability, client.StringValue(durability))
			if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 2, opts); err != nil {
				t.Fatal(err)
			}
			stream, topic := client.ID(0), client.ID(0)
			sent := sendAll(t, c, stream, topic, 2, 300, 100, 50)
			ts.stop()
			name := filepath.Join(partitionDir(ts.dir), "consensus.vsr")
			file, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			const superblockZone = 4096 // FORMATS.md: after the 4 KiB header, two 4 KiB copies
			file[superblockZone+64] ^= 0xff
			file[superblockZone+4096+64] ^= 0xff
			if err := os.WriteFile(name, file, 0o644); err != nil {
				t.Fatal(err)
			}

			for start := 0; start < 2; start++ {
				ts2 := startServer(t, ts.dir)
				c2 := ts2.connect()
				pollAll(t, c2, stream, topic, 0, sent[0])
				if _, err := c2.SendMessages(ctx(t), stream, topic, client.PartitionID(0), []client.Message{{Payload: []byte("x")}}); !errors.Is(err, wire.ErrCannotAppendMessage) {
					t.Fatalf("start %d: send to the partition without a consensus superblock: %v, want CannotAppendMessage (4010)", start, err)
				}
				next := len(sent[1])
				more := client.Message{ID: client.MessageID{Low: uint64(next + 1), High: 1}, Payload: payloadFor(1, next, 100)}
				if _, err := c2.SendMessages(ctx(t), stream, topic, client.PartitionID(1), []client.Message{more}); err != nil {
					t.Fatalf("start %d: send to the undamaged partition: %v", start, err)
				}
				sent[1] = append(sent[1], more.Payload)
				pollAll(t, c2, stream, topic, 1, sent[1])
				stats, err := c2.GetStats(ctx(t))
				if err != nil {
					t.Fatal(err)
				}
				if len(stats.FencedPartitions) != 1 || stats.FencedPartitions[0].PartitionID != 0 ||
					stats.FencedPartitions[0].ServedBelow != uint64(len(sent[0])) || !strings.Contains(stats.FencedPartitions[0].Reason, "consensus.vsr") {
					t.Fatalf("start %d: fenced partitions %+v, want partition 0 serving below %d, naming consensus.vsr", start, stats.FencedPartitions, len(sent[0]))
				}
				t.Logf("start %d: %+v", start, stats.FencedPartitions[0])
				ts2.stop()
				if after, err := os.ReadFile(name); err != nil || !bytes.Equal(after, file) {
					t.Fatalf("start %d: the damaged consensus file was changed (%v)", start, err)
				}
			}
		})
	}
}
