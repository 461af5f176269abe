package group_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/group/grouptest"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

func testConfig(replicas uint8, groupID uint64, durability vsr.Durability) group.Config {
	rc := vsr.DefaultConfig(1, replicas, 0)
	rc.Group = groupID
	rc.Durability = durability
	rc.JournalSlots = 64
	rc.PipelinePrepareMax = 4
	rc.MessageSizeMax = 64 << 10
	rc.WALBytesMax = 16 << 20
	rc.CheckpointSizeMax = 1 << 20
	return group.Config{Replica: rc, Partition: partition.Config{StreamID: 1, TopicID: 1, PartitionID: 1, MessagesRequiredToSave: 8}}
}

func newCluster(t *testing.T, cfg group.Config, persistedSegments bool) *grouptest.Cluster {
	t.Helper()
	c, err := grouptest.New(cfg, persistedSegments)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// workload sends batches with unique message ids and remembers what every
// acknowledged send put where.
type workload struct {
	t      *testing.T
	c      *grouptest.Cluster
	client vsr.Uint128
	req    uint64
	next   uint64 // next message id
	// acked maps an acknowledged offset to its payload.
	acked map[uint64]string
	// retries counts sends answered 57/58 and sent again.
	retries int
}

func newWorkload(t *testing.T, c *grouptest.Cluster) *workload {
	return &workload{t: t, c: c, client: vsr.Uint128{Lo: 77, Hi: 1}, acked: map[uint64]string{}}
}

func batch(t *testing.T, firstID uint64, n int) ([]byte, []string) {
	t.Helper()
	var bb wire.BatchBuilder
	var payloads []string
	for i := range n {
		id := firstID + uint64(i)
		p := fmt.Sprintf("m%d", id)
		if err := bb.Add(wire.MessageID{Low: id}, []byte(p), nil, 1000+id); err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, p)
	}
	b, err := bb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), b...), payloads
}

// submit hands node one operation and returns the answers it got once the
// cluster is quiet.
func (w *workload) submit(node int, operation uint8, body []byte) []grouptest.Answer {
	w.req++
	w.c.Nodes[node].Host.Submit(w.client, w.req, operation, body)
	w.c.Deliver(1_000_000)
	return w.answers(w.req)
}

func (w *workload) answers(request uint64) []grouptest.Answer {
	var mine []grouptest.Answer
	for _, a := range w.c.TakeReplies() {
		if a.Client == w.client && a.Request == request {
			mine = append(mine, a)
		}
	}
	return mine
}

// send sends n messages to node and returns the committed answer, or the
// last transient one.
func (w *workload) send(node, n int) grouptest.Answer {
	w.t.Helper()
	b, payloads := batch(w.t, w.next+1, n)
	w.next += uint64(n)
	body := partition.EncodeSendMessages(partition.Envelope{UserID: 1}, b)
	answers := w.submit(node, partition.OperationSendMessages, body)
	if len(answers) != 1 {
		w.t.Fatalf("%d answers to one send:\n%v\n%s", len(answers), answers, w.c.Status())
	}
	a := answers[0]
	if base, ok := a.BaseOffset(); ok {
		for i, p := range payloads {
			w.acked[base+uint64(i)] = p
		}
	}
	return a
}

// sendCommitted sends n messages through whichever replica is primary,
// again on every transient answer, ticking between attempts.
func (w *workload) sendCommitted(n int) uint64 {
	w.t.Helper()
	for attempt := 0; attempt < 200; attempt++ {
		p := w.c.Primary()
		if p < 0 {
			w.c.Tick(5)
			continue
		}
		a := w.send(p, n)
		if base, ok := a.BaseOffset(); ok {
			return base
		}
		if a.Code != wire.ErrTransientNotAccepted && a.Code != wire.ErrTransientNotCommitted {
			w.t.Fatalf("send answered %d (%s)", a.Code, a.Disposition)
		}
		w.retries++
		w.c.Tick(5)
	}
	w.t.Fatalf("no send committed:\n%s", w.c.Status())
	return 0
}

// checkAcked fails unless node's applied log holds every acknowledged
// message at its offset.
func (w *workload) checkAcked(node int) {
	w.t.Helper()
	got := map[uint64]string{}
	for _, m := range w.c.Poll(node, 0, 1<<20) {
		got[m.Offset] = m.Payload
	}
	for off, p := range w.acked {
		if got[off] != p {
			w.t.Fatalf("replica %d: acknowledged offset %d holds %q, want %q\n%s", node, off, got[off], p, w.c.Status())
		}
	}
}

func (w *workload) storeOffset(node int, consumer uint32, offset uint64) grouptest.Answer {
	w.t.Helper()
	body := partition.StoreConsumerOffset{Consumer: partition.ConsumerKey{Kind: partition.ConsumerKindConsumer, ID: consumer}, Offset: offset}.Encode(partition.Envelope{})
	answers := w.submit(node, partition.OperationStoreConsumerOffset, body)
	if len(answers) != 1 {
		w.t.Fatalf("%d answers to a store", len(answers))
	}
	return answers[0]
}

