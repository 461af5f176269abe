package vsr

import (
	"strconv"
	"strings"
	"testing"
)

// rawRequest sends a request from client id with request number request
// straight to replica to, as a host forwards a connection's frame.
func (c *testCluster) rawRequest(id uint64, to int, operation uint8, session, request uint64, body string) {
	m := &Message{Header: Header{Command: CommandRequest, Cluster: c.cfg.Cluster, Group: c.cfg.Group, Client: Uint128{Lo: id},
		Operation: operation, Session: session, Request: request, Replica: uint8(to)}, Body: []byte(body)}
	m.Seal()
	c.queue = append(c.queue, envelope{-int(id), to, m})
}

// repliesTo collects the replies queued for client id (the test network
// delivers to registered Clients only, so they are read off the queue).
func (c *testCluster) deliverCollect(id uint64) []*Message {
	var got []*Message
	for steps := 0; steps < 100_000; steps++ {
		c.pumpIO()
		if len(c.queue) == 0 {
			break
		}
		e := c.queue[0]
		c.queue = c.queue[1:]
		if e.to == -int(id) {
			got = append(got, e.m)
			continue
		}
		c.deliverEnvelope(e, false)
	}
	return got
}

// TestSessionlessRequestsCommitEveryArrival sends the same request number
// three times from a client that never registered: under Sessionless each
// arrival commits as its own op and gets its own reply, and the client
// table stays empty. The metadata plane (no Sessionless) still refuses the
// unregistered client and deduplicates a registered one.
func TestSessionlessRequestsCommitEveryArrival(t *testing.T) {
	cfg := groupTestConfig(3, 0)
	cfg.Sessionless.Add(OperationUserMin)
	c := newTestCluster(t, cfg)
	for range 3 {
		c.rawRequest(9, 0, OperationUserMin, 0, 1, "send")
	}
	replies := c.deliverCollect(9)
	if len(replies) != 3 {
		t.Fatalf("%d replies to 3 sessionless sends, want 3", len(replies))
	}
	ops := map[uint64]bool{}
	for _, m := range replies {
		if m.Command != CommandReply || m.Request != 1 || string(m.Body) != "op="+strconv.FormatUint(m.Op, 10) {
			t.Fatalf("reply %s", m)
		}
		ops[m.Op] = true
	}
	if len(ops) != 3 {
		t.Fatalf("replies name ops %v, want 3 different ops", ops)
	}
	c.tick(20)
	for i, n := range c.nodes {
		if got := strings.Join(n.sm.entries, ","); got != "send,send,send" {
			t.Fatalf("replica %d applied %q", i, got)
		}
		if len(n.replica.clients.entries) != 0 {
			t.Fatalf("replica %d client table holds %d entries", i, len(n.replica.clients.entries))
		}
	}

	// The same traffic on the metadata plane: nothing commits.
	meta := newTestCluster(t, groupTestConfig(3, 0))
	for range 3 {
		meta.rawRequest(9, 0, OperationUserMin, 0, 1, "send")
	}
	meta.deliverCollect(9)
	if got := meta.nodes[0].replica.CommitNumber(); got != 0 {
		t.Fatalf("metadata plane committed %d ops for an unregistered client", got)
	}
}

// TestSessionlessAndSessionedMix checks that a sessionless op of a client
// does not make the same client's sessioned request look in flight, and
// that the sessioned one is still deduplicated.
func TestSessionlessAndSessionedMix(t *testing.T) {
	cfg := groupTestConfig(3, 0)
	cfg.Sessionless.Add(OperationUserMin + 1)
	c := newTestCluster(t, cfg)
	c.rawRequest(9, 0, OperationRegister, 0, 0, "")
	reg := c.deliverCollect(9)
	if len(reg) != 1 {
		t.Fatalf("register: %d replies", len(reg))
	}
	session := reg[0].Session
	c.rawRequest(9, 0, OperationUserMin+1, session, 5, "free")
	c.rawRequest(9, 0, OperationUserMin, session, 5, "meta")
	c.rawRequest(9, 0, OperationUserMin, session, 5, "meta")
	replies := c.deliverCollect(9)
	c.tick(20)
	if got := strings.Join(c.nodes[1].sm.entries, ","); got != "free,meta" {
		t.Fatalf("applied %q (replies %d), want free,meta", got, len(replies))
	}
}

// TestSessionlessConfig refuses VSR's own operations as sessionless.
func TestSessionlessConfig(t *testing.T) {
	cfg := groupTestConfig(3, 0)
	cfg.Sessionless.Add(OperationRegister)
	if err := cfg.Validate(); err == nil {
		t.Fatal("register accepted as a sessionless operation")
	}
	cfg.Sessionless = OperationSet{}
	cfg.Sessionless.Add(255)
	if err := cfg.Validate(); err != nil || !cfg.Sessionless.Has(255) || cfg.Sessionless.Has(254) {
		t.Fatalf("operation 255: %v", err)
	}
}
