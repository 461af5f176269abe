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
	"github.com/stratabroker/strata/server"
)

// TestSingleNodeConsensusSuperblockLostFencesThePartition is the
// single-node cell "disk corruption on a minority" for the consensus
// superblock: both superblock copies of one partition's group (its slot
// of the node's superblocks.sb) are damaged while the server is down, or
// the slot's header is (the slot is then missing: the group's
// consensus.vsr exists, so its superblock is lost just the same). A group of one has no peer to recover its consensus state
// from, so that partition alone is fenced, as other fenced partitions
// are: the server starts, the partition serves every message its files
// verify (all of them here: only the consensus file is damaged), refuses
// sends, is listed as fenced naming the file, and the file is left as it
// was found, so the fence holds again at the next start. The server's
// other partition serves and takes sends. In both durabilities.
func TestSingleNodeConsensusSuperblockLostFencesThePartition(t *testing.T) {
	for _, tc := range []struct{ durability, damage string }{
		{"replicated", "copies"}, {client.DurabilityPersisted, "copies"}, {"replicated", "slot header"},
	} {
		durability := tc.durability
		t.Run(durability+" "+tc.damage, func(t *testing.T) {
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
			name := server.SuperblockFile(ts.dir)
			file, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			group, err := server.ConsensusFileGroup(partitionDir(ts.dir))
			if err != nil {
				t.Fatal(err)
			}
			zone, header, ok := server.SuperblockZoneAt(file, group)
			if !ok {
				t.Fatal("no superblock slot for partition 0")
			}
			if tc.damage == "copies" {
				file[zone+64] ^= 0xff // FORMATS.md: two 4 KiB copies after the slot header
				file[zone+4096+64] ^= 0xff
			} else {
				file[header+8] ^= 0xff // the group id, under the header checksum
			}
			if err := os.WriteFile(name, file, 0o644); err != nil {
				t.Fatal(err)
			}
			consensus, err := os.ReadFile(filepath.Join(partitionDir(ts.dir), "consensus.vsr"))
			if err != nil {
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
				after, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				if tc.damage == "copies" && !bytes.Equal(after[zone:zone+8192], file[zone:zone+8192]) {
					t.Fatalf("start %d: the damaged superblock copies were changed", start)
				}
				if !bytes.Equal(after[header:header+4096], file[header:header+4096]) {
					t.Fatalf("start %d: the damaged slot's header was changed", start)
				}
				if now, err := os.ReadFile(filepath.Join(partitionDir(ts.dir), "consensus.vsr")); err != nil || !bytes.Equal(now, consensus) {
					t.Fatalf("start %d: the partition's consensus.vsr was changed (%v)", start, err)
				}
			}
		})
	}
}
