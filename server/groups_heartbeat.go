package server

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/metadata"
)

// Heartbeat eviction (PROTOCOL.md §2.6): a bound connection that is a
// member of at least one consumer group and sent no request for
// staleFactor × interval is logged out (memberships released, groups
// rebalance) and sent Eviction 13 (StaleClient).
const (
	staleFactorNum = 12
	staleFactorDen = 10
	// evictionWriteTimeout bounds the write of an eviction frame.
	evictionWriteTimeout = 5 * time.Second
)

// runHeartbeatVerifier checks heartbeats every heartbeat.interval until
// ctx ends. It returns at once when heartbeats are disabled. Each round
// also completes hand-offs past the rebalancing timeout and removes group
// members whose client has no live connection (left over from a restart).
func (s *Server) runHeartbeatVerifier(ctx context.Context) {
	if !s.cfg.Heartbeat.Enabled || s.cfg.Heartbeat.Interval <= 0 {
		return
	}
	interval := time.Duration(s.cfg.Heartbeat.Interval)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			s.verifyHeartbeats(time.Now(), interval)
		}
	}
}

// connHeartbeat is what the verifier reads of one connection.
type connHeartbeat struct {
	conn     *connection
	bound    bool
	userID   uint32
	client   wire.Uint128
	lastSeen time.Time
}

// heartbeatsSnapshot reads every live connection's binding and last
// request time (read-only use of the connection registry).
func (s *Server) heartbeatsSnapshot() []connHeartbeat {
	conns := s.connectionsSnapshot()
	out := make([]connHeartbeat, 0, len(conns))
	for _, c := range conns {
		c.mu.Lock()
		out = append(out, connHeartbeat{conn: c, bound: c.bound, userID: c.userID, client: c.client, lastSeen: c.lastSeen})
		c.mu.Unlock()
	}
	return out
}

// verifyHeartbeats runs one verifier round at now: evict stale members,
// release members without a live connection, complete due hand-offs.
func (s *Server) verifyHeartbeats(now time.Time, interval time.Duration) {
	s.sweepGroupMembers(now, interval*staleFactorNum/staleFactorDen, true)
	s.completeDueHandOffs(nil)
}

// releaseOrphanGroupMembers removes every group member whose client id
// has no bound connection (one verifier step, usable on its own).
func (s *Server) releaseOrphanGroupMembers() {
	s.sweepGroupMembers(time.Time{}, 0, false)
}

// sweepGroupMembers evicts members idle for longer than stale (when
// evict) and releases members whose client has no bound connection.
func (s *Server) sweepGroupMembers(now time.Time, stale time.Duration, evict bool) {
	// One sweep at a time: a second sweep would see a member whose
	// eviction is half done (session unbound, Eviction 13 not yet
	// written) as disconnected and release it first, and the client's
	// next request would be answered before its eviction arrived.
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	// Members are read before the connections: a member that joined after
	// this read is not judged, and one read here had its connection
	// registered before it joined.
	s.meta.mu.RLock()
	members := s.meta.snapshot().GroupMemberClients()
	s.meta.mu.RUnlock()
	if len(members) == 0 {
		return
	}
	isMember := make(map[metadata.ClientID]bool, len(members))
	for _, m := range members {
		isMember[m] = true
	}
	live := map[metadata.ClientID]bool{}
	for _, h := range s.heartbeatsSnapshot() {
		if !h.bound {
			continue
		}
		id := metaClient(h.client)
		if evict && isMember[id] && now.Sub(h.lastSeen) > stale {
			s.evictStale(h)
			continue
		}
		live[id] = true
	}
	for _, m := range members {
		if !live[m] {
			s.releaseGroupMemberships(wire.Uint128{Lo: m.Lo, Hi: m.Hi})
		}
	}
}

// evictStale logs a stale member's session out, sends Eviction 13 and
// then releases its memberships (so the group forgets the member only once
// the eviction is on its way). The connection stays open; the client logs
// in again.
func (s *Server) evictStale(h connHeartbeat) {
	s.meta.mu.Lock()
	bound, _, client, _ := h.conn.binding()
	if !bound || client != h.client {
		s.meta.mu.Unlock()
		return
	}
	if _, err := s.meta.logoutLocked(client); err != nil {
		s.meta.mu.Unlock()
		s.log.Warn("heartbeat eviction: logout failed", zap.Error(err))
		return
	}
	s.meta.bindings.unbind(client)
	h.conn.unbind()
	s.meta.mu.Unlock()
	s.log.Info("evicted a stale consumer-group member", zap.Uint32("connection_id", h.conn.id), zap.String("address", h.conn.address))
	eviction := wire.EvictionHeader{Client: client, Reason: wire.EvictStaleClient}
	var frame [wire.HeaderSize]byte
	eviction.Encode(&frame)
	if nc := h.conn.netConn; nc != nil {
		_ = nc.SetWriteDeadline(time.Now().Add(evictionWriteTimeout))
		if _, err := nc.Write(frame[:]); err != nil {
			s.log.Debug("eviction write failed", zap.Uint32("connection_id", h.conn.id), zap.Error(err))
		}
	}
	s.meta.mu.Lock()
	s.releaseGroupMembershipsLocked(client)
	s.meta.mu.Unlock()
}
