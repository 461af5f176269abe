package vsr

import (
	"testing"
)

func TestClientTableEvictsLeastRecentlyCommitted(t *testing.T) {
	var table clientTable
	table.init(3)
	for id := uint64(1); id <= 3; id++ {
		if _, evicted := table.register(Uint128{Lo: id}, 0, id); evicted {
			t.Fatalf("evicted below the limit at client %d", id)
		}
	}
	// Client 1 commits again, so client 2 is now the least recent.
	table.get(Uint128{Lo: 1}).lastOp = 10
	evicted, did := table.register(Uint128{Lo: 4}, 0, 11)
	if !did || evicted != (Uint128{Lo: 2}) {
		t.Fatalf("evicted %v (%v), want client 2", evicted, did)
	}
	if table.get(Uint128{Lo: 2}) != nil || table.get(Uint128{Lo: 4}).session != 11 {
		t.Fatal("table does not reflect the eviction")
	}
}

func TestClientTableRoundTrip(t *testing.T) {
	var table clientTable
	table.init(4)
	table.register(Uint128{Lo: 1, Hi: 9}, 0, 3)
	table.register(Uint128{Lo: 2}, 0, 4)
	e := table.get(Uint128{Lo: 2})
	e.request = 7
	e.reply = &Message{Header: Header{Command: CommandReply, Cluster: 7, Request: 7, Client: Uint128{Lo: 2}}, Body: []byte("r")}
	e.reply.Seal()
	enc := table.encode(nil)
	var got clientTable
	got.init(4)
	rest, err := got.decode(append(enc, 0xAA))
	if err != nil || len(rest) != 1 {
		t.Fatalf("decode: %v, rest %d", err, len(rest))
	}
	if len(got.entries) != 2 || got.get(Uint128{Lo: 2}).request != 7 || string(got.get(Uint128{Lo: 2}).reply.Body) != "r" || got.get(Uint128{Lo: 1, Hi: 9}).session != 3 {
		t.Fatalf("round trip changed the table: %+v", got.entries)
	}
	var small clientTable
	small.init(1)
	if _, err := small.decode(enc); err == nil {
		t.Fatal("a table over the limit decoded")
	}
}

func FuzzClientTableDecode(f *testing.F) {
	var table clientTable
	table.init(4)
	table.register(Uint128{Lo: 1}, 0, 1)
	f.Add(table.encode(nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var got clientTable
		got.init(8)
		if _, err := got.decode(data); err != nil {
			return
		}
		enc := got.encode(nil)
		var again clientTable
		again.init(8)
		if _, err := again.decode(enc); err != nil || len(again.entries) != len(got.entries) {
			t.Fatalf("decode(encode(x)) != x: %v", err)
		}
	})
}

// TestClientTableOwnerBound: an owner past its bound, or into a full
// table while it holds a session, ends its own least recent session; into
// a full table holding none of its sessions, the table's least recent.
// Owners survive the encoding.
func TestClientTableOwnerBound(t *testing.T) {
	var table clientTable
	table.init(5)
	table.perOwnerMax = 3
	op := uint64(0)
	reg := func(id, owner uint64) (Uint128, bool) {
		op++
		return table.register(Uint128{Lo: id}, owner, op)
	}
	reg(1, 7) // root's session, the oldest
	for id := uint64(2); id <= 4; id++ {
		if _, did := reg(id, 9); did {
			t.Fatalf("evicted below the bounds at client %d", id)
		}
	}
	if evicted, did := reg(5, 9); !did || evicted != (Uint128{Lo: 2}) {
		t.Fatalf("owner 9 past its bound evicted %v (%v), want its own oldest, client 2", evicted, did)
	}
	reg(6, 8) // full: 1(7) 3 4 5(9) 6(8)
	if table.admits(10) || !table.admits(9) {
		t.Fatal("admits: a full table admits only an owner with a session of its own")
	}
	if evicted, did := reg(7, 8); !did || evicted != (Uint128{Lo: 6}) {
		t.Fatalf("owner 8 into a full table evicted %v (%v), want its own, client 6", evicted, did)
	}
	if evicted, did := reg(8, 10); !did || evicted != (Uint128{Lo: 1}) {
		t.Fatalf("owner 10 into a full table evicted %v (%v), want the least recent, client 1", evicted, did)
	}
	var got clientTable
	got.init(5)
	rest, err := got.decode(append(table.encode(nil), 0xAA))
	if err != nil || len(rest) != 1 {
		t.Fatalf("decode: %v, rest %d", err, len(rest))
	}
	if got.get(Uint128{Lo: 5}).owner != 9 || got.ownedBy(9) != 3 || got.ownedBy(10) != 1 || got.get(Uint128{Lo: 3}) == nil {
		t.Fatalf("owners lost in the round trip: %+v", got.entries)
	}
	got.remove(Uint128{Lo: 3})
	if got.get(Uint128{Lo: 3}) != nil || got.get(Uint128{Lo: 4}).client != (Uint128{Lo: 4}) || got.ownedBy(9) != 2 {
		t.Fatal("remove left the table inconsistent")
	}
}

