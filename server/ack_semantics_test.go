package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/storage/memfs"
	"github.com/stratabroker/strata/vsr"
)

// The tests of README.md's acknowledgement table ("What an acknowledgement
// survives"): each names a cell it proves. The failures are made on the
// in-memory file system, one disk per server:
//
//   - a process crash cuts the server off its disk at one instant (every
//     later file call fails, as a dead process makes none) and off the
//     replica plane; what it had written stays, unsynced or not, as a
//     kernel's page cache keeps it. What was only in the process (the
//     in-memory prepare journal, the unflushed messages) is gone.
//   - a power loss is a process crash and memfs.Crash: every write that
//     was not synced is lost too.
//   - corruption flips a byte of a file, durably, while the server is down.

// TestAckReplicatedClusterFailureOfOneKeepsAcknowledged is the
// replicated/replicated cells "process crash of one" and "power loss of
// one" with 3 replicas: the messages sit in the replicas' in-memory
// journals (the flush thresholds are far), so the failed replica loses
// all it held; the others keep every acknowledged message and offset
// store, the group goes on, and the returned replica gets its lost
// prepares back from its peers (the recovery protocol) and then serves as
// primary every message acknowledged before, during and after its
// absence.
func TestAckReplicatedClusterFailureOfOneKeepsAcknowledged(t *testing.T) {
	for _, tc := range []struct {
		name      string
		powerLoss bool
		options   client.Options
	}{
		{"process crash", false, client.Options{}},
		{"power loss", true, client.Options{}},
		// persisted has no prepare WAL on several replicas yet: what it
		// gives here is what replicated gives, from the peers' memory.
		{"power loss persisted", true, client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted)).
			With(client.OptionConsumerOffsetDurability, client.StringValue(client.DurabilityPersisted))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const partitions = 3
			c := startAckCluster(t, 3, server.ClusterOptions{})
			c.createTopic(partitions, tc.options)
			acked := make([][]ackedMessage, partitions)
			sendRound := func(tag string, batches int) {
				for b := 0; b < batches; b++ {
					for p := uint32(0); p < partitions; p++ {
						acked[p] = append(acked[p], c.send(p, tag, 4)...)
					}
				}
			}
			sendRound("a", 8)
			consumer := client.IndividualConsumer(client.ID(7))
			for p := uint32(0); p < partitions; p++ {
				if err := c.nodes[c.primary(p)].client.StoreConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), p, 10+uint64(p)); err != nil {
					t.Fatalf("store offset p%d: %v", p, err)
				}
			}
			// The failed replica is partition 1's primary, right after the
			// acknowledgements.
			failed := c.primary(1)
			c.crash(failed, tc.powerLoss)
			sendRound("b", 8)
			for p := uint32(0); p < partitions; p++ {
				c.checkPoll(c.primary(p), p, acked[p])
			}

			c.boot(failed)
			for p := uint32(0); p < partitions; p++ {
				c.waitCaughtUp(failed, p)
				st, _ := c.status(failed, p)
				t.Logf("replica %d p%d after the restart: %+v", failed, p, st)
			}
			sendRound("c", 4)
			// Another replica crashes: the returned one is in every
			// remaining quorum and leads some groups. The primary of view
			// v+1 is the one after view v's (vsr.PrimaryIndex), so the
			// replica before the returned one is crashed when it leads a
			// group: that group moves to the returned replica.
			other := (failed + 1) % 3
			for p := uint32(0); p < partitions; p++ {
				if c.primary(p) == (failed+2)%3 {
					other = (failed + 2) % 3
				}
			}
			c.crash(other, tc.powerLoss)
			sendRound("d", 4)
			led := 0
			for p := uint32(0); p < partitions; p++ {
				i := c.primary(p)
				if i == failed {
					led++
				}
				c.checkPoll(i, p, acked[p])
				got, err := c.nodes[i].client.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), p)
				if err != nil || got.StoredOffset != 10+uint64(p) {
					t.Fatalf("replica %d p%d: stored offset %+v, %v; acknowledged %d", i, p, got, err, 10+p)
				}
			}
			if led == 0 {
				t.Fatalf("the returned replica %d leads no group after replica %d crashed; %s", failed, other, c.describe())
			}
		})
	}
}

