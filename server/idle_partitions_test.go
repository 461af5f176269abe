package server

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/config"
)

// What idle partitions cost: a real server over a real data directory,
// partitions created through the protocol (each on its consensus group),
// then the heap and resident memory they hold and the CPU the server
// spends while nothing happens.

// idleHeapPerPartitionMax bounds the heap one idle partition holds once
// created (runtime.MemStats after GC, divided by the partitions): issue
// 13's budget, 200 MiB for 10,000 partitions. A partition holds about 6
// KiB; with the fixed 1024-slot journal ring and write queues it held
// about 280 KiB.
const idleHeapPerPartitionMax = (200 << 20) / 10000

// idleServer starts a server over a temporary data directory with one
// stream and returns it with a session logged in as root.
func idleServer(tb testing.TB) (*Server, *LocalSession) {
	tb.Helper()
	cfg, err := config.Load("", []string{"STRATA_SYSTEM_PATH=" + tb.TempDir(), "STRATA_TCP_ADDRESS=127.0.0.1:0"})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(Options{Config: cfg, Root: RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	ls, err := s.OpenLocalSession(wire.TransportTCP, "idle")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := ls.Login("iggy", "iggy"); err != nil {
		tb.Fatal(err)
	}
	if _, err := ls.Do(&wire.CreateStreamRequest{Name: "s"}); err != nil {
		tb.Fatal(err)
	}
	return s, ls
}

// createPartitions creates n partitions in topics of at most 1000 named
// after prefix.
func createPartitions(tb testing.TB, ls *LocalSession, prefix string, n int) {
	tb.Helper()
	for topic := 0; n > 0; topic++ {
		count := min(n, 1000)
		n -= count
		req := wire.CreateTopicRequest{StreamID: wire.NumericID(0), PartitionsCount: uint32(count), Name: prefix + strconv.Itoa(topic)}
		if _, err := ls.Do(&req); err != nil {
			tb.Fatalf("create topic %s%d of %d partitions: %v", prefix, topic, count, err)
		}
	}
}

// sendToAll sends sends batches of one 100-byte message to each of the n
// partitions createPartitions made (partitions that were used, then went
// idle).
func sendToAll(tb testing.TB, ls *LocalSession, n, sends int) {
	tb.Helper()
	var bb wire.BatchBuilder
	if err := bb.Add(wire.MessageID{Low: 1}, make([]byte, 100), nil, 1); err != nil {
		tb.Fatal(err)
	}
	batch, err := bb.Finish()
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		for range sends {
			req := wire.SendMessagesRequest{StreamID: wire.NumericID(0), TopicID: wire.NumericID(uint32(i / 1000)),
				Partitioning: wire.PartitionIDPartitioning(uint32(i % 1000)), MessagesCount: 1, Batch: batch}
			if _, err := ls.Do(&req); err != nil {
				tb.Fatalf("send to partition %d: %v", i, err)
			}
		}
	}
}

// heapAfterGC returns the live heap after a full collection that also
// returned the free memory to the system (so that the RSS read next is
// what is in use).
func heapAfterGC() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// residentBytes returns the process's resident set size (0 where
// /proc/self/statm is missing).
func residentBytes() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// cpuTime returns the user plus system CPU time the process used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// idleFigures measures n idle partitions: heap and RSS added per
// partition, and the share of one core the idle server uses over idle.
type idleFigures struct {
	heapPerPartition, rssPerPartition float64
	heapTotal, rssTotal               uint64
	cpuShare                          float64
}

func measureIdle(tb testing.TB, n int, idle time.Duration) idleFigures {
	tb.Helper()
	_, ls := idleServer(tb)
	heapBefore, rssBefore := heapAfterGC(), residentBytes()
	createPartitions(tb, ls, "t", n)
	if sends, err := strconv.Atoi(os.Getenv("STRATA_TEST_IDLE_SENDS")); err == nil && sends > 0 {
		sendToAll(tb, ls, n, sends)
	}
	heap := heapAfterGC()
	rss := residentBytes()
	tb.Logf("heap %d -> %d bytes, RSS %d -> %d bytes", heapBefore, heap, rssBefore, rss)
	if path := os.Getenv("STRATA_TEST_IDLE_HEAPPROFILE"); path != "" {
		// A heap profile of the idle server, for go tool pprof.
		if fh, err := os.Create(path); err == nil {
			_ = pprof.WriteHeapProfile(fh)
			_ = fh.Close()
		}
	}
	f := idleFigures{heapTotal: heap - min(heap, heapBefore), rssTotal: rss - min(rss, rssBefore)}
	f.heapPerPartition = float64(f.heapTotal) / float64(n)
	f.rssPerPartition = float64(f.rssTotal) / float64(n)
	cpu0, t0 := cpuTime(), time.Now()
	time.Sleep(idle) // the figure is what the server spends meanwhile
	f.cpuShare = float64(cpuTime()-cpu0) / float64(time.Since(t0))
	return f
}

func (f idleFigures) String() string {
	return fmt.Sprintf("heap %.1f MiB (%.0f B/partition), RSS %.1f MiB (%.0f B/partition), idle CPU %.2f%% of one core",
		float64(f.heapTotal)/(1<<20), f.heapPerPartition, float64(f.rssTotal)/(1<<20), f.rssPerPartition, 100*f.cpuShare)
}

// TestIdlePartitionsHeap creates partitions on a real server and bounds
// the heap each more idle partition adds (the difference between 100 and
// 500 partitions, so that what the server holds whatever its partitions
// does not count; the heap after GC is stable enough to assert).
func TestIdlePartitionsHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 500 partitions")
	}
	_, ls := idleServer(t)
	createPartitions(t, ls, "a", 100)
	heap0 := heapAfterGC()
	const n = 400
	createPartitions(t, ls, "b", n)
	heap := heapAfterGC()
	per := float64(heap-min(heap, heap0)) / n
	t.Logf("%d more idle partitions: heap %.1f MiB more, %.0f B per partition", n, float64(heap-min(heap, heap0))/(1<<20), per)
	if per > idleHeapPerPartitionMax {
		t.Fatalf("an idle partition holds %.0f bytes of heap, more than %d", per, idleHeapPerPartitionMax)
	}
}

// BenchmarkIdlePartitions reports what 10,000 idle partitions cost one
// server (STRATA_TEST_IDLE_PARTITIONS changes the count): heap and RSS per
// partition and in all, and the share of one core spent idling over 5 s
// (STRATA_TEST_IDLE_SENDS=k first sends k batches to every partition).
// Not part of make test: go test ./server/ -run '^$' -bench IdlePartitions
// -benchtime 1x.
func BenchmarkIdlePartitions(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("STRATA_TEST_IDLE_PARTITIONS")); err == nil && v > 0 {
		n = v
	}
	for i := 0; i < b.N; i++ {
		start := time.Now()
		f := measureIdle(b, n, 5*time.Second)
		b.Logf("%d idle partitions (created and measured in %s): %s", n, time.Since(start).Round(time.Millisecond), f)
		b.ReportMetric(float64(f.heapTotal)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(f.rssTotal)/(1<<20), "rss-MiB")
		b.ReportMetric(f.heapPerPartition, "heap-B/partition")
		b.ReportMetric(f.rssPerPartition, "rss-B/partition")
		b.ReportMetric(100*f.cpuShare, "idle-cpu-%")
	}
}
