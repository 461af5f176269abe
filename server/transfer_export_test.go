package server

import "github.com/stratabroker/strata/server/group"

// Test hooks for the segment state transfer tests of package server_test.

// PartitionTransferStats returns the segment state transfer counters of
// this server's replica of a partition.
func (s *Server) PartitionTransferStats(stream, topic, partition uint32) (group.TransferStats, bool) {
	p, ok := s.parts.get(partKey{stream, topic, partition})
	if !ok {
		return group.TransferStats{}, false
	}
	var st group.TransferStats
	found := false
	if err := p.run(func() {
		if g := p.vsr; g != nil && !g.closed {
			st, found = g.host.TransferStats(), true
		}
	}); err != nil {
		return group.TransferStats{}, false
	}
	return st, found
}

// SetTransferServeHook makes fn see (and may change) every chunk of a
// segment transfer this server serves, before it leaves; nil removes it.
func (s *Server) SetTransferServeHook(fn func(chunk []byte)) {
	if fn == nil {
		s.transferServeHook.Store(nil)
		return
	}
	s.transferServeHook.Store(&fn)
}
