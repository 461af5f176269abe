package group_test

import (
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// TestReadAnsweredFromTheStorageCompletionThatReadiesIt: a storage
// completion is an input of the host like a message or a tick, and the
// host's work after an input (answering the reads that became ready, the
// descriptor checkpoint, abdication) runs after it too. In a persisted
// group the primary's own journal write and sync is held (a slow disk)
// while its one reachable backup acks a send and answers the read round of
// a read admitted after the send: the read waits for the send's op, which
// needs the primary's own durable ack to commit. When the primary's write completes, the
// op commits and is applied inside that completion, and the read is
// answered there, not at whatever input comes next (the broker
// simulator's seed 42342: a read made ready by a completion was answered
// during the next input, a corrupted PrepareOk, and the corruption checker
// saw the reply as the host acting on that message).
func TestReadAnsweredFromTheStorageCompletionThatReadiesIt(t *testing.T) {
	c := newCluster(t, testConfig(3, 0, vsr.Persisted), false)
	w := newWorkload(t, c)
	w.sendCommitted(2)
	c.Tick(5)
	p := c.Primary()
	if p != 0 {
		t.Fatalf("primary %d, want 0:\n%s", p, c.Status())
	}
	h := c.Nodes[0].Host
	c.Isolate(2, true) // the commit quorum is the primary and node 1
	c.HoldIO(0, true)

	b, _ := batch(t, 100, 3)
	w.req++
	sendReq := w.req
	h.Submit(w.client, sendReq, partition.OperationSendMessages, partition.EncodeSendMessages(partition.Envelope{UserID: 1}, b))
	op := h.Replica().OpNumber()
	answered, d, next := false, vsr.DispositionNone, uint64(0)
	h.Read(func(why vsr.Disposition) {
		answered, d = true, why
		next = h.View().NextOffset()
	})
	c.Deliver(1_000_000) // node 1 acks the send and answers the read round
	if answered {
		t.Fatalf("the read was answered (%s) before the primary committed op %d:\n%s", d, op, c.Status())
	}
	if h.Replica().CommitNumber() >= op {
		t.Fatalf("op %d committed without the primary's own write:\n%s", op, c.Status())
	}

	c.HoldIO(0, false)
	c.PumpIO() // only storage completions: no message, no tick
	if h.Replica().CommitNumber() < op {
		t.Fatalf("op %d not committed once the primary's write completed:\n%s", op, c.Status())
	}
	if !answered {
		t.Fatalf("op %d committed and applied in a storage completion, but the read that waited for it is still unanswered:\n%s", op, c.Status())
	}
	if d != vsr.DispositionNone || next != 5 {
		t.Fatalf("the read: %s at next offset %d, want served at 5", d, next)
	}
	for _, a := range w.answers(sendReq) {
		if a.Code != wire.ErrorCodeOK {
			t.Fatalf("the send: %+v", a)
		}
	}
}
