package server

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/shard"
)

// Where a connection's requests run (DESIGN.md decision 9, issue 4).
//
// Shard 0 binds the listeners; every accepted connection is handed to a
// shard in round-robin (shard 0 left out with skip_shard_zero_for_clients),
// and that shard serves it from then on: each request runs as a task on
// the connection's shard. The Go runtime's network poller reads and writes
// the socket on the connection's goroutine and hands each frame to the
// shard, which plays the part io_uring's socket completions play in Iggy.
//
// A shard task never waits for another shard: two shards waiting on each
// other would deadlock, and a waiting shard stalls every partition it
// owns. So a request that needs another shard, or would block, is
// forwarded instead of run on the connection's shard:
//   - partition operations go to the partition's owner (the namespace
//     hash), whichever shard received them: a task on the owner when the
//     connection's goroutine hands them over;
//   - metadata writes (sessions, streams, topics, users, ...) go to the
//     metadata writer, whose journal IO runs on shard 0;
//   - persisted sends wait for their group commit, and consumer-group
//     operations coordinate members under a lock: both wait off the shards.

// placement says where one request runs.
type placement uint8

const (
	// placeShard: a task on the connection's shard (which owns the
	// partition, for a partition operation).
	placeShard placement = iota + 1
	// placeForward: on the connection's goroutine, which forwards the
	// work to the owning shard or the metadata writer and waits.
	placeForward
)

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

// place decides where a validated request runs.
func (s *Server) place(c *connection, h *wire.RequestHeader, body []byte) placement {
	if c.shard == nil {
		return placeForward
	}
	switch h.Operation {
	case wire.OpSendMessages:
		// Sends are resolved before placement (conn.go), see placeSend.
		return placeForward
	case wire.OpStoreConsumerOffset:
		var req wire.StoreConsumerOffsetRequest
		if req.Decode(body) != nil {
			return placeShard
		}
		return s.placeOffsetTarget(c, req.OffsetTarget)
	case wire.OpDeleteConsumerOffset:
		var req wire.DeleteConsumerOffsetRequest
		if req.Decode(body) != nil {
			return placeShard
		}
		return s.placeOffsetTarget(c, req.OffsetTarget)
	case wire.OpNonReplicated:
	default:
		// Register, Logout and the metadata writes.
		return placeForward
	}
	switch h.Code {
	case wire.CodePing, wire.CodeGetClusterMetadata, wire.CodeDescribeOptions, wire.CodeGetMe,
		wire.CodeGetUser, wire.CodeGetUsers, wire.CodeGetPersonalAccessTokens,
		wire.CodeGetStream, wire.CodeGetStreams, wire.CodeGetTopic, wire.CodeGetTopics:
		// Reads of the published metadata view and partition counters.
		return placeShard
	case wire.CodePollMessages:
		var req wire.PollMessagesRequest
		if req.Decode(body) != nil {
			return placeShard
		}
		return s.placeOffsetTarget(c, wire.OffsetTarget{Consumer: req.Consumer, StreamID: req.StreamID, TopicID: req.TopicID, Partition: req.Partition})
	case wire.CodeGetConsumerOffset:
		var req wire.GetConsumerOffsetRequest
		if req.Decode(body) != nil {
			return placeShard
		}
		return s.placeOffsetTarget(c, req.OffsetTarget)
	}
	return placeForward
}

// placeOffsetTarget places a plain consumer's partition operation on the
// connection's shard when that shard owns the partition.
func (s *Server) placeOffsetTarget(c *connection, t wire.OffsetTarget) placement {
	if t.Consumer.Kind == wire.ConsumerKindGroup {
		return placeForward
	}
	_, userID, _, _ := c.binding()
	p, code := s.resolvePartition(userID, t)
	if code != wire.ErrorCodeOK {
		// A denial touches no partition: answer it on the shard.
		return placeShard
	}
	if p.owner == c.shard {
		return placeShard
	}
	return placeForward
}

// placeSend places a resolved send: on the connection's shard when it owns
// the partition and the topic does not wait for a sync.
func placeSend(c *connection, p *partitionRuntime) placement {
	if c.shard != nil && p.owner == c.shard && !p.persisted {
		return placeShard
	}
	return placeForward
}

// crossShardWait reports a shard task about to wait for another shard (or
// for a sync): a placement bug. The invariants build panics; release
// builds refuse the request (errCrossShard) and keep serving.
func crossShardWait(on, owner *shard.Shard) {
	if invariantsEnabled {
		panic(fmt.Sprintf("server: a task on shard %d would wait for shard %d", on.ID(), owner.ID()))
	}
}

// route runs one validated request where its placement says: a task on
// the connection's shard, or the connection's goroutine, which forwards.
func (s *Server) route(c *connection, h *wire.RequestHeader, body []byte) response {
	if c.shard == nil {
		return s.dispatch(c, h, body)
	}
	if h.Operation == wire.OpSendMessages {
		return s.routeSend(c, h, body)
	}
	if s.place(c, h, body) == placeShard {
		return s.onConnShard(c, func() response { return s.dispatch(c, h, body) })
	}
	s.metrics.placedForward.Inc()
	return s.dispatch(c, h, body)
}

// routeSend resolves a send on the connection's goroutine (the balanced
// partition is picked exactly once), then appends on the connection's
// shard if it owns the partition, or forwards to the owner.
func (s *Server) routeSend(c *connection, h *wire.RequestHeader, body []byte) response {
	if !h.RequestChecksum.IsZero() && !wire.VerifyRequestChecksum(h.RequestChecksum, body) {
		return deny(wire.ErrInvalidFormat)
	}
	if bound, _, _, _ := c.binding(); !bound {
		return response{evict: wire.EvictNoSession}
	}
	target, denial, ok := s.resolveSend(c, h, body)
	if !ok {
		return denial
	}
	if placeSend(c, target.p) == placeShard {
		return s.onConnShard(c, func() response { return s.executeSend(c, &target) })
	}
	s.metrics.placedForward.Inc()
	return s.executeSend(c, &target)
}

// onConnShard runs handle as a task on the connection's shard and waits
// for its response.
func (s *Server) onConnShard(c *connection, handle func() response) response {
	var r response
	err := c.shard.Call(func() {
		c.on = c.shard
		r = handle()
		c.on = nil
	})
	if err != nil {
		return deny(wire.ErrTransientNotAccepted)
	}
	s.metrics.placedShard.Inc()
	return r
}
