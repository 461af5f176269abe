package group_test

import (
	"strings"
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// TestPersistedGroupCheckpointsAtWALBytes: a persisted group's WAL bound
// (vsr.Config.WALBytesMax) pushes requests back until a checkpoint frees
// the room, so the host takes its descriptor checkpoint once the WAL holds
// half of the bound, however far the op interval is: with an interval the
// journal never reaches, large sends still all commit, each after at most
// a few 58 answers, and the WAL never holds more than the bound.
func TestPersistedGroupCheckpointsAtWALBytes(t *testing.T) {
	cfg := testConfig(3, 9, vsr.Persisted)
	cfg.CheckpointEveryOps = 1 << 20
	cfg.Replica.WALBytesMax = 2 * uint64(cfg.Replica.MessageSizeMax)
	cfg.Partition.MessagesRequiredToSave = 1
	c := newCluster(t, cfg, true)
	w := newWorkload(t, c)
	payload := []byte(strings.Repeat("p", 16<<10))
	const sends = 40
	for i := range sends {
		var bb wire.BatchBuilder
		if err := bb.Add(wire.MessageID{Low: uint64(i + 1)}, payload, nil, 1000); err != nil {
			t.Fatal(err)
		}
		b, err := bb.Finish()
		if err != nil {
			t.Fatal(err)
		}
		body := partition.EncodeSendMessages(partition.Envelope{UserID: 1}, append([]byte(nil), b...))
		committed := false
		for attempt := 0; attempt < 50 && !committed; attempt++ {
			p := c.Primary()
			if p < 0 {
				c.Tick(5)
				continue
			}
			answers := w.submit(p, partition.OperationSendMessages, body)
			if len(answers) == 1 && answers[0].Code == wire.ErrorCodeOK {
				committed = true
				break
			}
			w.retries++
			c.Tick(1)
		}
		if !committed {
			t.Fatalf("send %d never committed:\n%s", i, c.Status())
		}
		for j, n := range c.Nodes {
			if got := n.Host.Replica().WALBytes(); got > cfg.Replica.WALBytesMax {
				t.Fatalf("replica %d holds %d WAL bytes, the bound is %d", j, got, cfg.Replica.WALBytesMax)
			}
		}
	}
	r := c.Nodes[c.Primary()].Host.Replica()
	if r.CheckpointOp() == 0 {
		t.Fatalf("no checkpoint after %d sends of %d bytes under a WAL bound of %d", sends, len(payload), cfg.Replica.WALBytesMax)
	}
	t.Logf("%d sends of %d KiB under a WAL bound of %d KiB: checkpoint op %d, %d pushed back and retried", sends, len(payload)>>10, cfg.Replica.WALBytesMax>>10, r.CheckpointOp(), w.retries)
}
