package server

import (
	"sync"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/vsr"
)

// Sessions (PROTOCOL.md §1.9) are the metadata group's client table
// (server/group.MetaHost over vsr's): register, request numbers, cached
// replies and exactly-once are replicated state, in every checkpoint, so a
// restart keeps them. What stays here is what belongs to this server's
// connections and nothing else: which connection a client id is bound to.

// bindingTable maps a client id to the connection bound to it (one at a
// time: binding it on another connection unbinds the first). Its own
// mutex guards it (shard 0 unbinds sessions as ops commit, holding no
// other lock: an eviction, a deleted user); a check that must agree with
// a following metadata write also holds the metadata lock (LOCKS.md).
type bindingTable struct {
	mu    sync.Mutex
	conns map[wire.Uint128]*connection
}

func newBindingTable() *bindingTable {
	return &bindingTable{conns: map[wire.Uint128]*connection{}}
}

// bind binds conn to client's session, unbinding any other connection
// bound to the same id.
func (t *bindingTable) bind(client wire.Uint128, userID uint32, session uint64, conn *connection) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.conns[client]; old != nil && old != conn {
		old.unbind()
	}
	t.conns[client] = conn
	conn.bind(userID, client, session)
}

// unbind unbinds client's connection, if any (its session ended).
func (t *bindingTable) unbind(client wire.Uint128) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.conns[client]; c != nil {
		if bound, _, id, _ := c.binding(); bound && id == client {
			c.unbind()
		}
		delete(t.conns, client)
	}
}

// release forgets client's binding when its connection connID closes, and
// reports whether it was that connection's.
func (t *bindingTable) release(client wire.Uint128, connID uint32) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.conns[client]
	if c == nil || c.id != connID {
		return false
	}
	delete(t.conns, client)
	return true
}

// live reports whether a connection is bound to client.
func (t *bindingTable) live(client wire.Uint128) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conns[client] != nil
}

// groupClient is a client id as the metadata group names it.
func groupClient(client wire.Uint128) vsr.Uint128 {
	return vsr.Uint128{Lo: client.Lo, Hi: client.Hi}
}

// shuttingDown reports whether Shutdown began: the connections it closes
// keep their sessions (a restart restores them).
func (s *Server) shuttingDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