// TestAckReplicatedClusterCrashOfAllKeepsFlushed is the replicated/
// replicated cell "process crash of all" with 3 replicas: every process
// crashes at once, so the in-memory journals are all gone. What the
// replicas had flushed to their segment files (messages_required_to_save
// here 10) survives, in the page cache: after the restart of all three
// the group serves every acknowledged flushed message at its offset. The
// unflushed tail may be lost (the seed: "a process-only failure can lose
// messages still in the processes' journals"); whatever comes back, no
// offset holds another message than the one acknowledged for it, and
// the group takes sends again. The replicas restart the group from their
// checkpoints (vsr/restart.go); a descriptor checkpoint every op
// (CheckpointEveryOps 1) keeps each replica's checkpoint at its flushed
// frontier, as soon as the flush is synced.
func TestAckReplicatedClusterCrashOfAllKeepsFlushed(t *testing.T) {
	c := startAckCluster(t, 3, server.ClusterOptions{CheckpointEveryOps: 1})
	c.createTopic(1, client.Options{}.With(client.OptionMessagesRequiredToSave, client.Uint32Value(10)))
	var acked []ackedMessage
	for b := 0; b < 20; b++ {
		acked = append(acked, c.send(0, "a", 5)...)
	}
	const flushed = 100 // 20 batches of 5: every one reached the threshold
	c.waitApplied(0, flushed)
	// Each replica's checkpoint reaches the op of the last flushed batch
	// once the flush is synced (the descriptor checkpoint of that op).
	st, _ := c.status(0, 0)
	flushedOp := st.CommitNumber
	c.waitFor(fmt.Sprintf("every replica's checkpoint at op %d", flushedOp), func() bool {
		for i := range c.nodes {
			if st, ok := c.status(i, 0); !ok || st.CheckpointOp < flushedOp {
				return false
			}
		}
		return true
	})
	acked = append(acked, c.send(0, "tail", 3)...)
	c.waitApplied(0, uint64(len(acked)))
	for i := range c.nodes {
		t.Logf("replica %d: segment %d bytes", i, c.fileSize(i, ackPartitionDir(0)+"/00000000000000000000.log"))
	}
	segment := ackPartitionDir(0) + "/00000000000000000000.log"
	sizes := make([]int, len(c.nodes))
	for i := range c.nodes {
		sizes[i] = c.fileSize(i, segment)
	}
	for i := range c.nodes {
		c.crash(i, false)
	}
	for i := range c.nodes {
		c.boot(i)
	}
	// Nothing flushed is destroyed by the restart: a replica cuts its
	// segments back only once it applies an op again.
	for i := range c.nodes {
		if got := c.fileSize(i, segment); got < sizes[i] {
			t.Fatalf("replica %d: the segment holds %d bytes after the restart, %d before the crash", i, got, sizes[i])
		}
	}
	leader := c.primary(0)
	got := c.pollAll(leader, 0)
	for _, a := range acked[:flushed] {
		if got[a.offset] != a.payload {
			t.Fatalf("offset %d after the crash of every process: %q, acknowledged and flushed %q", a.offset, got[a.offset], a.payload)
		}
	}
	kept := 0
	for _, a := range acked[flushed:] {
		if m, ok := got[a.offset]; ok {
			if m != a.payload {
				t.Fatalf("offset %d after the crash of every process: %q, acknowledged %q", a.offset, m, a.payload)
			}
			kept++
		}
	}
	t.Logf("after the crash of every process: %d messages served, %d flushed kept, %d of %d unflushed kept", len(got), flushed, kept, len(acked)-flushed)
	// The group goes on: a new send gets the offset after what it serves,
	// and every replica applies it.
	more := c.send(0, "after", 2)
	if more[0].offset != uint64(len(got)) {
		t.Fatalf("a send after the restart got offset %d, the group serves %d messages", more[0].offset, len(got))
	}
	c.waitApplied(0, more[1].offset+1)
	c.checkPoll(c.primary(0), 0, append(acked[:flushed:flushed], more...))
}

