package server

import (
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/group/grouptest"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

func readTestCluster(t *testing.T, replicas uint8) *grouptest.Cluster {
	t.Helper()
	rc := vsr.DefaultConfig(1, replicas, 0)
	rc.JournalSlots = 64
	rc.PipelinePrepareMax = 4
	rc.MessageSizeMax = 64 << 10
	rc.WALBytesMax = 16 << 20
	rc.CheckpointSizeMax = 1 << 20
	c, err := grouptest.New(group.Config{Replica: rc, Partition: partition.Config{StreamID: 1, TopicID: 1, PartitionID: 1, MessagesRequiredToSave: 8}}, false)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPartitionReadGoesThroughTheReadIndex drives the binding's read
// (vsrGroup.read, which poll and storedOffset use) over hosts of the
// in-process group harness: a group of one serves inside the call; the
// primary of three serves once its read round is answered; a primary cut
// off from its backups never serves, and its poll is denied with 57, not
// answered with an empty poll (pollFailure).
func TestPartitionReadGoesThroughTheReadIndex(t *testing.T) {
	served := 0
	serve := func(d vsr.Disposition) applied {
		if d != vsr.DispositionNone {
			return applied{status: group.Code(d)}
		}
		served++
		return applied{}
	}

	solo := readTestCluster(t, 1)
	w := &opWait{}
	(&vsrGroup{host: solo.Nodes[0].Host}).read(w, serve)
	if !w.finished || w.ch != nil || served != 1 || solo.Delivered != 0 {
		t.Fatalf("a group of one's read: finished %v, waits %v, served %d, %d messages", w.finished, w.ch != nil, served, solo.Delivered)
	}

	c := readTestCluster(t, 3)
	if c.Primary() != 0 {
		t.Fatalf("primary %d, want 0:\n%s", c.Primary(), c.Status())
	}
	g := &vsrGroup{host: c.Nodes[0].Host}
	w = &opWait{}
	g.read(w, serve)
	if w.finished || w.ch == nil {
		t.Fatal("the primary of three served a read before its read round was answered")
	}
	c.Deliver(1000)
	if !w.finished || w.result.status != wire.ErrorCodeOK || served != 2 {
		t.Fatalf("after the round: finished %v, status %d, served %d", w.finished, w.result.status, served)
	}

	c.Isolate(0, true)
	w = &opWait{}
	g.read(w, serve)
	for i := 0; i < 3*int(c.Config.Replica.NormalHeartbeatTimeoutTicks) && !w.finished; i++ {
		c.Tick(1)
	}
	if !w.finished || w.result.status != wire.ErrTransientNotCommitted || served != 2 {
		t.Fatalf("a cut-off primary's read: finished %v, status %d, served %d", w.finished, w.result.status, served)
	}
	if r := pollFailure(nil, 1, w.result.status); r.status != wire.ErrTransientNotCommitted || r.body != nil {
		t.Fatalf("a poll the read index refused is answered %+v, want a 57 denial", r)
	}
}
