package server_test

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/vsr"
)

// TestIdleClusterMessagesPerTick: an idle in-process cluster of three
// replicas with many partitions costs per tick what a cluster of one
// partition does, not a price per partition. Over 200 ticks of the
// replica plane, each replica sends at most one message (an announcement
// frame) per peer and tick, whatever the partition count: the primaries'
// commit heartbeats are coalesced, not one Commit message per group and
// peer (before: 90 partitions sent about 6 messages per replica and
// tick). Its group ticks are those of the commit heartbeats (an idle
// primary is due once per vsr CommitHeartbeatTicks, an idle backup never;
// before: every group every tick), no group is ticked past its due tick,
// and no group changes views. Counts, not timings.
func TestIdleClusterMessagesPerTick(t *testing.T) {
	const replicas, partitions, window = 3, 90, 200
	c := startCluster(t, replicas, server.ClusterOptions{})
	c.createTopic(partitions, nil)
	// The replicas create the partitions one after the other: a group
	// whose replicas were not all there yet changed views meanwhile.
	// Measure once every group is normal in one view on every replica.
	c.waitFor("every group normal in one view everywhere", func() bool {
		for p := range uint32(partitions) {
			first, _ := c.status(0, p)
			for i := range c.nodes {
				if st, ok := c.status(i, p); !ok || st.Status != vsr.StatusNormal || st.View != first.View {
					return false
				}
			}
		}
		return true
	})
	stats := func() (s [replicas]server.ReplicaPlaneStats, sent [replicas]uint64) {
		for i, node := range c.nodes {
			s[i] = node.srv.ReplicaPlaneStats()
			sent[i] = c.bus.nodes[i].sent.Load()
		}
		return s, sent
	}
	views := func() (v [replicas][partitions]uint64) {
		for i := range c.nodes {
			for p := range uint32(partitions) {
				st, _ := c.status(i, p)
				v[i][p] = st.View
			}
		}
		return v
	}
	views0 := views()
	before, sentBefore := stats()
	c.waitFor(fmt.Sprintf("%d ticks on every replica", window), func() bool {
		for i, node := range c.nodes {
			if node.srv.ReplicaPlaneStats().Ticks < before[i].Ticks+window {
				return false
			}
		}
		return true
	})
	after, sentAfter := stats()
	peers := uint64(replicas - 1)
	for i := range c.nodes {
		ticks := after[i].Ticks - before[i].Ticks
		sent := sentAfter[i] - sentBefore[i]
		groupTicks := after[i].GroupTicks - before[i].GroupTicks
		t.Logf("replica %d, %d idle partitions, %d ticks (%d shard ticks): %d messages sent (%.2f per tick), %d group ticks (%.2f per tick), %d announcements in %d frames, %d received",
			i, partitions, ticks, after[i].ShardTicks-before[i].ShardTicks, sent, float64(sent)/float64(ticks), groupTicks, float64(groupTicks)/float64(ticks),
			after[i].Announcements-before[i].Announcements, after[i].Frames-before[i].Frames, after[i].Received-before[i].Received)
		if limit := peers*(ticks+2) + 10; sent > limit {
			t.Errorf("replica %d sent %d messages in %d ticks: more than one per peer and tick (%d)", i, sent, ticks, limit)
		}
		if limit := ticks * partitions / 5; groupTicks > limit {
			t.Errorf("replica %d ran %d group ticks in %d ticks of %d idle groups: more than %d", i, groupTicks, ticks, partitions, limit)
		}
		if late := after[i].LateTicks - before[i].LateTicks; late != 0 {
			t.Errorf("replica %d ticked %d groups past their due tick", i, late)
		}
		if after[i].Received == before[i].Received {
			t.Errorf("replica %d received no announcement: its backups hear no heartbeat", i)
		}
	}
	if v := views(); v != views0 {
		for i := range c.nodes {
			for p := range partitions {
				if v[i][p] != views0[i][p] {
					st, _ := c.status(i, uint32(p))
					t.Logf("replica %d p%d: view %d, then %+v", i, p, views0[i][p], st)
				}
			}
		}
		t.Errorf("a group changed views while idle: its backups missed heartbeats")
	}
}