// pollAll polls partition p from replica i from offset 0 to its end.
func (c *testCluster) pollAll(i int, p uint32) map[uint64]string {
	c.t.Helper()
	got := map[uint64]string{}
	var polled client.PolledMessages
	next := uint64(0)
	for {
		err := c.nodes[i].client.PollMessagesInto(ctx(c.t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
			Stream: client.ID(0), Topic: client.ID(0), Partition: p, Strategy: client.PollOffset(next), Count: 1000}, &polled)
		if err != nil {
			c.t.Fatalf("poll p%d from replica %d at %d: %v", p, i, next, err)
		}
		if len(polled.Messages) == 0 {
			return got
		}
		for _, m := range polled.Messages {
			if m.Offset != next {
				c.t.Fatalf("poll p%d from replica %d: offset %d, want %d", p, i, m.Offset, next)
			}
			got[m.Offset] = string(m.Payload)
			next++
		}
	}
}

// TestAckClusterCorruptionOnMinority is the cell "disk corruption on a
// minority" with 3 replicas: a byte flips inside a flushed batch of one
// backup's segment file while it is down. On its restart that replica
// fences the partition (the batch checksum fails below the end of its
// log) and never serves the damaged bytes as a message; it repairs the
// partition by segment state transfer from a peer (the fence lifts), and
// as the primary of a later view it serves every acknowledged message
// from its own segments. The group goes on acknowledging meanwhile.
func TestAckClusterCorruptionOnMinority(t *testing.T) {
	c, acked, _, damaged := startCorruptedBackup(t, false)
	for b := 0; b < 5; b++ {
		acked = append(acked, c.send(0, "b", 5)...)
	}
	c.checkPoll(c.primary(0), 0, acked)
	// Whatever the damaged replica answers to a poll (58 as a backup, or
	// 4011 while fenced), it is never a damaged message.
	res, err := c.nodes[damaged].client.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(0), Count: 1000})
	if err == nil && len(res.Messages) > 0 {
		t.Fatalf("the damaged replica served %d messages as a backup", len(res.Messages))
	}
	t.Logf("a poll of the damaged replica: %v", err)
	c.waitFor("the damaged replica to repair its partition", func() bool {
		st, ok := c.status(damaged, 0)
		xfer, _ := c.nodes[damaged].srv.PartitionTransferStats(0, 0, 0)
		return ok && st.Fenced == "" && xfer.Installs > 0
	})
	xfer, _ := c.nodes[damaged].srv.PartitionTransferStats(0, 0, 0)
	st, _ := c.status(damaged, 0)
	t.Logf("damaged replica %d repaired: %+v, transfer %+v", damaged, st, xfer)
	c.waitCaughtUp(damaged, 0)
	c.leadWith(damaged, c.boot)
	for b := 0; b < 3; b++ {
		acked = append(acked, c.send(0, "c", 5)...)
	}
	c.checkPoll(damaged, 0, acked)
}

