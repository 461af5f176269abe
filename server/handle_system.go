package server

import (
	"net"
	"os"
	"runtime"
	"strconv"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/config"
)

// clientInfo builds the ClientInfo record of a connection.
func clientInfo(c *connection) wire.ClientInfo {
	bound, userID, _, _ := c.binding()
	info := wire.ClientInfo{ClientID: c.id, UserID: wire.UserIDNone, Transport: c.transport, Address: c.address}
	if bound {
		info.UserID = userID
	}
	return info
}

// handleGetMe runs GetMe (20).
func (s *Server) handleGetMe(c *connection) response {
	details := wire.ClientDetails{ClientInfo: clientInfo(c), ConsumerGroups: s.clientGroups(c)}
	return response{body: details.AppendTo(c.scratch[:0])}
}

// handleGetClient runs GetClient (21).
func (s *Server) handleGetClient(c *connection, body []byte) response {
	var req wire.GetClientRequest
	if err := req.Decode(body); err != nil {
		return response{}
	}
	id := req.ClientID
	if !s.canReadServers(c) {
		return deny(wire.ErrUnauthorized)
	}
	for _, other := range s.connectionsSnapshot() {
		if other.id == id {
			details := wire.ClientDetails{ClientInfo: clientInfo(other), ConsumerGroups: s.clientGroups(other)}
			return response{body: details.AppendTo(c.scratch[:0])}
		}
	}
	return response{}
}

// handleGetClients runs GetClients (22).
func (s *Server) handleGetClients(c *connection) response {
	if !s.canReadServers(c) {
		return deny(wire.ErrUnauthorized)
	}
	var infos []wire.ClientInfo
	for _, other := range s.connectionsSnapshot() {
		info := clientInfo(other)
		info.ConsumerGroupsCount = uint32(len(s.clientGroups(other)))
		infos = append(infos, info)
	}
	return response{body: wire.AppendClients(c.scratch[:0], infos)}
}

// canReadServers checks read_servers / manage_servers for the caller.
func (s *Server) canReadServers(c *connection) bool {
	_, userID, _, _ := c.binding()
	return s.meta.snapshot().CanReadServers(userID)
}

// handleGetClusterMetadata runs GetClusterMetadata (12): a single node that
// is its own leader, advertising the transports it serves and nothing
// else: a port is the one its listener is bound to (an ephemeral :0
// resolved), and 0 for a transport that is off or not bound.
func (s *Server) handleGetClusterMetadata(c *connection) response {
	bound := s.boundAddresses()
	node := wire.ClusterNode{Name: wire.SingleNodeName, IP: "127.0.0.1", Role: 0, Status: 0}
	node.TCPPort = portOf(bound.TCP)
	node.QUICPort = portOf(bound.QUIC)
	node.HTTPPort = portOf(bound.HTTP)
	node.WebSocketPort = portOf(bound.WebSocket)
	// The node's address is the TCP listener's, else the first other
	// transport's.
	for _, addr := range []string{bound.TCP, bound.WebSocket, bound.QUIC, bound.HTTP} {
		if host, _, err := net.SplitHostPort(addr); err == nil && host != "" {
			node.IP = host
			break
		}
	}
	meta := wire.ClusterMetadata{Name: wire.SingleNodeClusterName, Nodes: []wire.ClusterNode{node}}
	return response{body: meta.AppendTo(c.scratch[:0])}
}

// setBound records the addresses bound so far (Start calls it after each
// listener it binds).
func (s *Server) setBound(bound config.Bound) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bound = bound
}

// boundAddresses returns the addresses the listeners are bound to; a
// transport that is off or not bound has an empty address.
func (s *Server) boundAddresses() config.Bound {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound
}

// portOf returns the port of a host:port address, 0 when it has none.
func portOf(address string) uint16 {
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return 0
	}
	return uint16(n)
}

// handleDescribeOptions runs DescribeOptions (13).
func (s *Server) handleDescribeOptions(body []byte) response {
	var req wire.DescribeOptionsRequest
	if err := req.Decode(body); err != nil {
		return deny(wire.ErrInvalidCommand)
	}
	var reply wire.DescribeOptionsReply
	switch req.Scope {
	case wire.OptionScopeTopic:
		reply.Descriptors = wire.TopicOptionDescriptorsWithExtensions()
	case wire.OptionScopeStream, wire.OptionScopeUser:
	default:
		return deny(wire.ErrInvalidCommand)
	}
	out, err := reply.AppendTo(nil)
	if err != nil {
		return deny(wire.ErrCannotSerializeResource)
	}
	return response{body: out}
}

// handleGetStats runs GetStats (10).
func (s *Server) handleGetStats(c *connection) response {
	if !s.canReadServers(c) {
		return deny(wire.ErrUnauthorized)
	}
	stats := s.collectStats()
	return response{body: stats.AppendTo(c.scratch[:0])}
}

// collectStats gathers the Stats record: process, host and broker figures.
func (s *Server) collectStats() wire.Stats {
	now := s.now()
	st := wire.Stats{
		ProcessID:     uint32(os.Getpid()),
		RunTime:       uint64(now.Sub(s.startedAt).Microseconds()),
		StartTime:     uint64(s.startedAt.UnixMicro()),
		ServerVersion: wire.ServerVersion,
		ServerSemver:  wire.ServerSemver,
		OSName:        runtime.GOOS,
	}
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	st.MemoryUsage = mem.Sys
	fillHostStats(&st, s.cfg.System.Path, now.Sub(s.startedAt))
	streams, topics, partitions := s.meta.snapshot().Counts()
	st.StreamsCount, st.TopicsCount, st.PartitionsCount = uint32(streams), uint32(topics), uint32(partitions)
	for _, p := range s.parts.all() {
		_, messages, size, segments := p.stats()
		st.MessagesCount += messages
		st.MessagesSizeBytes += size
		st.SegmentsCount += uint32(segments)
	}
	st.ClientsCount = uint32(len(s.connectionsSnapshot()))
	st.ConsumerGroupsCount = s.consumerGroupsCount()
	st.WrittenBytes = uint64(metricValue(s.metrics.bytesSent))
	for _, f := range s.FencedPartitions() {
		st.FencedPartitions = append(st.FencedPartitions, f.wire())
	}
	return st
}

// endSessionsOfUser unbinds every connection of a deleted user. It runs
// on shard 0, a metadata effect (the binding table has its own mutex).
func (s *Server) endSessionsOfUser(userID uint32) {
	for _, c := range s.connectionsSnapshot() {
		if bound, uid, client, _ := c.binding(); bound && uid == userID {
			// The session stays in the group's client table (its user
			// can no longer log in to resume it) until the table evicts
			// it.
			s.meta.bindings.unbind(client)
			c.unbind()
		}
	}
}