// idleFigures measures what n idle partitions cost an in-process cluster
// of three replicas (the tick and heartbeat cost a group of one does not
// have): the heap the process holds and the share of one core it spends
// over window of idling, per replica, and the replica plane's work per
// tick. Figures for a log or a benchmark, never a pass/fail check.
func idleFigures(tb testing.TB, n int, window time.Duration) (heapPerReplica float64, share float64, perTick server.ReplicaPlaneStats) {
	const replicas = 3
	heap0 := liveHeap()
	c := startCluster(tb, replicas, server.ClusterOptions{})
	c.createTopic(uint32(n), nil)
	c.primary(uint32(n - 1))
	// The replicas create the partitions one after the other, so groups
	// change views until all are there: measure once they settled.
	settled := func() bool {
		for p := range uint32(n) {
			first, _ := c.status(0, p)
			for i := range c.nodes {
				if st, ok := c.status(i, p); !ok || st.Status != vsr.StatusNormal || st.View != first.View {
					return false
				}
			}
		}
		return true
	}
	for deadline := time.Now().Add(2 * time.Minute); !settled() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // figures only
	heap := liveHeap()
	s0 := c.nodes[0].srv.ReplicaPlaneStats()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	stopProfile := func() {}
	if path := os.Getenv("STRATA_TEST_IDLE_CPUPROFILE"); path != "" {
		// A CPU profile of the idle window (not of the shutdown), for go
		// tool pprof.
		if fh, err := os.Create(path); err == nil && pprof.StartCPUProfile(fh) == nil {
			stopProfile = func() { pprof.StopCPUProfile(); _ = fh.Close() }
		}
	}
	time.Sleep(window)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	stopProfile()
	elapsed := time.Since(start)
	s1 := c.nodes[0].srv.ReplicaPlaneStats()
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	share = float64(cpu) / float64(elapsed) / replicas
	ticks := max(s1.Ticks-s0.Ticks, 1)
	perTick = server.ReplicaPlaneStats{Ticks: ticks, GroupTicks: (s1.GroupTicks - s0.GroupTicks) / ticks,
		Frames: (s1.Frames - s0.Frames) / ticks, Announcements: (s1.Announcements - s0.Announcements) / ticks}
	for i := range c.nodes {
		c.stop(i)
	}
	return float64(heap-min(heap, heap0)) / replicas, share, perTick
}

// TestIdleClusterFigures logs idleFigures for
// STRATA_TEST_IDLE_CLUSTER_PARTITIONS partitions over 5 s; skipped unless
// the variable is set (not in make test).
func TestIdleClusterFigures(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("STRATA_TEST_IDLE_CLUSTER_PARTITIONS"))
	if err != nil || n <= 0 || n > 10000 {
		t.Skip("set STRATA_TEST_IDLE_CLUSTER_PARTITIONS to 1..10000")
	}
	heap, share, per := idleFigures(t, n, 5*time.Second)
	t.Logf("%d idle partitions on each of 3 replicas: heap %.1f MiB per replica (%.0f B per partition replica), idle CPU %.2f%% of one core per replica; per tick (node 0): %d group ticks, %d frames, %d announcements",
		n, heap/(1<<20), heap/float64(n), 100*share, per.GroupTicks, per.Frames, per.Announcements)
}

// BenchmarkIdleCluster reports what idle partitions cost a replica of an
// in-process cluster of three, at 300 and 1,000 partitions (more with
// STRATA_BENCH_IDLE_PARTITIONS): idle CPU in percent of one core per
// replica, group ticks and announcement frames per tick. Each iteration
// idles one second; run with -benchtime=3x -run '^$'.
func BenchmarkIdleCluster(b *testing.B) {
	sizes := []int{300, 1000}
	if n, err := strconv.Atoi(os.Getenv("STRATA_BENCH_IDLE_PARTITIONS")); err == nil && n > 0 {
		sizes = []int{n}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			heap, share, per := idleFigures(b, n, time.Duration(b.N)*time.Second)
			b.ReportMetric(100*share, "cpu%/replica")
			b.ReportMetric(heap/float64(n), "B/partition-replica")
			b.ReportMetric(float64(per.GroupTicks), "groupticks/tick")
			b.ReportMetric(float64(per.Frames), "frames/tick")
		})
	}
}

