package vsr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testStorage is an in-memory Storage whose completions run when the test
// cluster pumps them, and whose unsynced writes are lost on crash.
type testStorage struct {
	// syncs counts the Sync calls.
	syncs    int
	c        *testCluster
	owner    int
	writeSeq uint64
	durable  map[Zone][]byte
	pending  []testWrite // written, not yet synced
	config   *Config
	corrupts map[Zone][][2]uint64
	// hold, if set for a zone, keeps the writes to it from completing
	// (they are lost in a crash).
	hold map[Zone]bool
	// holdWrite, if set, keeps each write it returns true for in flight:
	// not completed, not covered by a sync (held), until the test acts.
	holdWrite func(z Zone, offset uint64, data []byte) bool
	held      []testWrite
}

type testWrite struct {
	zone   Zone
	offset uint64
	data   []byte
	seq    uint64
}

func newTestStorage(c *testCluster, cfg *Config) *testStorage {
	s := &testStorage{c: c, durable: map[Zone][]byte{}, config: cfg}
	for _, z := range []Zone{ZoneSuperblock, ZoneWALHeaders, ZoneWALPrepares, ZoneCheckpoint} {
		s.durable[z] = make([]byte, cfg.ZoneSize(z))
	}
	return s
}

func (s *testStorage) ZoneSize(z Zone) uint64 { return s.config.ZoneSize(z) }

func (s *testStorage) Read(z Zone, offset uint64, buf []byte, done func(error)) {
	copy(buf, s.durable[z][offset:])
	for _, w := range s.pending {
		if w.zone == z {
			lo, hi := max(w.offset, offset), min(w.offset+uint64(len(w.data)), offset+uint64(len(buf)))
			if lo < hi {
				copy(buf[lo-offset:hi-offset], w.data[lo-w.offset:hi-w.offset])
			}
		}
	}
	s.c.io = append(s.c.io, ioOp{s.owner, func() { done(nil) }})
}

func (s *testStorage) Write(z Zone, offset uint64, data []byte, done func(error)) {
	if offset+uint64(len(data)) > s.config.ZoneSize(z) {
		s.c.io = append(s.c.io, ioOp{s.owner, func() { done(errors.New("write past zone end")) }})
		return
	}
	if s.hold[z] {
		return
	}
	if s.holdWrite != nil && s.holdWrite(z, offset, data) {
		s.held = append(s.held, testWrite{z, offset, append([]byte(nil), data...), 0})
		return
	}
	s.writeSeq++
	s.pending = append(s.pending, testWrite{z, offset, append([]byte(nil), data...), s.writeSeq})
	s.c.io = append(s.c.io, ioOp{s.owner, func() { done(nil) }})
}

// Sync makes the writes submitted before it durable when it completes.
func (s *testStorage) Sync(done func(error)) {
	s.syncs++
	upTo := s.writeSeq
	s.c.io = append(s.c.io, ioOp{s.owner, func() {
		kept := s.pending[:0]
		for _, w := range s.pending {
			if w.seq <= upTo {
				copy(s.durable[w.zone][w.offset:], w.data)
			} else {
				kept = append(kept, w)
			}
		}
		s.pending = kept
		done(nil)
	}})
}

// testStateMachine is a log of appended bodies; Apply replies "op=N".
type testStateMachine struct {
	entries []string
	// pad, if set, lengthens every reply by that many bytes.
	pad int
}

func (sm *testStateMachine) Apply(op, timestamp uint64, operation uint8, body []byte) []byte {
	sm.entries = append(sm.entries, string(body))
	reply := []byte(fmt.Sprintf("op=%d", op))
	return append(reply, make([]byte, sm.pad)...)
}

func (sm *testStateMachine) Checkpoint() []byte {
	var out []byte
	for _, e := range sm.entries {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e)))
		out = append(out, e...)
	}
	return out
}

func (sm *testStateMachine) Restore(data []byte) error {
	var entries []string
	for len(data) > 0 {
		if len(data) < 4 {
			return errors.New("short")
		}
		n := int(binary.LittleEndian.Uint32(data))
		if n > len(data)-4 {
			return errors.New("short entry")
		}
		entries = append(entries, string(data[4:4+n]))
		data = data[4+n:]
	}
	sm.entries = entries
	return nil
}

type testClock struct{ now uint64 }

func (c *testClock) RealtimeMicros() uint64 { c.now++; return c.now }

type ioOp struct {
	owner int
	f     func()
}

type envelope struct {
	from, to int // -1 - client index for clients
	m        *Message
}

