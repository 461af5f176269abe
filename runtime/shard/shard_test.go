package shard

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func startShard(t *testing.T, config Config) *Shard {
	t.Helper()
	shard, err := New(config)
	if err != nil {
		t.Fatalf("New(%+v): %v", config, err)
	}
	if err := shard.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(shard.Stop)
	return shard
}

func TestNewValidatesConfig(t *testing.T) {
	for _, bad := range []Config{
		{InboxCapacity: -1}, {InboxCapacity: InboxCapacityMax + 1},
		{EventInterval: -1}, {EventInterval: EventIntervalMax + 1},
		{ID: -1}, {ID: ShardCountMax}, {Pin: true, CPU: -1}, {Pin: true, CPU: CPUNumberMax + 1},
		{Pin: true, Unlocked: true},
	} {
		if _, err := New(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", bad, err)
		}
	}
}

func TestTasksRunInOrder(t *testing.T) {
	for _, unlocked := range []bool{false, true} {
		testTasksRunInOrder(t, Config{ID: 3, Unlocked: unlocked})
	}
}

func testTasksRunInOrder(t *testing.T, config Config) {
	shard := startShard(t, config)
	var order []int // touched only by shard tasks
	for index := range 100 {
		if err := shard.Submit(func() { order = append(order, index) }); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	if err := shard.Call(func() { got = slices.Clone(order) }); err != nil {
		t.Fatal(err)
	}
	want := make([]int, 100)
	for index := range want {
		want[index] = index
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tasks ran in order %v", got)
	}
	if shard.ID() != 3 || shard.Pinned() {
		t.Fatalf("ID %d pinned %v", shard.ID(), shard.Pinned())
	}
}

func TestInboxIsBounded(t *testing.T) {
	const capacity = 4
	shard := startShard(t, Config{InboxCapacity: capacity})
	entered, release := make(chan struct{}), make(chan struct{})
	if err := shard.Submit(func() { close(entered); <-release }); err != nil {
		t.Fatal(err)
	}
	<-entered // the loop is now busy inside the first task
	var ran []int
	for index := range capacity {
		if err := shard.Submit(func() { ran = append(ran, index) }); err != nil {
			t.Fatalf("task %d of %d refused: %v", index, capacity, err)
		}
	}
	if err := shard.Submit(func() { t.Error("task over capacity ran") }); !errors.Is(err, ErrInboxFull) {
		t.Fatalf("Submit to a full inbox = %v, want ErrInboxFull", err)
	}
	close(release)
	var got []int
	if err := shard.Call(func() { got = slices.Clone(ran) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("queued tasks ran as %v", got)
	}
}

func TestStopRunsAcceptedTasksThenRefuses(t *testing.T) {
	shard, err := New(Config{InboxCapacity: 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := shard.Start(); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	if err := shard.Submit(func() { close(entered); <-release }); err != nil {
		t.Fatal(err)
	}
	<-entered
	var count atomic.Int32
	for range 10 {
		if err := shard.Submit(func() { count.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	stopped := make(chan struct{})
	go func() {
		shard.Stop()
		close(stopped)
	}()
	// A Call blocked behind Stop must come back with ErrStopped or run.
	callErr := make(chan error, 1)
	go func() { callErr <- shard.Call(func() {}) }()
	close(release)
	<-stopped
	if got := count.Load(); got != 10 {
		t.Fatalf("%d of 10 accepted tasks ran before Stop returned", got)
	}
	if err := <-callErr; err != nil && !errors.Is(err, ErrStopped) {
		t.Fatalf("Call during Stop = %v", err)
	}
	if err := shard.Submit(func() {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Submit after Stop = %v", err)
	}
	if err := shard.Call(func() {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Call after Stop = %v", err)
	}
	if _, err := shard.Every(time.Millisecond, func() {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Every after Stop = %v", err)
	}
	if err := shard.Start(); !errors.Is(err, ErrStopped) {
		t.Fatalf("second Start = %v", err)
	}
	shard.Stop() // idempotent
	<-shard.Done()
}

func TestStopOfAShardNeverStarted(t *testing.T) {
	shard, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	shard.Stop()
	if err := shard.Start(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Start after Stop = %v", err)
	}
	if err := shard.Submit(func() {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Submit = %v", err)
	}
}

func TestTimersFireOnTheShard(t *testing.T) {
	shard := startShard(t, Config{})
	ticks := make(chan struct{}, 16)
	var onShard atomic.Bool
	onShard.Store(true)
	var firing atomic.Int32
	id, err := shard.Every(TimerIntervalMin, func() {
		if firing.Add(1) != 1 {
			onShard.Store(false) // two firings at once: not on one loop
		}
		select {
		case ticks <- struct{}{}:
		default:
		}
		firing.Add(-1)
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		<-ticks
	}
	if !shard.Cancel(id) || shard.Cancel(id) {
		t.Fatalf("Cancel of a registered timer should succeed once")
	}
	// Cancelled on the shard, a timer never fires again.
	second := make(chan struct{}, 1)
	var secondID TimerID
	var everyErr error
	if err := shard.Call(func() {
		secondID, everyErr = shard.Every(TimerIntervalMin, func() { second <- struct{}{} })
		// Busy past the deadline, then cancel before the loop looks again.
		deadline := time.Now().Add(10 * TimerIntervalMin)
		for time.Now().Before(deadline) {
		}
		if !shard.Cancel(secondID) {
			t.Error("Cancel on the shard failed")
		}
	}); err != nil || everyErr != nil {
		t.Fatal(err, everyErr)
	}
	// Let the loop run its timers a few more rounds; the cancelled one must
	// stay silent.
	for range 3 {
		if err := shard.Call(func() {}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-second:
		t.Fatalf("a timer cancelled on the shard fired")
	default:
	}
	if !onShard.Load() {
		t.Fatalf("timer callbacks overlapped")
	}
}

func TestTimerArguments(t *testing.T) {
	shard := startShard(t, Config{})
	if _, err := shard.Every(time.Second, nil); !errors.Is(err, ErrTimer) {
		t.Errorf("nil callback: %v", err)
	}
	if _, err := shard.Every(time.Nanosecond, func() {}); !errors.Is(err, ErrTimer) {
		t.Errorf("too short: %v", err)
	}
	for range timerCountMax {
		if _, err := shard.Every(time.Hour, func() {}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := shard.Every(time.Hour, func() {}); !errors.Is(err, ErrTimer) {
		t.Errorf("timer over the limit: %v", err)
	}
}

// fakeEngine is an IO engine whose operations complete one per Poll.
type fakeEngine struct {
	mu        sync.Mutex
	inFlight  int
	completed chan int
	polls     atomic.Int64
	done      int
}

func (e *fakeEngine) submit(count int) {
	e.mu.Lock()
	e.inFlight += count
	e.mu.Unlock()
}

func (e *fakeEngine) Poll() int {
	e.polls.Add(1)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inFlight > 0 {
		e.inFlight--
		e.done++
		e.completed <- e.done
	}
	return e.inFlight
}

func TestPollerDrivesCompletions(t *testing.T) {
	engine := &fakeEngine{completed: make(chan int, 8)}
	shard := startShard(t, Config{Poller: PollerFunc(engine.Poll), EventInterval: 2})
	// Operations submitted from the shard complete without further tasks
	// arriving: the loop keeps polling while they are in flight.
	if err := shard.Submit(func() { engine.submit(5) }); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 5; want++ {
		if got := <-engine.completed; got != want {
			t.Fatalf("completion %d arrived as %d", want, got)
		}
	}
	// A busy inbox still polls every EventInterval tasks.
	entered, release := make(chan struct{}), make(chan struct{})
	if err := shard.Submit(func() { close(entered); <-release }); err != nil {
		t.Fatal(err)
	}
	<-entered
	before := engine.polls.Load()
	for range 10 {
		if err := shard.Submit(func() {}); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	if err := shard.Call(func() {}); err != nil {
		t.Fatal(err)
	}
	if polls := engine.polls.Load() - before; polls < 5 {
		t.Fatalf("11 tasks at event interval 2 were interleaved with only %d polls", polls)
	}
}

func TestStopWaitsForInFlightIO(t *testing.T) {
	engine := &fakeEngine{completed: make(chan int, 8)}
	shard, err := New(Config{Poller: engine})
	if err != nil {
		t.Fatal(err)
	}
	if err := shard.Start(); err != nil {
		t.Fatal(err)
	}
	if err := shard.Call(func() { engine.submit(3) }); err != nil {
		t.Fatal(err)
	}
	shard.Stop()
	engine.mu.Lock()
	defer engine.mu.Unlock()
	if engine.inFlight != 0 || engine.done != 3 {
		t.Fatalf("Stop returned with %d operations in flight, %d done", engine.inFlight, engine.done)
	}
}

func TestPinnedShardRunsOnItsCPU(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cpu := allowed[len(allowed)-1]
	shard := startShard(t, Config{CPU: cpu, Pin: true})
	var affinity []int
	var affinityErr error
	if err := shard.Call(func() { affinity, affinityErr = AllowedCPUs() }); err != nil {
		t.Fatal(err)
	}
	if affinityErr != nil || !slices.Equal(affinity, []int{cpu}) {
		t.Fatalf("pinned shard's thread may run on %v (%v), want [%d]", affinity, affinityErr, cpu)
	}
	unpinned := startShard(t, Config{CPU: cpu})
	if err := unpinned.Call(func() { affinity, affinityErr = AllowedCPUs() }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(affinity, allowed) {
		t.Fatalf("unpinned shard's thread may run on %v, want %v", affinity, allowed)
	}
}

func TestStartReportsPinFailure(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(allowed, CPUNumberMax) {
		t.Skip("every CPU number is allowed here")
	}
	shard, err := New(Config{CPU: CPUNumberMax, Pin: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := shard.Start(); !errors.Is(err, ErrAffinity) {
		t.Fatalf("Start pinned to a CPU outside the allowed set = %v", err)
	}
	<-shard.Done()
	if err := shard.Submit(func() {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Submit to a shard that failed to start = %v", err)
	}
}

func TestStartPlan(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := BuildPlan(Allocation{Mode: AllocationAll}, allowed, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	shards, err := StartPlan(plan, Config{InboxCapacity: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for index, shard := range shards {
		var affinity []int
		if err := shard.Call(func() { affinity, _ = AllowedCPUs() }); err != nil {
			t.Fatal(err)
		}
		if shard.ID() != index || !slices.Equal(affinity, []int{plan.CPUs[index]}) {
			t.Errorf("shard %d (ID %d) runs on %v, plan says %d", index, shard.ID(), affinity, plan.CPUs[index])
		}
		shard.Stop()
	}
	bad := Plan{CPUs: []int{allowed[0], CPUNumberMax}, Pin: true}
	if slices.Contains(allowed, CPUNumberMax) {
		return
	}
	if _, err := StartPlan(bad, Config{}, nil); !errors.Is(err, ErrAffinity) {
		t.Fatalf("StartPlan with an unusable CPU = %v", err)
	}
}

// TestStopRacingSubmitters checks that every task Submit accepted runs,
// however Stop interleaves with the senders.
func TestStopRacingSubmitters(t *testing.T) {
	for round := range 8 {
		shard, err := New(Config{InboxCapacity: 16, EventInterval: 1, Unlocked: round%2 == 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := shard.Start(); err != nil {
			t.Fatal(err)
		}
		var accepted, ran atomic.Int64
		var senders sync.WaitGroup
		for range 3 {
			senders.Add(1)
			go func() {
				defer senders.Done()
				for {
					err := shard.Submit(func() { ran.Add(1) })
					switch {
					case err == nil:
						accepted.Add(1)
					case errors.Is(err, ErrStopped):
						return
					default:
						runtime.Gosched()
					}
				}
			}()
		}
		for accepted.Load() < int64(20*round) {
			runtime.Gosched()
		}
		shard.Stop()
		senders.Wait()
		if accepted.Load() != ran.Load() {
			t.Fatalf("round %d: %d tasks accepted, %d ran", round, accepted.Load(), ran.Load())
		}
	}
}