// TestSingleNodeGroup runs a group of one on the same path: sends commit
// with contiguous base offsets, polls read them, an offset store commits,
// and a restart (persisted) brings all of it back.
func TestSingleNodeGroup(t *testing.T) {
	c := newCluster(t, testConfig(1, 0, vsr.Persisted), false)
	w := newWorkload(t, c)
	for i, want := range []uint64{0, 3, 6, 9} {
		a := w.send(0, 3)
		if base, ok := a.BaseOffset(); !ok || base != want || a.Op == 0 {
			t.Fatalf("send %d: base %d ok %v code %d, want base %d", i, base, ok, a.Code, want)
		}
	}
	if a := w.storeOffset(0, 5, 7); a.Code != wire.ErrorCodeOK {
		t.Fatalf("store offset: %d", a.Code)
	}
	w.checkAcked(0)
	if c.Nodes[0].Segments.FlushedMessages() == 0 {
		t.Fatal("nothing reached the segments past the flush threshold")
	}
	c.Crash(0)
	if err := c.Start(0); err != nil {
		t.Fatal(err)
	}
	view := c.Nodes[0].Host.View()
	if view.NextOffset() != 12 {
		t.Fatalf("after restart next offset %d, want 12", view.NextOffset())
	}
	if off, ok := view.StoredOffset(partition.ConsumerKey{Kind: partition.ConsumerKindConsumer, ID: 5}); !ok || off != 7 {
		t.Fatalf("stored offset after restart: %d %v", off, ok)
	}
	w.checkAcked(0)
	if base := w.sendCommitted(2); base != 12 {
		t.Fatalf("send after restart at %d, want 12", base)
	}
}

// TestSendAndPollThroughThePrimary runs a group whose primary is replica 1
// (group 1): sends to it commit on every replica, a send to a backup is
// answered 58, and polls read applied state only.
func TestSendAndPollThroughThePrimary(t *testing.T) {
	c := newCluster(t, testConfig(3, 1, vsr.Replicated), false)
	if p := c.Primary(); p != 1 {
		t.Fatalf("primary of group 1 in view 0 is replica %d", p)
	}
	w := newWorkload(t, c)
	for range 5 {
		if _, ok := w.send(1, 4).BaseOffset(); !ok {
			t.Fatalf("send to the primary did not commit:\n%s", c.Status())
		}
	}
	a := w.send(0, 1)
	if a.Code != wire.ErrTransientNotAccepted || a.Disposition != vsr.DispositionNotPrimary || a.Node != 0 {
		t.Fatalf("send to a backup: %+v", a)
	}
	c.Tick(20)
	w.checkAcked(1)
	for i := range c.Nodes {
		if got := c.Nodes[i].Host.View().NextOffset(); got != 20 {
			t.Fatalf("replica %d next offset %d, want 20", i, got)
		}
		w.checkAcked(i)
	}
	msgs := c.Poll(1, 6, 3)
	if len(msgs) != 3 || msgs[0].Offset != 6 || msgs[0].Payload != "m7" || msgs[2].Offset != 8 {
		t.Fatalf("poll 6..8: %+v", msgs)
	}
}

// TestPollNeverBeyondCommit prepares a send the backups never see: the
// primary's applied state (and so every poll) stays at the committed log
// until a quorum holds the prepare.
func TestPollNeverBeyondCommit(t *testing.T) {
	c := newCluster(t, testConfig(3, 0, vsr.Replicated), false)
	w := newWorkload(t, c)
	w.send(0, 2)
	c.Isolate(1, true)
	c.Isolate(2, true)
	answers := w.submit(0, partition.OperationSendMessages, partition.EncodeSendMessages(partition.Envelope{}, mustBatch(t, 100, 3)))
	if len(answers) != 0 {
		t.Fatalf("an uncommitted send was answered: %+v", answers)
	}
	if r := c.Nodes[0].Host.Replica(); r.OpNumber() != r.CommitNumber()+1 {
		t.Fatalf("the send is not prepared and uncommitted:\n%s", c.Status())
	}
	if next := c.Nodes[0].Host.View().NextOffset(); next != 2 {
		t.Fatalf("applied state shows %d messages before commit, want 2", next)
	}
	if msgs := c.Poll(0, 0, 100); len(msgs) != 2 {
		t.Fatalf("poll served %d messages past the commit frontier", len(msgs))
	}
	c.Isolate(1, false)
	c.Isolate(2, false)
	c.Tick(30)
	replies := c.TakeReplies()
	if len(replies) != 1 || replies[0].Code != wire.ErrorCodeOK {
		t.Fatalf("once healed: %+v", replies)
	}
	if msgs := c.Poll(0, 0, 100); len(msgs) != 5 {
		t.Fatalf("after commit the poll serves %d messages, want 5", len(msgs))
	}
}

