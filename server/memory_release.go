package server

import (
	"context"
	"runtime/debug"
	"time"

	"go.uber.org/zap"
)

// memoryReturnBytesMin is how much dropped buffer memory makes the
// releaser hand it back to the operating system at once
// (debug.FreeOSMemory: a collection, then every free page returned)
// rather than at the collector's own pace, which leaves a burst's memory
// resident until the next collection (up to two minutes on a quiet
// server) and returns it page by page after that.
const memoryReturnBytesMin = 16 << 20

// runMemoryRelease drops idle buffers every
// system.memory_pool.idle_release_interval until ctx ends, so that the
// memory of a burst (large frames, a flood of connections) comes back once
// it is over. It returns at once when the interval is 0.
func (s *Server) runMemoryRelease(ctx context.Context) {
	interval := time.Duration(s.cfg.System.MemoryPool.IdleReleaseInterval)
	if interval <= 0 {
		return
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			s.releaseIdleMemory()
		}
	}
}

// releaseIdleMemory drops the memory pool's idle buffers (those no Get
// needed since the last run) and forgets the plain request buffers
// dropped since (memory pool disabled); past memoryReturnBytesMin it
// returns the memory to the operating system.
func (s *Server) releaseIdleMemory() {
	var releasedBytes int64
	if s.pool != nil {
		releasedBytes += s.pool.ReleaseIdle()
	}
	releasedBytes += s.guard.budget.plainReleasedBytes.Swap(0)
	if releasedBytes == 0 {
		return
	}
	s.metrics.memoryReleased.Add(float64(releasedBytes))
	if releasedBytes >= memoryReturnBytesMin {
		debug.FreeOSMemory()
		s.log.Info("idle buffers returned to the operating system", zap.Int64("bytes", releasedBytes))
	}
}