// TestAckClusterFencedReplicaDoesNotStallTheGroup: the same corruption on
// one replica, then the primary restarts (a crash of one, over), and the
// next view's primary is the damaged replica ((view + group) % 3): with
// two healthy replicas of three and one damaged, the group must go on
// acknowledging and serving every acknowledged message. Repaired: the
// damaged replica's transfer lifted its fence first, and it may lead.
// Unrepairable (every chunk the peers serve arrives damaged, so its
// transfer never installs): it stays fenced and must not lead; it hands
// the view on (vsr.Replica.Abdicate) and the primary of the next one
// serves.
func TestAckClusterFencedReplicaDoesNotStallTheGroup(t *testing.T) {
	for _, tc := range []struct {
		name         string
		unrepairable bool
	}{{"repaired", false}, {"unrepairable", true}} {
		t.Run(tc.name, func(t *testing.T) {
			c, acked, leader, damaged := startCorruptedBackup(t, tc.unrepairable)
			c.waitCaughtUp(damaged, 0)
			if tc.unrepairable {
				if st, _ := c.status(damaged, 0); st.Fenced == "" {
					t.Fatalf("the damaged replica is not fenced although no transfer can install: %+v", st)
				}
			}
			c.stop(leader)
			c.waitFor("a view change", func() bool {
				st, ok := c.status(damaged, 0)
				return ok && st.View > 0 && st.Status == vsr.StatusNormal
			})
			c.boot(leader)
			c.waitCaughtUp(leader, 0)
			for b := 0; b < 3; b++ {
				acked = append(acked, c.send(0, "c", 5)...)
			}
			st, _ := c.status(damaged, 0)
			xfer, _ := c.nodes[damaged].srv.PartitionTransferStats(0, 0, 0)
			t.Logf("damaged replica %d: %+v, transfer %+v", damaged, st, xfer)
			if st.Serving && st.Fenced != "" {
				t.Fatalf("a fenced replica leads its group: %+v", st)
			}
			if tc.unrepairable && (st.Fenced == "" || xfer.Installs > 0) {
				t.Fatalf("the damaged replica installed segments although every chunk was damaged: %+v, %+v", st, xfer)
			}
			c.checkPoll(c.primary(0), 0, acked)
		})
	}
}

// startCorruptedBackup starts 3 replicas of one partition, sends 100
// messages (flushed every 10) and flips a byte in the middle of the
// segment file of the backup after the primary while it is down; that
// backup is running again on return. With damagedChunks every chunk of
// a segment transfer the other replicas serve is damaged on its way.
func startCorruptedBackup(t *testing.T, damagedChunks bool) (c *ackCluster, acked []ackedMessage, leader, damaged int) {
	// Checkpoints every few ops: the damaged replica restores one that
	// names flushed messages, so its repair needs the peers' files (an
	// empty machine would be rebuilt from the ops alone).
	c = startAckCluster(t, 3, server.ClusterOptions{CheckpointEveryOps: 4})
	c.createTopic(1, client.Options{}.With(client.OptionMessagesRequiredToSave, client.Uint32Value(10)))
	for b := 0; b < 20; b++ {
		acked = append(acked, c.send(0, "a", 5)...)
	}
	c.waitApplied(0, uint64(len(acked)))
	leader = c.primary(0)
	damaged = (leader + 1) % 3
	c.stop(damaged)
	segment := ackPartitionDir(0) + "/00000000000000000000.log"
	c.corrupt(damaged, segment, int64(c.fileSize(damaged, segment)/2))
	if damagedChunks {
		damage := func(chunk []byte) {
			if len(chunk) > 0 {
				chunk[0] ^= 1
			}
		}
		for _, node := range c.nodes {
			if node != nil {
				node.srv.SetTransferServeHook(damage)
			}
		}
		c.bootHook = func(srv *server.Server) { srv.SetTransferServeHook(damage) }
	}
	c.boot(damaged)
	return c, acked, leader, damaged
}

