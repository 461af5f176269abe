package server

import (
	"context"
	"time"
)

// Test hooks for the consumer-group tests of package server_test.

// RunHeartbeatVerifierForTest starts the heartbeat verifier until ctx ends.
func RunHeartbeatVerifierForTest(s *Server, ctx context.Context) { go s.runHeartbeatVerifier(ctx) }

// ReleaseOrphanGroupMembersForTest runs the verifier's orphan sweep once.
func ReleaseOrphanGroupMembersForTest(s *Server) { s.releaseOrphanGroupMembers() }

// VerifyHeartbeatsForTest runs one verifier round as if at now.
func VerifyHeartbeatsForTest(s *Server, now time.Time, interval time.Duration) {
	s.verifyHeartbeats(now, interval)
}

// ConsumerGroupsCountForTest is the Stats consumer_groups_count.
func ConsumerGroupsCountForTest(s *Server) uint32 { return s.consumerGroupsCount() }
