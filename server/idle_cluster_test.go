package server_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stratabroker/strata/server"
)

// TestIdleClusterFigures measures what idle partitions cost an in-process
// cluster of three replicas (the tick and heartbeat cost a group of one
// does not have): STRATA_TEST_IDLE_CLUSTER_PARTITIONS partitions on every
// replica, then the heap the process holds and the share of one core it
// spends over 5 s of idling, per replica. A figure for the log, not a
// pass/fail check; skipped unless the variable is set (not in make test).
func TestIdleClusterFigures(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("STRATA_TEST_IDLE_CLUSTER_PARTITIONS"))
	if err != nil || n <= 0 || n > 1000 {
		t.Skip("set STRATA_TEST_IDLE_CLUSTER_PARTITIONS to 1..1000")
	}
	const replicas = 3
	heap0 := liveHeap()
	c := startCluster(t, replicas, server.ClusterOptions{})
	c.createTopic(uint32(n), nil)
	c.primary(uint32(n - 1))
	time.Sleep(time.Second) // let the groups settle (figures only)
	heap := liveHeap()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	if path := os.Getenv("STRATA_TEST_IDLE_CPUPROFILE"); path != "" {
		// A CPU profile of the idle window, for go tool pprof.
		if fh, err := os.Create(path); err == nil && pprof.StartCPUProfile(fh) == nil {
			defer func() { _ = fh.Close() }()
			defer pprof.StopCPUProfile()
		}
	}
	time.Sleep(5 * time.Second)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	elapsed := time.Since(start)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	share := float64(cpu) / float64(elapsed) / replicas
	t.Logf("%d idle partitions on each of %d replicas: heap %.1f MiB (%.0f B per partition replica), idle CPU %.2f%% of one core per replica (%.2f%% for 10,000 partitions at this rate)",
		n, replicas, float64(heap-min(heap, heap0))/(1<<20), float64(heap-min(heap, heap0))/float64(n*replicas), 100*share, 100*share*10000/float64(n))
}

// liveHeap returns the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
