package vsr

import (
	"testing"
)

func TestClientTableEvictsLeastRecentlyCommitted(t *testing.T) {
	var table clientTable
	table.init(3)
	for id := uint64(1); id <= 3; id++ {
		if _, evicted := table.register(Uint128{Lo: id}, id); evicted {
			t.Fatalf("evicted below the limit at client %d", id)
		}
	}
	// Client 1 commits again, so client 2 is now the least recent.
	table.get(Uint128{Lo: 1}).lastOp = 10
	evicted, did := table.register(Uint128{Lo: 4}, 11)
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
	table.register(Uint128{Lo: 1, Hi: 9}, 3)
	table.register(Uint128{Lo: 2}, 4)
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
	table.register(Uint128{Lo: 1}, 1)
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