// TestAckSingleNodePersistedOffsetsSurvivePowerLoss is the group-of-one
// cells "power loss" for consumer_offset_durability=persisted: an
// acknowledged offset store survives the loss of every unsynced write,
// with durability=persisted (the messages too) and with replicated
// messages, whose predecessors of a durable offset the seed requires to
// stay recoverable ("a durable offset's predecessor history must remain
// recoverable").
func TestAckSingleNodePersistedOffsetsSurvivePowerLoss(t *testing.T) {
	for _, tc := range []struct {
		name     string
		messages string
	}{{"persisted messages", client.DurabilityPersisted}, {"replicated messages", "replicated"}} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := &lockedFS{fs: memfs.New()}
			const dir = "/data"
			srv, addr := startOnFS(t, fsys, dir)
			c := connectTo(t, addr)
			if _, err := c.CreateStream(ctx(t), "s"); err != nil {
				t.Fatal(err)
			}
			opts := client.Options{}.With(client.OptionDurability, client.StringValue(tc.messages)).
				With(client.OptionConsumerOffsetDurability, client.StringValue(client.DurabilityPersisted))
			if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, opts); err != nil {
				t.Fatal(err)
			}
			var payloads []string
			for b := 0; b < 6; b++ {
				msgs := make([]client.Message, 5)
				for i := range msgs {
					msgs[i].Payload = []byte(fmt.Sprintf("b%d-m%d", b, i))
					payloads = append(payloads, string(msgs[i].Payload))
				}
				if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), msgs); err != nil {
					t.Fatal(err)
				}
			}
			consumer := client.IndividualConsumer(client.ID(7))
			stored := uint64(len(payloads) - 1)
			if err := c.StoreConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0, stored); err != nil {
				t.Fatal(err)
			}
			fsys.crash() // power loss right after the acknowledgement
			_ = srv.Shutdown(context.Background())

			srv, addr = startOnFS(t, fsys, dir)
			defer srv.Shutdown(context.Background())
			c = connectTo(t, addr)
			got, err := c.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0)
			if err != nil || got.StoredOffset != stored {
				t.Fatalf("the stored offset after the power loss: %+v, %v; acknowledged %d", got, err, stored)
			}
			res, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
				Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(0), Count: 1000})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("after the power loss: offset %d stored, %d of %d messages", got.StoredOffset, len(res.Messages), len(payloads))
			if uint64(len(res.Messages)) <= stored {
				t.Fatalf("the stored offset %d survived the power loss, the messages up to it did not (%d left)", stored, len(res.Messages))
			}
			for i, m := range res.Messages {
				if m.Offset != uint64(i) || string(m.Payload) != payloads[i] {
					t.Fatalf("offset %d: %q at position %d, acknowledged %q", m.Offset, m.Payload, i, payloads[i])
				}
			}
		})
	}
}

// TestAckSingleNodeReplicatedPowerLossNeverReusesOffsets is the
// group-of-one cell "power loss" for replicated/replicated: acknowledged
// messages not yet synced may be lost (flushes are written, not synced),
// but what comes back is the acknowledged message at its offset, and no
// offset an acknowledged message held is given to another one.
func TestAckSingleNodeReplicatedPowerLossNeverReusesOffsets(t *testing.T) {
	fsys := &lockedFS{fs: memfs.New()}
	const dir = "/data"
	srv, addr := startOnFS(t, fsys, dir)
	c := connectTo(t, addr)
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, client.Options{}.With(client.OptionMessagesRequiredToSave, client.Uint32Value(10))); err != nil {
		t.Fatal(err)
	}
	var payloads []string
	for b := 0; b < 7; b++ {
		msgs := make([]client.Message, 5)
		for i := range msgs {
			msgs[i].Payload = []byte(fmt.Sprintf("b%d-m%d", b, i))
			payloads = append(payloads, string(msgs[i].Payload))
		}
		if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), msgs); err != nil {
			t.Fatal(err)
		}
	}
	fsys.crash()
	_ = srv.Shutdown(context.Background())

	srv, addr = startOnFS(t, fsys, dir)
	defer srv.Shutdown(context.Background())
	c = connectTo(t, addr)
	conf, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("after")}})
	if err != nil {
		t.Fatal(err)
	}
	if conf[0].BaseOffset < uint64(len(payloads)) {
		t.Fatalf("a send after the power loss got offset %d, which an acknowledged message held (%d acknowledged)", conf[0].BaseOffset, len(payloads))
	}
	res, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(0), Count: 1000})
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, m := range res.Messages {
		switch {
		case m.Offset < uint64(len(payloads)) && string(m.Payload) == payloads[m.Offset]:
			kept++
		case m.Offset == conf[0].BaseOffset && string(m.Payload) == "after":
		default:
			t.Fatalf("offset %d after the power loss: %q", m.Offset, m.Payload)
		}
	}
	t.Logf("after the power loss: %d of %d acknowledged messages kept; the next send got offset %d", kept, len(payloads), conf[0].BaseOffset)
}

