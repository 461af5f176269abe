package server

import (
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/shard"
)

// Where a connection's requests run (DESIGN.md decision 9, issue 4).
//
// Shard 0 binds the listeners; every accepted connection is handed to a
// shard in round-robin (shard 0 left out with skip_shard_zero_for_clients),
// and that shard serves it from then on. The Go runtime's network poller
// reads and writes the socket on the connection's goroutine, which plays
// the part io_uring's socket completions play in Iggy:
//   - requests that only read the published metadata view and partition
//     counters run as a task on the connection's shard;
//   - partition operations are routed to the partition's owner (the
//     namespace hash) whichever shard received them: the connection's
//     goroutine hands the partition's part to the owner, which is the
//     connection's own shard when it owns the partition;
//   - metadata writes (sessions, streams, topics, users, ...) go to the
//     metadata writer, shard 0.
//
// A shard task never waits for another shard (LOCKS.md): the tasks a
// connection's shard runs for it touch no partition and take no lock a
// goroutine may hold while it waits for a shard.

// clientShardRotation returns the shards that serve client connections.
func clientShardRotation(shards []*shard.Shard, skipShardZero bool) []*shard.Shard {
	if skipShardZero && len(shards) > 1 {
		return shards[1:]
	}
	return shards
}

// assignShard picks the next shard of the rotation for a new connection.
func (s *Server) assignShard() *shard.Shard {
	if len(s.clientShards) == 0 {
		return nil
	}
	n := s.nextClientShard.Add(1) - 1
	return s.clientShards[n%uint32(len(s.clientShards))]
}

// runsOnConnShard reports whether a request runs as a task on its
// connection's shard: the reads of the published metadata view.
func runsOnConnShard(h *wire.RequestHeader) bool {
	if h.Operation != wire.OpNonReplicated {
		return false
	}
	switch h.Code {
	case wire.CodePing, wire.CodeGetClusterMetadata, wire.CodeDescribeOptions, wire.CodeGetMe,
		wire.CodeGetUser, wire.CodeGetUsers, wire.CodeGetPersonalAccessTokens,
		wire.CodeGetStream, wire.CodeGetStreams, wire.CodeGetTopic, wire.CodeGetTopics:
		return true
	}
	return false
}

// route runs one validated request: on the connection's shard when it
// only reads metadata, else on the connection's goroutine, whose partition
// operations go to their owner and metadata writes to shard 0.
func (s *Server) route(c *connection, h *wire.RequestHeader, body []byte) response {
	if c.shard == nil || !runsOnConnShard(h) {
		return s.dispatch(c, h, body)
	}
	var r response
	if err := c.shard.Call(func() { r = s.dispatch(c, h, body) }); err != nil {
		return deny(wire.ErrTransientNotAccepted)
	}
	s.metrics.placedShard.Inc()
	return r
}

// notePlacement counts where a shard-served connection's request to
// partition p runs: on the connection's own shard when it owns p, or on
// another shard it is handed to.
func (s *Server) notePlacement(c *connection, p *partitionRuntime) {
	switch {
	case c.shard == nil:
	case p.owner == c.shard:
		s.metrics.placedShard.Inc()
	default:
		s.metrics.placedForward.Inc()
	}
}
