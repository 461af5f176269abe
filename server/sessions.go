package server

import (
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
// metadata store's lock. It holds at most max clients, at most perUserMax
// of them for any one user; a new session past a bound displaces the
// oldest session of its own user, never another user's, and is refused
// when the table is full of other users' sessions.
type sessionTable struct {
	max        int
	perUserMax int
	entries    map[wire.Uint128]*clientEntry
	// Invariant: perUser[u] is the number of entries of user u, and no
	// user has an entry of count 0.
	perUser map[uint32]int
}

// newSessionTable returns a table holding at most clientsMax clients, at
// most perUserMax per user.
func newSessionTable(clientsMax, perUserMax int) *sessionTable {
	return &sessionTable{max: clientsMax, perUserMax: min(max(perUserMax, 1), clientsMax),
		entries: map[wire.Uint128]*clientEntry{}, perUser: map[uint32]int{}}
}

// admits reports whether a new client of userID can be registered: the
// table has room, or the user has a session of its own to give up.
func (t *sessionTable) admits(userID uint32) bool {
	return len(t.entries) < t.max || t.perUser[userID] > 0
}

// register records a committed Register of client by user at op and binds
// conn to it, unbinding any other connection bound to the same id. The
// caller checked admits for a new client.
func (t *sessionTable) register(client wire.Uint128, userID uint32, op uint64, conn *connection) {
	entry, ok := t.entries[client]
	if !ok {
		if t.perUser[userID] >= t.perUserMax || (len(t.entries) >= t.max && t.perUser[userID] > 0) {
			t.evictOldestOf(userID)
		}
		entry = &clientEntry{userID: userID}
		t.entries[client] = entry
		t.perUser[userID]++
	}
	if entry.conn != nil && entry.conn != conn {
		entry.conn.unbind()
	}
	if entry.userID != userID {
		t.forget(entry.userID)
		t.perUser[userID]++
	}
	entry.session = op
	entry.userID = userID
	entry.lastCommit = op
	entry.conn = conn
	if conn != nil {
		conn.bind(userID, client, op)
	}
}

// evictOldestOf removes userID's entry with the oldest last commit (ties
// broken by client id so the choice is deterministic).
func (t *sessionTable) evictOldestOf(userID uint32) {
	var victim wire.Uint128
	var oldest *clientEntry
	for id, e := range t.entries {
		if e.userID != userID {
			continue
		}
		if oldest == nil || e.lastCommit < oldest.lastCommit ||
			(e.lastCommit == oldest.lastCommit && (id.Hi < victim.Hi || (id.Hi == victim.Hi && id.Lo < victim.Lo))) {
			victim, oldest = id, e
		}
	}
	if oldest == nil {
		return
	}
	if oldest.conn != nil {
		oldest.conn.unbind()
	}
	t.remove(victim)
}

// remove deletes client's entry and its count.
func (t *sessionTable) remove(client wire.Uint128) {
	if entry, ok := t.entries[client]; ok {
		delete(t.entries, client)
		t.forget(entry.userID)
	}
}

// forget drops one entry from userID's count.
func (t *sessionTable) forget(userID uint32) {
	if t.perUser[userID]--; t.perUser[userID] <= 0 {
		delete(t.perUser, userID)
	}
}

// logout removes client's entry and unbinds its connection.
func (t *sessionTable) logout(client wire.Uint128) {
	if entry, ok := t.entries[client]; ok {
		if entry.conn != nil {
			entry.conn.unbind()
		}
		t.remove(client)
	}
}

// release forgets client when its connection connID closes.
func (t *sessionTable) releaseLocked(client wire.Uint128, connID uint32) {
	entry, ok := t.entries[client]
	if !ok || entry.conn == nil || entry.conn.id != connID {
		return
	}
	t.remove(client)
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
