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