// liveHeap returns the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestViewChangeSyncFigures measures what a view change of many groups at
// once costs the survivors' disks: a 3-replica cluster of 180 partitions
// (or STRATA_TEST_VIEWCHANGE_PARTITIONS, up to 3000) on memfs loses the
// replica that leads the most groups, and the test logs the file syncs
// the two survivors ran until every group is served again, per group
// that changed views. The superblock syncs are coalesced per shard
// (sbfile_sync.go): before, with a consensus.vsr of its own per group,
// the survivors ran about 8 file syncs per group (240 for 30 of 90
// groups; 4 superblock syncs per group and survivor); now under one per
// group (a few per shard and round of the protocol), each superblock
// file sync serving several groups' Syncs. The bounds (at most 2 file
// syncs per group, at least 2 group Syncs per superblock file sync) fail
// when coalescing is off; timings are logged only.
func TestViewChangeSyncFigures(t *testing.T) {
	n := 180
	if v := os.Getenv("STRATA_TEST_VIEWCHANGE_PARTITIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 || n > 3000 {
			t.Fatalf("STRATA_TEST_VIEWCHANGE_PARTITIONS=%q: want 1..3000", v)
		}
	}
	const replicas = 3
	fss := newPowerFSs(replicas)
	c := startClusterOn(t, replicas, server.ClusterOptions{}, fss, nil)
	c.createTopic(uint32(n), nil)
	normal := func() bool {
		for p := range uint32(n) {
			served := false
			for i := range c.nodes {
				st, ok := c.status(i, p)
				if c.nodes[i] != nil && (!ok || st.Status != vsr.StatusNormal) {
					return false
				}
				served = served || st.Serving
			}
			if !served {
				return false
			}
		}
		return true
	}
	c.waitFor("every group normal and served", normal)
	led := make([]int, replicas)
	for p := range uint32(n) {
		for i := range c.nodes {
			if st, _ := c.status(i, p); st.Serving {
				led[i]++
			}
		}
	}
	victim := 0
	for i := range led {
		if led[i] > led[victim] {
			victim = i
		}
	}
	syncs := func() (s int) {
		for i, fs := range fss {
			if i != victim {
				p := fs.(*powerFS)
				p.mu.Lock()
				s += p.fs.Syncs()
				p.mu.Unlock()
			}
		}
		return s
	}
	sbStats := func() (syncs, requests uint64) {
		for i, node := range c.nodes {
			if i != victim {
				s, r := node.srv.SuperblockSyncStats()
				syncs, requests = syncs+s, requests+r
			}
		}
		return syncs, requests
	}
	before := syncs()
	sbSyncs0, sbRequests0 := sbStats()
	start := time.Now()
	c.stop(victim)
	c.waitFor("every group served by the survivors", normal)
	got := syncs() - before
	sbSyncs, sbRequests := sbStats()
	sbSyncs, sbRequests = sbSyncs-sbSyncs0, sbRequests-sbRequests0
	t.Logf("superblocks.sb: %d coalesced syncs served %d group superblock syncs", sbSyncs, sbRequests)
	t.Logf("%d partitions, replica %d led %d groups and stopped: the 2 survivors ran %d file syncs until every group was served again (%.1f per group that changed views, %v)",
		n, victim, led[victim], got, float64(got)/float64(max(led[victim], 1)), time.Since(start).Round(time.Millisecond))
	// Without coalescing: about 8 file syncs per group (4 superblock
	// syncs per group and survivor), and one file sync per group Sync.
	if n >= 90 && (got > 2*led[victim] || sbRequests < 2*sbSyncs) {
		t.Fatalf("%d file syncs for the view change of %d groups, %d superblock file syncs for %d group syncs: the superblock syncs are not coalesced",
			got, led[victim], sbSyncs, sbRequests)
	}
}