// TestCrashedReplicaCatchesUp crashes a backup, keeps sending, restarts it
// (replicated: it lost its prepares and runs recovery) and checks that it
// applies the whole log again.
func TestCrashedReplicaCatchesUp(t *testing.T) {
	c := newCluster(t, testConfig(3, 0, vsr.Replicated), false)
	w := newWorkload(t, c)
	for range 3 {
		w.sendCommitted(3)
	}
	c.Crash(2)
	for range 6 {
		w.sendCommitted(3)
	}
	if err := c.Start(2); err != nil {
		t.Fatal(err)
	}
	if s := c.Nodes[2].Host.Replica().Status(); s != vsr.StatusRecovering {
		t.Fatalf("restarted replicated replica is %s, want recovering", s)
	}
	c.Tick(100)
	if got, want := c.Nodes[2].Host.View().NextOffset(), c.Nodes[0].Host.View().NextOffset(); got != want || want != 27 {
		t.Fatalf("restarted replica at next offset %d, primary %d (want 27)\n%s", got, want, c.Status())
	}
	w.checkAcked(2)
	w.sendCommitted(1)
	c.Tick(20)
	w.checkAcked(2)
}

// TestPrimaryFailover crashes the primary: a view change elects another,
// sends continue through it, no acknowledged message is lost, and the old
// primary rejoins and catches up.
func TestPrimaryFailover(t *testing.T) {
	c := newCluster(t, testConfig(3, 2, vsr.Replicated), false)
	w := newWorkload(t, c)
	for range 4 {
		w.sendCommitted(5)
	}
	// One more send is in flight when the primary dies: its prepare
	// reached the backups, their acks did not come back.
	old := c.Primary()
	b, payloads := batch(t, w.next+1, 5)
	w.next += 5
	w.req++
	inflight := w.req
	c.Nodes[old].Host.Submit(w.client, inflight, partition.OperationSendMessages, partition.EncodeSendMessages(partition.Envelope{}, b))
	c.Deliver(2)
	c.Crash(old)
	c.Tick(300)
	// The new primary holds the prepare and commits it in the new view.
	// It does not answer it: the request was submitted to the old
	// primary, whose waiter went with its process (a host answers only
	// the requests submitted to it, waiters.go), and the same client and
	// request number may name another request at the new primary.
	if a := w.answers(inflight); len(a) != 0 {
		t.Fatalf("the new primary answered a request submitted to the crashed one: %v", a)
	}
	p := c.Primary()
	if p < 0 || p == old {
		t.Fatalf("no new primary after replica %d crashed:\n%s", old, c.Status())
	}
	if got := c.Nodes[p].Host.View().NextOffset(); got != 25 {
		t.Fatalf("the send in flight at the crash was not committed by the new primary (next offset %d)\n%s", got, c.Status())
	}
	for i, pl := range payloads {
		w.acked[20+uint64(i)] = pl // committed: checked below as acknowledged
	}
	for range 4 {
		w.sendCommitted(5)
	}
	w.checkAcked(p)
	if err := c.Start(old); err != nil {
		t.Fatal(err)
	}
	c.Tick(200)
	for i := range c.Nodes {
		w.checkAcked(i)
	}
	if len(w.acked) != 45 {
		t.Fatalf("%d messages acknowledged, want 45", len(w.acked))
	}
	t.Logf("failover: new primary %d, %d sends retried on a transient answer", p, w.retries)
}

// TestStateTransferAfterFallingBehind restarts a replica after the group
// moved more than a journal past it: its peers' journals no longer hold
// the ops it lacks, so it installs a peer's checkpoint and applies the tail.
func TestStateTransferAfterFallingBehind(t *testing.T) {
	cfg := testConfig(3, 0, vsr.Replicated)
	cfg.Replica.JournalSlots = 16
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	w.sendCommitted(2)
	c.Crash(1)
	for range 40 {
		w.sendCommitted(2)
	}
	if cp := c.Nodes[0].Host.Replica().CheckpointOp(); cp <= 16 {
		t.Fatalf("primary checkpoint at %d: the journal still reaches back to op 1", cp)
	}
	resets := c.Nodes[1].Segments.Resets
	if err := c.Start(1); err != nil {
		t.Fatal(err)
	}
	c.Tick(300)
	r := c.Nodes[1].Host.Replica()
	if r.CheckpointOp() == 0 || c.Nodes[1].Segments.Resets <= resets {
		t.Fatalf("replica 1 did not install a checkpoint (checkpoint %d, resets %d)\n%s", r.CheckpointOp(), c.Nodes[1].Segments.Resets, c.Status())
	}
	primary := c.Nodes[c.Primary()].Host.View()
	v := c.Nodes[1].Host.View()
	if v.NextOffset() != primary.NextOffset() || v.NextOffset() != 82 || v.LastOp() != primary.LastOp() {
		t.Fatalf("replica 1 at next offset %d op %d, primary %d op %d\n%s", v.NextOffset(), v.LastOp(), primary.NextOffset(), primary.LastOp(), c.Status())
	}
	// The checkpoint carries the machine and its unflushed batches, not
	// the segments flushed while the replica was down: those come with
	// segment state transfer, a later step. Everything from the
	// checkpoint's unflushed batches on is here.
	first, _ := v.FirstUnflushedOffset()
	tail := c.Poll(1, first, 1<<20)
	if len(tail) == 0 || tail[len(tail)-1].Offset != 81 {
		t.Fatalf("tail from %d: %+v", first, tail)
	}
	for _, m := range tail {
		if w.acked[m.Offset] != m.Payload {
			t.Fatalf("offset %d holds %q, acknowledged %q", m.Offset, m.Payload, w.acked[m.Offset])
		}
	}
	t.Logf("state transfer: checkpoint op %d, flushed messages on the transferred replica %d of %d below offset %d",
		r.CheckpointOp(), c.Nodes[1].Segments.FlushedMessages(), first, first)
}