// TestAckReplicatedClusterCrashOfMinorityKeepsAcknowledged is the cell
// "process crash of a minority" with 5 replicas (replication and
// view-change quorums of 3): two replicas crash at once, one of them a
// primary; the other three keep every acknowledged message and go on;
// the two come back, recover from their peers, and after two others
// crash the group still serves every acknowledged message.
func TestAckReplicatedClusterCrashOfMinorityKeepsAcknowledged(t *testing.T) {
	const partitions = 2
	c := startAckCluster(t, 5, server.ClusterOptions{})
	c.createTopic(partitions, client.Options{})
	acked := make([][]ackedMessage, partitions)
	sendRound := func(tag string, batches int) {
		for b := 0; b < batches; b++ {
			for p := uint32(0); p < partitions; p++ {
				acked[p] = append(acked[p], c.send(p, tag, 4)...)
			}
		}
	}
	sendRound("a", 6)
	first := c.primary(0)
	second := (first + 2) % 5
	c.crash(first, false)
	c.crash(second, false)
	sendRound("b", 6)
	for p := uint32(0); p < partitions; p++ {
		c.checkPoll(c.primary(p), p, acked[p])
	}
	c.boot(first)
	c.boot(second)
	for p := uint32(0); p < partitions; p++ {
		c.waitCaughtUp(first, p)
		c.waitCaughtUp(second, p)
	}
	sendRound("c", 3)
	for _, i := range []int{(first + 1) % 5, (first + 3) % 5} {
		c.crash(i, false)
	}
	sendRound("d", 3)
	for p := uint32(0); p < partitions; p++ {
		c.checkPoll(c.primary(p), p, acked[p])
	}
}