// TestClientTableCachesRecentReplies: an entry keeps its latest
// ClientRepliesMax replies (not the register's), and they survive the
// encoding.
func TestClientTableCachesRecentReplies(t *testing.T) {
	var table clientTable
	table.init(2)
	table.repliesMax = 3
	table.register(Uint128{Lo: 1}, 0, 1)
	e := table.get(Uint128{Lo: 1})
	e.reply = &Message{Header: Header{Command: CommandReply, Operation: OperationRegister, Client: Uint128{Lo: 1}}}
	e.reply.Seal()
	for req := uint64(1); req <= 5; req++ {
		m := &Message{Header: Header{Command: CommandReply, Operation: OperationUserMin, Request: req, Client: Uint128{Lo: 1}}, Body: []byte{byte(req)}}
		m.Seal()
		e.request = req
		e.commitReply(m, table.repliesMax)
	}
	var got clientTable
	got.init(2)
	got.repliesMax = 3
	if _, err := got.decode(table.encode(nil)); err != nil {
		t.Fatal(err)
	}
	g := got.get(Uint128{Lo: 1})
	for req := uint64(0); req <= 5; req++ {
		m := g.cached(req)
		if (m != nil) != (req >= 3) || (m != nil && m.Body[0] != byte(req)) {
			t.Fatalf("cached(%d) = %v, want the replies of requests 3..5 only", req, m)
		}
	}
}

// TestClientTableTrimsToItsBytes: past bytesMax, a commit of client 1
// gives up the older replies of the least recent other sessions first,
// then their latest replies, then its own older ones, then other sessions;
// the count kept matches the entries' cost at every step, and a decoded
// table counts alike.
func TestClientTableTrimsToItsBytes(t *testing.T) {
	reply := func(client, request uint64, size int) *Message {
		m := &Message{Header: Header{Command: CommandReply, Operation: OperationUserMin, Request: request, Client: Uint128{Lo: client}}, Body: make([]byte, size)}
		m.Seal()
		return m
	}
	var table clientTable
	table.init(8)
	table.repliesMax = 3
	for c := uint64(1); c <= 4; c++ {
		table.register(Uint128{Lo: c}, 0, c)
		for req := uint64(1); req <= 3; req++ {
			e := table.get(Uint128{Lo: c})
			e.request, e.lastOp = req, 10*c+req
			table.commitReply(e, reply(c, req, 1000))
		}
	}
	if table.bytes != table.costAll() {
		t.Fatalf("bytes %d, cost %d", table.bytes, table.costAll())
	}
	full := table.bytes
	one := replyBytes(reply(1, 1, 1000))
	// Client 1 commits again (most recent now); two older replies of the
	// least recent other session (2) must go.
	table.bytesMax = full - 1
	e := table.get(Uint128{Lo: 1})
	e.request, e.lastOp = 4, 100
	table.commitReply(e, reply(1, 4, 1000))
	if ev := table.trim(Uint128{Lo: 1}); len(ev) != 0 {
		t.Fatalf("evicted %v", ev)
	}
	if got := table.get(Uint128{Lo: 2}); len(got.older) != 0 || got.reply == nil {
		t.Fatalf("session 2 keeps %d older replies, latest %v", len(got.older), got.reply)
	}
	if got := table.get(Uint128{Lo: 3}); len(got.older) != 2 {
		t.Fatalf("session 3 lost its older replies before it had to")
	}
	if table.bytes != table.costAll() || table.bytes > table.bytesMax {
		t.Fatalf("bytes %d, cost %d, max %d", table.bytes, table.costAll(), table.bytesMax)
	}
	// Squeeze until only client 1's latest reply and sessions remain:
	// every other session's replies go before any session does.
	table.bytesMax = 4*clientEntryBytes + one
	if ev := table.trim(Uint128{Lo: 1}); len(ev) != 0 {
		t.Fatalf("evicted %v with replies left to drop", ev)
	}
	for c := uint64(2); c <= 4; c++ {
		if got := table.get(Uint128{Lo: c}); got == nil || got.reply != nil || len(got.older) != 0 {
			t.Fatalf("session %d: %+v", c, got)
		}
	}
	if got := table.get(Uint128{Lo: 1}); got.cached(4) == nil || len(got.older) != 0 {
		t.Fatalf("client 1 lost its latest reply or kept its older ones")
	}
	// Below that, the least recent other sessions go.
	table.bytesMax = 2*clientEntryBytes + one
	ev := table.trim(Uint128{Lo: 1})
	if len(ev) != 2 || ev[0] != (Uint128{Lo: 2}) || ev[1] != (Uint128{Lo: 3}) {
		t.Fatalf("evicted %v, want sessions 2 and 3", ev)
	}
	if table.bytes != table.costAll() || table.bytes > table.bytesMax {
		t.Fatalf("bytes %d, cost %d, max %d", table.bytes, table.costAll(), table.bytesMax)
	}
	var got clientTable
	got.init(8)
	got.repliesMax = 3
	if _, err := got.decode(table.encode(nil)); err != nil {
		t.Fatal(err)
	}
	if got.bytes != table.bytes || len(table.encode(nil)) > table.bytes+12 {
		t.Fatalf("decoded table counts %d bytes, the encoded one %d (encoding %d)", got.bytes, table.bytes, len(table.encode(nil)))
	}
}