// TestSendsAreAtLeastOnce submits the same request number twice: both
// commit, at different offsets (PROTOCOL.md 1.9: the partition plane does
// not deduplicate).
func TestSendsAreAtLeastOnce(t *testing.T) {
	c := newCluster(t, testConfig(3, 0, vsr.Replicated), false)
	client := vsr.Uint128{Lo: 5}
	body := partition.EncodeSendMessages(partition.Envelope{}, mustBatch(t, 1, 2))
	for range 2 {
		c.Nodes[0].Host.Submit(client, 1, partition.OperationSendMessages, body)
	}
	c.Deliver(1_000_000)
	var bases []uint64
	for _, a := range c.TakeReplies() {
		if base, ok := a.BaseOffset(); ok && a.Client == client && a.Request == 1 {
			bases = append(bases, base)
		}
	}
	if len(bases) != 2 || bases[0] != 0 || bases[1] != 2 {
		t.Fatalf("two sends with request number 1 committed at %v, want [0 2]", bases)
	}
}

// TestPersistedReplyWaitsForTheSegmentSync makes every send flush (a
// persisted topic): its reply is held until the segment sync completes,
// while an offset store (no flush) is answered when it applies.
func TestPersistedReplyWaitsForTheSegmentSync(t *testing.T) {
	cfg := testConfig(1, 0, vsr.Replicated)
	cfg.Partition.FlushEveryBatch = true
	c := newCluster(t, cfg, true)
	h := c.Nodes[0].Host
	h.Submit(vsr.Uint128{Lo: 1}, 1, partition.OperationSendMessages, partition.EncodeSendMessages(partition.Envelope{}, mustBatch(t, 1, 2)))
	if got := c.TakeReplies(); len(got) != 0 {
		t.Fatalf("answered before the segment sync: %+v", got)
	}
	c.PumpIO()
	got := c.TakeReplies()
	if len(got) != 1 || got[0].Code != wire.ErrorCodeOK {
		t.Fatalf("after the sync: %+v", got)
	}
	h.Submit(vsr.Uint128{Lo: 1}, 2, partition.OperationStoreConsumerOffset,
		partition.StoreConsumerOffset{Consumer: partition.ConsumerKey{Kind: partition.ConsumerKindConsumer, ID: 1}, Offset: 1}.Encode(partition.Envelope{}))
	if got := c.TakeReplies(); len(got) != 1 || got[0].Code != wire.ErrorCodeOK {
		t.Fatalf("offset store: %+v", got)
	}
}

// TestDispositionCodes checks the mapping of every vsr disposition to the
// client's code, and the answers a running group gives: a backup 58, a
// full primary 58, a replica in a view change 57.
func TestDispositionCodes(t *testing.T) {
	want := map[vsr.Disposition]wire.ErrorCode{
		vsr.DispositionNone:           wire.ErrorCodeOK,
		vsr.DispositionNotPrimary:     58,
		vsr.DispositionOverloaded:     58,
		vsr.DispositionViewChange:     57,
		vsr.DispositionBehind:         57,
		vsr.DispositionInFlight:       57,
		vsr.DispositionDropped:        57,
		vsr.DispositionAlreadyApplied: 59,
		vsr.DispositionTooLarge:       wire.ErrTooBigMessagePayload,
		vsr.DispositionInvalid:        wire.ErrInvalidCommand,
	}
	for d := vsr.Disposition(0); d < 16; d++ {
		code, known := want[d]
		if !known {
			code = wire.ErrInvalidCommand
		}
		if got := group.Code(d); got != code {
			t.Errorf("Code(%s) = %d, want %d", d, got, code)
		}
	}

	cfg := testConfig(3, 0, vsr.Replicated)
	cfg.Replica.RequestQueueMax = 0
	c := newCluster(t, cfg, false)
	body := partition.EncodeSendMessages(partition.Envelope{}, mustBatch(t, 1, 1))
	for i := range cfg.Replica.PipelinePrepareMax + 1 {
		c.Nodes[0].Host.Submit(vsr.Uint128{Lo: 9}, uint64(i+1), partition.OperationSendMessages, body)
	}
	over := c.TakeReplies()
	if len(over) != 1 || over[0].Code != 58 || over[0].Disposition != vsr.DispositionOverloaded {
		t.Fatalf("overloaded primary answered %+v", over)
	}
	c.Deliver(1_000_000)
	c.TakeReplies()
	// An isolated backup times out and stays in its view change.
	c.Isolate(2, true)
	for ticks := 0; ticks < 1000 && c.Nodes[2].Host.Replica().Status() != vsr.StatusViewChange; ticks++ {
		c.Tick(1)
	}
	c.TakeReplies()
	c.Nodes[2].Host.Submit(vsr.Uint128{Lo: 9}, 99, partition.OperationSendMessages, body)
	got := c.TakeReplies()
	if len(got) != 1 || got[0].Code != 57 || got[0].Disposition != vsr.DispositionViewChange {
		t.Fatalf("replica in a view change answered %+v\n%s", got, c.Status())
	}
}