type testNetwork struct {
	c    *testCluster
	from int
}

func (n *testNetwork) SendToReplica(replica uint8, m *Message) {
	n.c.lazy.record(n.from, int(replica), m)
	if n.c.onSend != nil {
		n.c.onSend(n.from, m)
	}
	if n.c.drop != nil && n.c.drop(n.from, m) {
		return
	}
	if n.c.dropTo != nil && n.c.dropTo(n.from, int(replica), m) {
		return
	}
	n.c.queue = append(n.c.queue, envelope{n.from, int(replica), m})
}

func (n *testNetwork) SendToClient(client Uint128, m *Message) {
	n.c.lazy.record(n.from, -int(client.Lo), m)
	n.c.queue = append(n.c.queue, envelope{n.from, -int(client.Lo), m})
}

type testNode struct {
	replica *Replica
	storage *testStorage
	sm      *testStateMachine
	down    bool
	// local, if set, is the replica's LocalCheckpointer from its next
	// start on (restart.go).
	local LocalCheckpointer
}

// testCluster delivers messages and IO completions in FIFO order, so every
// run of a script is identical.
type testCluster struct {
	t       *testing.T
	cfg     Config
	nodes   []*testNode
	clients map[uint64]*Client
	queue   []envelope
	io      []ioOp
	group   []int // partition group of each replica; 0 = all connected
	clock   testClock
	trace   strings.Builder
	replies []string
	// onSend, if set, sees every message a replica sends to a replica, at
	// the moment it is sent.
	onSend func(from int, m *Message)
	// stalled holds the replicas whose IO completions are held back (a
	// slow disk) until the flag is cleared.
	stalled map[int]bool
	// afterIO, if set, runs after every IO completion.
	afterIO func()
	// drop, if set, drops the messages to replicas it returns true for.
	drop func(from int, m *Message) bool
	// lazy ticks each replica only when it is due (lazy_ticks_test.go).
	lazy lazyTicks
	// dropTo, if set, drops the messages it returns true for, by sender
	// and receiver.
	dropTo func(from, to int, m *Message) bool
	// replyPad lengthens the replies of replicas started from now on
	// (testStateMachine.pad).
	replyPad int
}

func newTestCluster(t *testing.T, cfg Config) *testCluster { return newTestClusterTicks(t, cfg, nil) }

// newTestClusterTicks is newTestCluster; with lazy set, a replica is
// ticked only when due (lazy_ticks_test.go).
func newTestClusterTicks(t *testing.T, cfg Config, lazy *lazyTicks) *testCluster {
	c := &testCluster{t: t, cfg: cfg, clients: map[uint64]*Client{}}
	c.lazy.on = lazy != nil
	for i := range int(cfg.ReplicaCount) {
		c.nodes = append(c.nodes, &testNode{})
		c.group = append(c.group, 0)
		rc := cfg
		rc.ReplicaIndex = uint8(i)
		c.nodes[i].storage = newTestStorage(c, &rc)
		c.nodes[i].storage.owner = i
		c.start(i)
	}
	return c
}

func (c *testCluster) start(i int) {
	n := c.nodes[i]
	rc := c.cfg
	rc.ReplicaIndex = uint8(i)
	n.sm = &testStateMachine{pad: c.replyPad}
	r, err := NewReplica(rc, n.storage, &testNetwork{c, i}, n.sm, &c.clock)
	if err != nil {
		c.t.Fatal(err)
	}
	if n.local != nil {
		r.SetLocalCheckpointer(n.local)
	}
	n.replica = r
	n.down = false
	c.lazy.started(i)
	var openErr error
	opened := false
	r.Open(func(err error) { openErr, opened = err, true })
	c.pumpIO()
	if !opened || openErr != nil {
		c.t.Fatalf("open replica %d: opened=%v err=%v", i, opened, openErr)
	}
}

func (c *testCluster) crash(i int) {
	c.nodes[i].down = true
	c.nodes[i].storage.pending = nil
	c.nodes[i].storage.held = nil
	// Completions of a crashed replica's IO never run.
	kept := c.io[:0]
	for _, op := range c.io {
		if op.owner != i {
			kept = append(kept, op)
		}
	}
	c.io = kept
}

func (c *testCluster) pumpIO() {
	var held []ioOp
	for steps := 0; len(c.io) > 0 && steps < 1_000_000; steps++ {
		op := c.io[0]
		c.io = c.io[1:]
		if c.stalled[op.owner] {
			held = append(held, op)
			continue
		}
		c.catchUp(op.owner)
		op.f()
		if c.afterIO != nil {
			c.afterIO()
		}
	}
	c.io = append(held, c.io...)
}