// TestAckClusterConsensusFileCorruptionOnMinority is the cell "disk
// corruption on a minority" for the consensus superblock: one replica's
// copies (its slot of the node's superblocks.sb) are damaged while it is
// down. One damaged superblock copy: the replica
// uses the other, recovers from its peers and catches up. Both copies
// (the replica lost its consensus state: its view, its log view, what it
// acked): the server starts and that partition alone is fenced on that
// replica (its other partition serves), the replica does not come back
// as a healthy empty member: while only the primary answers it (the
// third replica down) it stays recovering and fenced, since the recovery
// of a replica that lost its memory needs a view-change quorum of peers
// with the primary. Once the third replica is back it recovers, the
// fence lifts, and as the primary of a later view it serves every
// acknowledged message. The group serves every acknowledged message
// throughout.
func TestAckClusterConsensusFileCorruptionOnMinority(t *testing.T) {
	const superblockZone = 0 // FORMATS.md: the slot's zone, after its header: two 4 KiB copies
	for _, tc := range []struct {
		name       string
		offsets    []int64
		durability string
		opts       server.ClusterOptions
	}{
		{"one superblock copy", []int64{superblockZone + 64}, "replicated", server.ClusterOptions{}},
		{"both superblock copies", []int64{superblockZone + 64, superblockZone + 4096 + 64}, "replicated", server.ClusterOptions{}},
		// A persisted topic's partition has a prepare WAL: the replica
		// wipes its journal too (it can vouch for none of its records).
		{"both superblock copies persisted", []int64{superblockZone + 64, superblockZone + 4096 + 64}, client.DurabilityPersisted, server.ClusterOptions{}},
		// The peers' journals no longer reach op 1 from their checkpoints:
		// the replica recovers by state transfer of a checkpoint first.
		{"both superblock copies behind the journals", []int64{superblockZone + 64, superblockZone + 4096 + 64}, "replicated",
			server.ClusterOptions{JournalSlots: 32, CheckpointEveryOps: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startAckCluster(t, 3, tc.opts)
			c.createTopic(2, client.Options{}.With(client.OptionMessagesRequiredToSave, client.Uint32Value(10)).
				With(client.OptionDurability, client.StringValue(tc.durability)))
			var acked, acked1 []ackedMessage
			for b := 0; b < 10; b++ {
				acked = append(acked, c.send(0, "a", 5)...)
				acked1 = append(acked1, c.send(1, "a", 5)...)
			}
			c.waitApplied(0, uint64(len(acked)))
			damaged := (c.primary(0) + 1) % 3
			before, _ := c.status(damaged, 0)
			c.stop(damaged)
			sbFile := server.SuperblockFile(ackDataDir)
			d := c.disks[damaged]
			d.mu.Lock()
			image, _ := d.fs.ReadFile(sbFile)
			d.mu.Unlock()
			zone, _, ok := server.SuperblockZoneAt(image, before.Group)
			if !ok {
				t.Fatalf("replica %d has no superblock slot for partition 0", damaged)
			}
			for _, off := range tc.offsets {
				c.corrupt(damaged, sbFile, zone+off)
			}
			if len(tc.offsets) == 1 {
				err := c.tryBoot(damaged)
				t.Logf("the damaged replica's start: %v", err)
				for b := 0; b < 5; b++ {
					acked = append(acked, c.send(0, "b", 5)...)
				}
				c.checkPoll(c.primary(0), 0, acked)
				if err != nil {
					t.Fatalf("one damaged superblock copy stopped the replica: %v", err)
				}
				c.waitCaughtUp(damaged, 0)
				st, _ := c.status(damaged, 0)
				t.Logf("damaged replica %d: %+v", damaged, st)
				return
			}
			batches := 5
			if tc.opts.JournalSlots > 0 {
				batches += int(tc.opts.JournalSlots) // past the journal window
			}
			for b := 0; b < batches; b++ {
				acked = append(acked, c.send(0, "b", 5)...)
			}
			// The damaged replica hears only the primary: the link to the
			// third replica is cut both ways.
			third := uint8(3 - damaged - c.primary(0))
			cut := func(from, to uint8) bool {
				return (from == third && to == uint8(damaged)) || (from == uint8(damaged) && to == third)
			}
			c.bus.cut.Store(&cut)
			if err := c.tryBoot(damaged); err != nil {
				t.Fatalf("a partition without a valid consensus superblock stopped the whole server: %v", err)
			}
			st, ok := c.status(damaged, 0)
			t.Logf("damaged replica %d hearing only the primary: %+v (%v)", damaged, st, ok)
			if !ok || st.Fenced == "" || st.Status == vsr.StatusNormal {
				t.Fatalf("a replica without a valid consensus superblock runs as a healthy member: %+v (%v)", st, ok)
			}
			for b := 0; b < 3; b++ {
				acked = append(acked, c.send(0, "b", 5)...)
			}
			st, ok = c.status(damaged, 0)
			t.Logf("damaged replica %d after more sends: %+v (%v)", damaged, st, ok)
			if !ok || st.Fenced == "" || st.Status == vsr.StatusNormal {
				t.Fatalf("a replica without a valid consensus superblock became a healthy member with only the primary's answer: %+v (%v)", st, ok)
			}
			c.bus.cut.Store(nil)
			c.waitFor("the replica without a superblock to recover and lift its fence", func() bool {
				st, ok := c.status(damaged, 0)
				return ok && st.Fenced == "" && st.Status == vsr.StatusNormal
			})
			c.waitCaughtUp(damaged, 0)
			c.waitCaughtUp(damaged, 1)
			st, _ = c.status(damaged, 0)
			xfer, _ := c.nodes[damaged].srv.PartitionTransferStats(0, 0, 0)
			t.Logf("damaged replica %d recovered: %+v, segment transfer %+v", damaged, st, xfer)
			if tc.opts.JournalSlots > 0 && st.CheckpointOp == 0 {
				t.Fatalf("the replica recovered behind the journals without a checkpoint: %+v", st)
			}
			if st1, _ := c.status(damaged, 1); st1.Fenced != "" {
				t.Fatalf("the undamaged partition of the damaged replica is fenced: %+v", st1)
			}
			c.leadWith(damaged, c.boot)
			for b := 0; b < 3; b++ {
				acked = append(acked, c.send(0, "c", 5)...)
			}
			c.checkPoll(damaged, 0, acked)
			c.checkPoll(c.primary(1), 1, acked1)
		})
	}
}
