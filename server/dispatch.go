package server

import (
	"github.com/stratabroker/strata/net/wire"
)

// dispatch routes one validated request by its operation (and, for
// NonReplicated requests, its command code), applying the session gate of
// PROTOCOL.md §2.1.
func (s *Server) dispatch(c *connection, h *wire.RequestHeader, body []byte) response {
	// A non-zero request checksum is verified before anything else (§1.7).
	if !h.RequestChecksum.IsZero() && !wire.VerifyRequestChecksum(h.RequestChecksum, body) {
		return deny(wire.ErrInvalidFormat)
	}
	bound, _, _, _ := c.binding()
	switch op := h.Operation; {
	case op == wire.OpRegister:
		return s.handleRegister(c, h, body)
	case op == wire.OpLogout:
		return s.handleLogout(c, h)
	case op == wire.OpNonReplicated:
		return s.dispatchRead(c, h, body, bound)
	case !bound:
		return response{evict: wire.EvictNoSession}
	case op >= wire.OpCreateTopicWithAssignments && op <= wire.OpTruncatePartition:
		return response{evict: wire.EvictInvalidRequestOperation}
	case op.IsMetadata():
		return s.handleMetadataWrite(c, h, body)
	case op == wire.OpSendMessages:
		return s.handleSendMessages(c, h, body)
	case op == wire.OpStoreConsumerOffset:
		return s.handleStoreConsumerOffset(c, h, body)
	case op == wire.OpDeleteConsumerOffset:
		return s.handleDeleteConsumerOffset(c, h, body)
	default:
		return response{drop: true}
	}
}

// dispatchRead routes a NonReplicated request by its command code.
func (s *Server) dispatchRead(c *connection, h *wire.RequestHeader, body []byte, bound bool) response {
	switch h.Code {
	case wire.CodePing:
		return response{}
	case wire.CodeLoginUser, wire.CodeLoginWithPersonalAccessToken:
		return response{evict: wire.EvictMalformedLogin}
	}
	if !bound {
		return deny(wire.ErrUnauthenticated)
	}
	switch h.Code {
	case wire.CodeLogoutUser, wire.CodeLoginRegister, wire.CodeLoginRegisterWithPat:
		return response{}
	case wire.CodeGetStats:
		return s.handleGetStats(c)
	case wire.CodeGetSnapshot:
		return s.handleGetSnapshot(c, body)
	case wire.CodeFlushUnsavedBuffer:
		return deny(wire.ErrFeatureUnavailable)
	case wire.CodeGetClusterMetadata:
		return s.handleGetClusterMetadata(c)
	case wire.CodeDescribeOptions:
		return s.handleDescribeOptions(body)
	case wire.CodeGetMe:
		return s.handleGetMe(c)
	case wire.CodeGetClient:
		return s.handleGetClient(c, body)
	case wire.CodeGetClients:
		return s.handleGetClients(c)
	case wire.CodeGetUser:
		return s.handleGetUser(c, body)
	case wire.CodeGetUsers:
		return s.handleGetUsers(c)
	case wire.CodeGetPersonalAccessTokens:
		return s.handleGetPersonalAccessTokens(c)
	case wire.CodePollMessages:
		return s.handlePollMessages(c, h, body)
	case wire.CodeGetConsumerOffset:
		return s.handleGetConsumerOffset(c, body)
	case wire.CodeGetStream:
		return s.handleGetStream(c, body)
	case wire.CodeGetStreams:
		return s.handleGetStreams(c)
	case wire.CodeGetTopic:
		return s.handleGetTopic(c, body)
	case wire.CodeGetTopics:
		return s.handleGetTopics(c, body)
	// Consumer groups (handle_groups.go).
	case wire.CodeGetConsumerGroup:
		return s.handleGetConsumerGroup(c, body)
	case wire.CodeGetConsumerGroups:
		return s.handleGetConsumerGroups(c, body)
	case wire.CodeSyncConsumerGroup:
		return s.handleSyncConsumerGroup(c, body)
	}
	if h.Code.Known() {
		// A replicated command sent as NonReplicated.
		return deny(wire.ErrFeatureUnavailable)
	}
	return deny(wire.ErrInvalidCommand)
}
