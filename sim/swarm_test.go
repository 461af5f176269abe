package sim

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stratabroker/strata/vsr"
)

// swarmTestSeeds is the size of the swarm inside go test.
const swarmTestSeeds = 200

// runSwarm runs seeds first..first+count-1 on a worker pool (each run is
// single-goroutine and independent) and returns the results in seed order.
// With stopAtFailure it stops handing out seeds after the first failure.
func runSwarm(first, count uint64, bugs vsr.BugSet, stopAtFailure bool, tune func(*Params)) []*Result {
	results := make([]*Result, count)
	next := make(chan uint64)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards results and failed
	failed := false
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := DrawParams(first + i)
				if tune != nil {
					tune(&p)
				}
				res := Run(Options{Params: p, Bugs: bugs})
				mu.Lock()
				results[i] = res
				if res.Outcome.Kind != OutcomeOK {
					failed = true
				}
				mu.Unlock()
			}
		}()
	}
	for i := uint64(0); i < count; i++ {
		mu.Lock()
		stop := stopAtFailure && failed
		mu.Unlock()
		if stop {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

func TestSwarm(t *testing.T) {
	count := uint64(swarmTestSeeds)
	if testing.Short() {
		count = 20
	}
	results := runSwarm(1, count, 0, false, nil)
	failed := 0
	var faults NetworkCounters
	var crashes uint64
	for _, res := range results {
		faults.DroppedLoss += res.Network.DroppedLoss
		faults.Partitions += res.Network.Partitions
		crashes += res.Process.Crashes
		if res.Outcome.Kind != OutcomeOK {
			failed++
			t.Errorf("seed=%d %s (reproduce: strata-sim run --seed %d)", res.Params.Seed, firstLineOf(res.Outcome.String()), res.Params.Seed)
		}
	}
	t.Logf("%d passed, %d failed; injected %d losses, %d partitions, %d crashes", len(results)-failed, failed, faults.DroppedLoss, faults.Partitions, crashes)
	if faults.DroppedLoss == 0 || faults.Partitions == 0 || crashes == 0 {
		t.Fatal("the swarm injected no faults of some kind")
	}
}

func firstLineOf(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