// TestLargeCachedRepliesNeverOverflowTheCheckpoint: 48 sessions caching
// five replies of 8 KiB each hold about 2 MiB, twice a checkpoint area of
// 1 MiB. The group of one checkpoints through it, restarts from its
// checkpoint and goes on: the table gave up the least recent sessions'
// cached replies (a duplicate of one is answered AlreadyApplied, never
// applied twice), and the latest client's reply is still served from the
// cache. Before the table had a bytes bound, the checkpoint did not fit
// its area and the replica failed at every checkpoint, restart after
// restart.
func TestLargeCachedRepliesNeverOverflowTheCheckpoint(t *testing.T) {
	cfg := groupTestConfig(1, 0)
	cfg.Durability = Persisted
	cfg.CheckpointSizeMax = 1 << 20
	cfg.ClientsMax = 64
	cfg.ClientRepliesMax = 5
	cfg.CheckpointIntervalOps = 16
	c := newTestCluster(t, cfg)
	c.replyPad = 8 << 10
	c.crash(0)
	c.start(0)
	for id := uint64(1); id <= 48; id++ {
		for i := range 5 {
			if err := c.client(id).Submit(OperationUserMin, []byte{byte('a' + i)}); err != nil {
				t.Fatal(err)
			}
			for ticks := 0; c.client(id).Busy() && ticks < 1000; ticks++ {
				c.tick(1)
			}
			if err := c.nodes[0].replica.Err(); err != nil {
				t.Fatalf("client %d request %d: replica failed: %v", id, i, err)
			}
		}
	}
	r := c.nodes[0].replica
	if r.CheckpointOp() < 200 {
		t.Fatalf("checkpoint at op %d, want one past op 200", r.CheckpointOp())
	}
	if r.clients.bytes > r.cfg.clientTableBytesMax() {
		t.Fatalf("client table holds %d bytes, over %d", r.clients.bytes, r.cfg.clientTableBytesMax())
	}
	applied := len(c.nodes[0].sm.entries)
	c.crash(0)
	c.start(0)
	c.tick(20)
	r = c.nodes[0].replica
	if err := r.Err(); err != nil || r.CommitNumber() < r.CheckpointOp() {
		t.Fatalf("restart: err %v, commit %d, checkpoint %d", err, r.CommitNumber(), r.CheckpointOp())
	}
	// A duplicate of client 1's first request (its replies given up) is
	// not applied again; client 48's last is answered from the cache.
	last := c.client(48)
	c.rawRequest(1, 0, OperationUserMin, c.client(1).Session(), 1, "a")
	c.rawRequest(48, 0, OperationUserMin, last.Session(), 5, "e")
	var answers []*Message
	answers = append(answers, c.deliverCollect(1)...)
	c.rawRequest(48, 0, OperationUserMin, last.Session(), 5, "e")
	answers = append(answers, c.deliverCollect(48)...)
	if n := len(c.nodes[0].sm.entries); n > applied {
		t.Fatalf("duplicates applied again: %d entries, %d before", n, applied)
	}
	var already, cached bool
	for _, m := range answers {
		already = already || (m.Client.Lo == 1 && m.Disposition == DispositionAlreadyApplied)
		cached = cached || (m.Client.Lo == 48 && m.Command == CommandReply && m.Disposition == DispositionNone && m.Request == 5 && len(m.Body) > 8<<10)
	}
	if !already || !cached {
		t.Fatalf("answers %v: already-applied %v, cached reply %v", answers, already, cached)
	}
}