func (c *testCluster) connected(a, b int) bool {
	return c.group[a] == 0 || c.group[b] == 0 || c.group[a] == c.group[b]
}

// deliver runs IO and delivers queued messages until quiet.
func (c *testCluster) deliver(verbose bool, limit int) int {
	delivered := 0
	for delivered < limit {
		c.pumpIO()
		if len(c.queue) == 0 {
			break
		}
		e := c.queue[0]
		c.queue = c.queue[1:]
		delivered++
		c.deliverEnvelope(e, verbose)
	}
	c.pumpIO()
	return delivered
}

// deliverEnvelope hands one message to its replica or client.
func (c *testCluster) deliverEnvelope(e envelope, verbose bool) {
	if e.to < 0 {
		cl := c.clients[uint64(-e.to)]
		if verbose {
			fmt.Fprintf(&c.trace, "r%d -> c%d: %s\n", e.from, -e.to, e.m)
		}
		if cl == nil {
			return
		}
		reply, err := cl.OnMessage(e.m)
		if reply != nil {
			c.replies = append(c.replies, fmt.Sprintf("c%d req=%d: %s", -e.to, reply.Request, reply.Body))
		}
		if err != nil {
			c.replies = append(c.replies, fmt.Sprintf("c%d: %v", -e.to, err))
		}
		return
	}
	from := fmt.Sprintf("r%d", e.from)
	if e.from < 0 {
		from = fmt.Sprintf("c%d", -e.from)
	}
	n := c.nodes[e.to]
	if n.down || (e.from >= 0 && !c.connected(e.from, e.to)) {
		if verbose {
			fmt.Fprintf(&c.trace, "%s -> r%d: %s (dropped)\n", from, e.to, e.m)
		}
		return
	}
	if verbose {
		fmt.Fprintf(&c.trace, "%s -> r%d: %s\n", from, e.to, e.m)
	}
	// The wire: every message is encoded and decoded.
	var m Message
	if err := m.Decode(e.m.Encode(nil)); err != nil {
		c.t.Fatalf("decode: %v", err)
	}
	c.catchUp(e.to)
	n.replica.Step(&m)
}

func (c *testCluster) tick(n int) {
	for range n {
		c.lazy.now++
		for i, node := range c.nodes {
			if !node.down {
				c.tickReplica(i)
			}
		}
		for _, id := range c.clientIDs() {
			c.clients[id].Tick()
		}
		c.deliver(false, 100_000)
	}
}

func (c *testCluster) clientIDs() []uint64 {
	ids := make([]uint64, 0, len(c.clients))
	for id := range c.clients {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (c *testCluster) client(id uint64) *Client {
	if cl := c.clients[id]; cl != nil {
		return cl
	}
	cl := NewClient(ClientConfig{ID: Uint128{Lo: id}, Cluster: c.cfg.Cluster, ReplicaCount: c.cfg.ReplicaCount, RequestTimeoutTicks: 50}, func(replica uint8, m *Message) {
		c.queue = append(c.queue, envelope{-int(id), int(replica), m})
	})
	c.clients[id] = cl
	return cl
}

func (c *testCluster) status() string {
	var b strings.Builder
	for i, n := range c.nodes {
		if n.down {
			fmt.Fprintf(&b, "r%d: down\n", i)
			continue
		}
		r := n.replica
		role := "backup"
		if r.Primary() {
			role = "primary"
		}
		fmt.Fprintf(&b, "r%d: %s %s view=%d log_view=%d op=%d commit=%d checkpoint=%d applied=%s\n",
			i, r.Status(), role, r.View(), r.LogView(), r.OpNumber(), r.CommitNumber(), r.CheckpointOp(), strings.Join(n.sm.entries, ","))
	}
	return b.String()
}

// checkAgreement fails the test if two replicas applied different
// operations at the same op, or a request was applied twice.
func (c *testCluster) checkAgreement() {
	for i, a := range c.nodes {
		for _, b := range c.nodes[i+1:] {
			n := min(len(a.sm.entries), len(b.sm.entries))
			if !slices.Equal(a.sm.entries[:n], b.sm.entries[:n]) {
				c.t.Fatalf("replicas diverge: %v vs %v", a.sm.entries, b.sm.entries)
			}
		}
	}
}

func parseReplica(t *testing.T, s string) int {
	i, err := strconv.Atoi(strings.TrimPrefix(s, "r"))
	if err != nil {
		t.Fatalf("bad replica %q", s)
	}
	return i
}
