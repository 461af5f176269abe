package server

import (
	"sort"

	"github.com/stratabroker/strata/net/wire"
)

// repliesCachedMax is how many committed replies a client entry keeps for
// duplicate detection (PROTOCOL.md §1.9: a ring of 5).
const repliesCachedMax = 5

// cachedReply is one committed metadata reply kept for a duplicate.
type cachedReply struct {
	request   uint64
	checksum  wire.Uint128
	operation wire.Operation
	body      []byte
	op        uint64
}

// clientEntry is the client table's record of one client id.
type clientEntry struct {
	// session is the fence epoch: the op number of the committed Register.
	session uint64
	userID  uint32
	// watermark is the highest committed request number.
	watermark uint64
	// lastCommit is the op of the client's latest commit; the entry with
	// the oldest is evicted when the table is full.
	lastCommit uint64
	// replies is a ring of the latest committed replies.
	replies [repliesCachedMax]cachedReply
	next    int
	// conn is the connection bound to this client id, if any.
	conn *connection
}

// sessionTable is the metadata plane's client table: sessions, request
// watermarks and cached replies per client id. It is guarded by the
// metadata store's lock.
type sessionTable struct {
	max     int
	entries map[wire.Uint128]*clientEntry
}

// newSessionTable returns a table holding at most max clients.
func newSessionTable(max int) *sessionTable {
	return &sessionTable{max: max, entries: map[wire.Uint128]*clientEntry{}}
}

// register records a committed Register of client by user at op and binds
// conn to it, unbinding any other connection bound to the same id.
func (t *sessionTable) register(client wire.Uint128, userID uint32, op uint64, conn *connection) {
	entry, ok := t.entries[client]
	if !ok {
		if len(t.entries) >= t.max {
			t.evictOldest()
		}
		entry = &clientEntry{}
		t.entries[client] = entry
	}
	if entry.conn != nil && entry.conn != conn {
		entry.conn.unbind()
	}
	entry.session = op
	entry.userID = userID
	entry.lastCommit = op
	entry.conn = conn
	if conn != nil {
		conn.bind(userID, client, op)
	}
}

// evictOldest removes the entry with the oldest last commit (ties broken
// by client id so the choice is deterministic).
func (t *sessionTable) evictOldest() {
	ids := make([]wire.Uint128, 0, len(t.entries))
	for id := range t.entries {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := t.entries[ids[i]], t.entries[ids[j]]
		if a.lastCommit != b.lastCommit {
			return a.lastCommit < b.lastCommit
		}
		return ids[i].Hi < ids[j].Hi || (ids[i].Hi == ids[j].Hi && ids[i].Lo < ids[j].Lo)
	})
	victim := t.entries[ids[0]]
	if victim.conn != nil {
		victim.conn.unbind()
	}
	delete(t.entries, ids[0])
}

// logout removes client's entry and unbinds its connection.
func (t *sessionTable) logout(client wire.Uint128) {
	if entry, ok := t.entries[client]; ok {
		if entry.conn != nil {
			entry.conn.unbind()
		}
		delete(t.entries, client)
	}
}

// release forgets client when its connection connID closes.
func (t *sessionTable) releaseLocked(client wire.Uint128, connID uint32) {
	entry, ok := t.entries[client]
	if !ok || entry.conn == nil || entry.conn.id != connID {
		return
	}
	delete(t.entries, client)
}

// lookup returns client's entry.
func (t *sessionTable) lookup(client wire.Uint128) (*clientEntry, bool) {
	entry, ok := t.entries[client]
	return entry, ok
}

// cached returns the cached reply for request, if still held.
func (e *clientEntry) cached(request uint64) (*cachedReply, bool) {
	for i := range e.replies {
		if r := &e.replies[i]; r.request == request && r.body != nil {
			return r, true
		}
	}
	return nil, false
}

// commit records a committed reply.
func (e *clientEntry) commit(r cachedReply) {
	e.replies[e.next] = r
	e.next = (e.next + 1) % repliesCachedMax
	if r.request > e.watermark {
		e.watermark = r.request
	}
	e.lastCommit = r.op
}