// TestFailedEffectIsReported fails the flush of a committed send: the send
// is answered with the failure's status and the host reports the error
// for the binding to fence the partition.
func TestFailedEffectIsReported(t *testing.T) {
	cfg := testConfig(1, 0, vsr.Replicated)
	cfg.Partition.FlushEveryBatch = true
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	if a := w.send(0, 1); a.Code != wire.ErrorCodeOK || c.Nodes[0].Host.Err() != nil {
		t.Fatalf("healthy send: %+v, err %v", a, c.Nodes[0].Host.Err())
	}
	disk := errors.New("disk full")
	c.Nodes[0].Segments.FailNext = disk
	a := w.send(0, 1)
	if a.Code != wire.ErrCannotSaveMessagesToSegment || !errors.Is(a.Err, disk) || a.Op == 0 {
		t.Fatalf("send whose flush failed: %+v", a)
	}
	if err := c.Nodes[0].Host.Err(); !errors.Is(err, disk) {
		t.Fatalf("host error %v", err)
	}
}

// TestIdleGroupMemory logs what an opened, idle group host costs, for the
// idle-partition budget of issue 13 (a figure, not an assertion).
func TestIdleGroupMemory(t *testing.T) {
	for _, slots := range []uint64{1024, 64, 16} {
		cfg := testConfig(1, 0, vsr.Replicated)
		cfg.Replica.JournalSlots = slots
		cfg.Replica.MessageSizeMax = 1 << 20 // a DoViewChange holds a journal of headers
		const n = 100
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		clusters := make([]*grouptest.Cluster, n)
		for i := range clusters {
			clusters[i] = newCluster(t, cfg, false)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		t.Logf("journal slots %4d: %d bytes of heap per idle single-replica group (host, replica, machine, in-memory storage)",
			slots, (after.HeapAlloc-before.HeapAlloc)/n)
		runtime.KeepAlive(clusters)
	}
}

func mustBatch(t *testing.T, firstID uint64, n int) []byte {
	b, _ := batch(t, firstID, n)
	return b
}

// TestDescriptorCheckpoints: with CheckpointEveryOps the group's
// checkpoints are partition descriptors, taken only at ops after which
// nothing is unflushed and only once the segments' sync completed: the
// checkpoint holds no batch, and a restart of the group of one restores
// it and keeps every flushed message. When no flush threshold fires for
// three quarters of the journal window, the host flushes to take one.
func TestDescriptorCheckpoints(t *testing.T) {
	cfg := testConfig(1, 3, vsr.Replicated)
	cfg.CheckpointEveryOps = 8
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	for range 40 {
		w.sendCommitted(3) // 8 messages flush: every third send
	}
	n := c.Nodes[0]
	r := n.Host.Replica()
	if r.CheckpointOp() == 0 || n.Segments.CheckpointSyncs == 0 {
		t.Fatalf("no descriptor checkpoint after 40 sends (checkpoint op %d, syncs %d)", r.CheckpointOp(), n.Segments.CheckpointSyncs)
	}
	if r.CheckpointOp()%3 != 0 {
		t.Fatalf("checkpoint at op %d: not an op after which nothing was unflushed (every third send flushes)", r.CheckpointOp())
	}
	if n.Segments.ForcedFlushes != 0 {
		t.Fatalf("%d forced flushes although the threshold fires every 3 ops", n.Segments.ForcedFlushes)
	}
	flushed := n.Segments.FlushedMessages()
	c.Crash(0)
	if err := c.Start(0); err != nil {
		t.Fatal(err)
	}
	if got := n.Host.View().NextOffset(); got < r.CheckpointOp()*3 {
		t.Fatalf("restored next offset %d below the checkpoint's %d", got, r.CheckpointOp()*3)
	}
	if n.Segments.FlushedMessages() != min(flushed, n.Host.View().NextOffset()) {
		t.Fatalf("segments hold %d messages after the restart, %d before, next offset %d", n.Segments.FlushedMessages(), flushed, n.Host.View().NextOffset())
	}

	// No threshold: 1000 messages to save, single-message sends.
	cfg = testConfig(1, 4, vsr.Replicated)
	cfg.CheckpointEveryOps = 8
	cfg.Partition.MessagesRequiredToSave = 1000
	c = newCluster(t, cfg, false)
	w = newWorkload(t, c)
	for range int(cfg.Replica.JournalSlots) * 2 {
		w.sendCommitted(1)
	}
	n = c.Nodes[0]
	if n.Segments.ForcedFlushes == 0 || n.Host.Replica().CheckpointOp() == 0 {
		t.Fatalf("the journal window passed without a checkpoint: %d forced flushes, checkpoint op %d", n.Segments.ForcedFlushes, n.Host.Replica().CheckpointOp())
	}
	if w.retries != 0 {
		t.Fatalf("%d sends were pushed back: the checkpoint came too late", w.retries)
	}
}

func TestReplicatedSingletonRestartsFromItsCheckpoint(t *testing.T) {
	cfg := testConfig(1, 0, vsr.Replicated)
	cfg.Replica.CheckpointIntervalOps = 2
	c := newCluster(t, cfg, false)
	h := c.Nodes[0].Host
	client := vsr.Uint128{Lo: 9, Hi: 1}
	for req := uint64(1); req <= 12; req++ {
		h.Submit(client, req, partition.OperationSendMessages, partition.EncodeSendMessages(partition.Envelope{}, mustBatch(t, req, 1)))
		if req%3 == 0 {
			c.PumpIO()
		}
	}
	c.PumpIO()
	r := h.Replica()
	if r.CheckpointOp() == 0 || r.CheckpointOp() >= r.CommitNumber() {
		t.Fatalf("want a checkpoint below the commit: checkpoint %d commit %d", r.CheckpointOp(), r.CommitNumber())
	}
	c.Crash(0)
	if err := c.Start(0); err != nil {
		t.Fatal(err)
	}
	c.Tick(5)
	r = c.Nodes[0].Host.Replica()
	if r.Status() != vsr.StatusNormal || r.CommitNumber() != r.CommitMax() || r.CommitMax() > r.OpNumber() {
		t.Fatalf("after restart: %s", c.Status())
	}
	c.TakeReplies()
	c.Nodes[0].Host.Submit(client, 100, partition.OperationSendMessages, partition.EncodeSendMessages(partition.Envelope{}, mustBatch(t, 100, 1)))
	c.PumpIO()
	if got := c.TakeReplies(); len(got) != 1 || got[0].Code != wire.ErrorCodeOK {
		t.Fatalf("send after restart: %+v\n%s", got, c.Status())
	}
}

func TestRestoreOverMissingSegmentsFences(t *testing.T) {
	cfg := testConfig(3, 0, vsr.Replicated)
	cfg.Replica.JournalSlots = 16
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	w.sendCommitted(2)
	c.Crash(1)
	for range 40 {
		w.sendCommitted(2)
	}
	missing := errors.New("segments lack the checkpoint's history")
	c.Nodes[1].Segments.FailRestore = missing
	if err := c.Start(1); err != nil {
		t.Fatal(err)
	}
	c.Tick(300)
	r := c.Nodes[1].Host.Replica()
	if r.CheckpointOp() == 0 || r.CommitNumber() < r.CheckpointOp() {
		t.Fatalf("replica 1: checkpoint %d commit %d\n%s", r.CheckpointOp(), r.CommitNumber(), c.Status())
	}
	if err := c.Nodes[1].Host.Err(); !errors.Is(err, missing) {
		t.Fatalf("replica 1 not fenced: Err() = %v", err)
	}
	if v := c.Nodes[1].Host.View(); v.LastOp() != r.CommitNumber() {
		t.Fatalf("replica 1's machine at op %d, its commit %d", v.LastOp(), r.CommitNumber())
	}
	w.sendCommitted(2)
}

func TestPrimaryWithMissingStateDoesNotServe(t *testing.T) {
	cfg := testConfig(1, 0, vsr.Persisted)
	cfg.Replica.CheckpointIntervalOps = 2
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	for range 4 {
		w.sendCommitted(2)
	}
	if c.Nodes[0].Host.Replica().CheckpointOp() == 0 {
		t.Fatal("no checkpoint")
	}
	c.Crash(0)
	c.Nodes[0].Storage.Corrupt(vsr.ZoneCheckpoint)
	if err := c.Start(0); err != nil {
		t.Fatal(err)
	}
	h := c.Nodes[0].Host
	r := h.Replica()
	if !r.Behind() || r.CommitNumber() == 0 {
		t.Fatalf("want a replica that counts ops applied without their state: behind=%v\n%s", r.Behind(), c.Status())
	}
	if h.Serving() {
		t.Fatalf("a primary without its state serves reads (next offset %d at commit %d)", h.View().NextOffset(), r.CommitNumber())
	}
}

// read submits a read to node's host and ticks (up to ticks times) until
// it is answered; served says what the read would return, at the moment
// it is served. It returns the disposition and whether it was answered.
func read(c *grouptest.Cluster, node, ticks int, served func(h *group.Host)) (vsr.Disposition, bool) {
	var d vsr.Disposition
	answered := false
	h := c.Nodes[node].Host
	h.Read(func(why vsr.Disposition) {
		d, answered = why, true
		if why == vsr.DispositionNone {
			served(h)
		}
	})
	for i := 0; i < ticks && !answered; i++ {
		c.Tick(1)
	}
	return d, answered
}

// TestDeposedPrimaryServesNoStaleRead: the primary of view 0 is cut off
// from its backups, which elect a new primary and commit a consumer-offset
// store there. The old primary has not heard of the new view: it is still
// a caught-up primary in normal status (Serving), but its applied state
// lacks the acknowledged store. A read there must never be served (the
// simulator's seed 875: it answered "no offset"); it waits for a read round
// its cut-off backups never answer, is answered 57 after the timeout, and
// once healed the old primary sends readers elsewhere (58). The new
// primary serves the acknowledged store.
func TestDeposedPrimaryServesNoStaleRead(t *testing.T) {
	c := newCluster(t, testConfig(3, 0, vsr.Replicated), false)
	w := newWorkload(t, c)
	w.sendCommitted(4)
	if a := w.storeOffset(0, 9, 1); a.Code != wire.ErrorCodeOK {
		t.Fatalf("store at the primary: %+v", a)
	}
	key := partition.ConsumerKey{Kind: partition.ConsumerKindConsumer, ID: 9}
	c.Tick(5)
	c.Isolate(0, true)
	for ticks := 0; !c.Nodes[1].Host.Replica().Primary() && !c.Nodes[2].Host.Replica().Primary(); ticks++ {
		if ticks == 2000 {
			t.Fatalf("no new primary:\n%s", c.Status())
		}
		c.Tick(1)
	}
	newPrimary := 1
	if c.Nodes[2].Host.Replica().Primary() {
		newPrimary = 2
	}
	var a grouptest.Answer
	for attempt := 0; ; attempt++ {
		if a = w.storeOffset(newPrimary, 9, 3); a.Code == wire.ErrorCodeOK || attempt == 50 {
			break
		}
		c.Tick(5)
	}
	if a.Code != wire.ErrorCodeOK {
		t.Fatalf("store at the new primary: %+v\n%s", a, c.Status())
	}
	old := c.Nodes[0].Host
	if !old.Serving() || old.Replica().View() != 0 {
		t.Fatalf("the old primary should still believe it serves view 0:\n%s", c.Status())
	}
	if v, _ := old.View().StoredOffset(key); v != 1 {
		t.Fatalf("the old primary's applied offset is %d, want the stale 1", v)
	}
	stale := func(h *group.Host) {
		v, ok := h.View().StoredOffset(key)
		t.Fatalf("the deposed primary served offset %d (found %v) after the store of 3 was acknowledged", v, ok)
	}
	timeout := int(c.Config.Replica.NormalHeartbeatTimeoutTicks)
	if d, answered := read(c, 0, 3*timeout, stale); !answered || d != vsr.DispositionViewChange || group.Code(d) != wire.ErrTransientNotCommitted {
		t.Fatalf("the deposed primary's read: answered %v with %s, want 57 after the timeout", answered, d)
	}
	c.Isolate(0, false)
	for ticks := 0; old.Replica().View() == 0; ticks++ {
		if ticks == 2000 {
			t.Fatalf("the old primary never joined the new view:\n%s", c.Status())
		}
		c.Tick(1)
	}
	if d, answered := read(c, 0, 0, stale); !answered || group.Code(d) != wire.ErrTransientNotAccepted {
		t.Fatalf("a read at the former primary: answered %v with %s, want 58 at once", answered, d)
	}
	var got uint64
	if d, answered := read(c, newPrimary, 100, func(h *group.Host) { got, _ = h.View().StoredOffset(key) }); !answered || d != vsr.DispositionNone || got != 3 {
		t.Fatalf("the new primary's read: answered %v with %s, offset %d, want 3", answered, d, got)
	}
}

// TestGroupOfOneReadsAtOnce: a group of one serves a read inside the call,
// with no round and no message.
func TestGroupOfOneReadsAtOnce(t *testing.T) {
	c := newCluster(t, testConfig(1, 0, vsr.Replicated), false)
	w := newWorkload(t, c)
	w.sendCommitted(3)
	before := c.Delivered
	var next uint64
	served := false
	c.Nodes[0].Host.Read(func(d vsr.Disposition) {
		served = d == vsr.DispositionNone
		next = c.Nodes[0].Host.View().NextOffset()
	})
	if !served || next != 3 || c.Delivered != before {
		t.Fatalf("a group of one's read: served %v at next offset %d, %d messages", served, next, c.Delivered-before)
	}
	if d, now := c.Nodes[0].Host.ReadNow(); !now || d != vsr.DispositionNone {
		t.Fatalf("ReadNow of a group of one: %s, %v", d, now)
	}
}

// TestUnreadableCheckpointKeepsTheSegments: a replica whose durable
// checkpoint does not read back at open (a transient read fault) opens
// with its state missing and an empty machine. Its segments are not reset
// to that empty machine: they hold the history the checkpoint's flushed
// frontier names, and a later restart that reads the checkpoint opens
// over them unfenced (the simulator's broker seed 2720 found them
// truncated to offset 0, and the next restart fenced the group).
func TestUnreadableCheckpointKeepsTheSegments(t *testing.T) {
	cfg := testConfig(3, 0, vsr.Replicated)
	cfg.CheckpointEveryOps = 4
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	for range 24 {
		w.sendCommitted(2) // 8 messages flush: every fourth send
	}
	n := c.Nodes[1]
	if n.Host.Replica().CheckpointOp() == 0 || n.Segments.FlushedMessages() == 0 {
		t.Fatalf("replica 1: checkpoint op %d, %d flushed messages", n.Host.Replica().CheckpointOp(), n.Segments.FlushedMessages())
	}
	c.Crash(1)
	flushed := n.Segments.FlushedMessages()
	c.Isolate(1, true) // no peer's checkpoint replaces the unreadable one
	n.Storage.Corrupt(vsr.ZoneCheckpoint)
	if err := c.Start(1); err != nil {
		t.Fatal(err)
	}
	if !n.Host.Replica().StateMissing() {
		t.Fatalf("replica 1 read its corrupted checkpoint back\n%s", c.Status())
	}
	c.Tick(20)
	if got := n.Segments.FlushedMessages(); got != flushed {
		t.Fatalf("replica 1 opened without its checkpoint's state and its segments went from %d messages to %d", flushed, got)
	}
	c.Crash(1)
	n.Storage.Corrupt(vsr.ZoneCheckpoint) // the fault was transient: the zone reads back
	if err := c.Start(1); err != nil {
		t.Fatal(err)
	}
	if n.Host.Replica().StateMissing() {
		t.Fatalf("replica 1's checkpoint still does not read back\n%s", c.Status())
	}
	if err := n.Host.Err(); err != nil {
		t.Fatalf("replica 1 reopened over its own checkpoint fenced: %v", err)
	}
	c.Isolate(1, false)
	w.sendCommitted(2)
}

// TestManyConsumerOffsetsNeverStopCheckpoints: a partition whose
// consumers stored more offsets than its checkpoint area holds (13 bytes
// each, 64 KiB) keeps checkpointing and committing sends past the journal
// window: a store of a new consumer past the bound is refused (3012),
// while the consumers already stored keep storing. Before the bound, the
// descriptor no longer fit its area, no checkpoint was ever taken again,
// and once the journal window was full every send was pushed back for
// good, across restarts.
func TestManyConsumerOffsetsNeverStopCheckpoints(t *testing.T) {
	cfg := testConfig(1, 5, vsr.Persisted)
	cfg.Replica.CheckpointSizeMax = 64 << 10
	cfg.CheckpointEveryOps = 8
	c := newCluster(t, cfg, false)
	w := newWorkload(t, c)
	w.sendCommitted(1)
	refused := 0
	for consumer := uint32(1); consumer <= 6000; consumer++ {
		a := w.storeOffset(0, consumer, 0)
		switch a.Code {
		case wire.ErrorCodeOK:
		case wire.ErrCannotCreateConsumerOffsetsDirectory:
			refused++
		default:
			t.Fatalf("store of consumer %d: code %d (%s)", consumer, a.Code, a.Disposition)
		}
	}
	if refused == 0 || refused > 2000 {
		t.Fatalf("%d of 6000 stores refused", refused)
	}
	if a := w.storeOffset(0, 1, 0); a.Code != wire.ErrorCodeOK {
		t.Fatalf("a stored consumer's store: code %d", a.Code)
	}
	before := c.Nodes[0].Host.Replica().CheckpointOp()
	for range 3 * int(cfg.Replica.JournalSlots) {
		w.sendCommitted(1)
	}
	if w.retries != 0 {
		t.Fatalf("%d sends were pushed back", w.retries)
	}
	if got := c.Nodes[0].Host.Replica().CheckpointOp(); got <= before {
		t.Fatalf("no checkpoint past op %d after the offsets (checkpoint %d)", before, got)
	}
}
