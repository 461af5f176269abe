package shard

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Limits of a shard's event loop.
const (
	// InboxCapacityDefault is how many submitted tasks a shard queues by
	// default before Submit reports ErrInboxFull.
	InboxCapacityDefault = 4096
	// InboxCapacityMax bounds the configurable inbox.
	InboxCapacityMax = 1 << 20
	// EventIntervalDefault is how many inbox tasks run between two polls
	// of the IO engine (Iggy's event interval).
	EventIntervalDefault = 128
	// EventIntervalMax bounds the configurable event interval.
	EventIntervalMax = 1 << 16
	// pollIdleWait is how long an otherwise idle loop waits before polling
	// the IO engine again while operations are in flight.
	pollIdleWait = 50 * time.Microsecond
)

// Errors of the shard runtime.
var (
	// ErrInboxFull is returned by Submit when the inbox is at capacity:
	// the caller must shed load or retry, the task was not queued.
	ErrInboxFull = errors.New("shard: inbox full")
	// ErrStopped is returned once the shard is stopping or stopped.
	ErrStopped = errors.New("shard: stopped")
	// ErrConfig is wrapped by configuration errors from New.
	ErrConfig = errors.New("shard: invalid shard configuration")
)

// Poller is the completion side of a shard's IO engine (runtime/uring or
// the sync engine). The loop calls Poll every EventInterval tasks and
// whenever it is otherwise idle.
type Poller interface {
	// Poll reaps finished operations without blocking, runs their
	// completion callbacks on the shard, and returns how many operations
	// are still in flight. While that is positive the loop keeps polling
	// (at least every pollIdleWait) instead of sleeping.
	Poll() int
}

// Sleeper is a Poller the loop can sleep in while operations are in
// flight and no timer is pending (a shard's own io_uring): Sleep blocks
// until at least one operation completes or Wake is called, and Wake may
// be called from any goroutine, before or during a Sleep (a Wake that
// finds no Sleep makes the next one return at once). Without a Sleeper the
// loop polls every pollIdleWait while operations are in flight.
type Sleeper interface {
	Poller
	Sleep()
	Wake()
}

// PollerFunc adapts a function to Poller, e.g. for a runtime/uring ring:
//
//	shard.PollerFunc(func() int { ring.Reap(); return ring.InFlight() })
type PollerFunc func() int

// Poll calls f.
func (f PollerFunc) Poll() int { return f() }

// Config describes one shard.
type Config struct {
	// ID is the shard's index (0 is the metadata writer and listener).
	ID int
	// CPU is the CPU the shard's thread is pinned to when Pin is set.
	CPU int
	// Pin pins the thread with sched_setaffinity (`pin_cores`).
	Pin bool
	// Unlocked runs the loop as an ordinary goroutine instead of one
	// locked to its own OS thread; only allowed without Pin. Waking a
	// goroutine locked to a sleeping thread costs a thread hand-off in
	// the Go scheduler: on the 2-vCPU development VM a Call round trip
	// measured 40-50 us locked against about 1.3 us unlocked
	// (BenchmarkCall), so unpinned deployments and tests may prefer it.
	Unlocked bool
	// InboxCapacity bounds queued tasks; 0 means InboxCapacityDefault.
	InboxCapacity int
	// EventInterval is tasks between IO polls; 0 means
	// EventIntervalDefault.
	EventInterval int
	// Poller is the IO engine to poll, or nil.
	Poller Poller
}

// Shard is one goroutine locked to its own OS thread (pinned when
// configured; see Config.Unlocked for the unlocked variant) running an event loop over a bounded inbox of tasks, its
// timers and its IO engine's completions. Tasks run one at a time, in
// submission order, on that thread; state touched only by tasks of one
// shard needs no locks.
type Shard struct {
	id            int
	cpu           int
	pin           bool
	unlocked      bool
	eventInterval int
	poller        Poller
	inbox         chan func()

	// sendMu makes "check stopped, then send" atomic against Stop: senders
	// hold it shared around the channel send, Stop exclusively to set
	// stopped. After that no task can enter the inbox, so the loop can
	// drain it and exit without dropping an accepted task.
	sendMu  sync.RWMutex
	stopped bool // guarded by sendMu

	// lifecycleMu guards startCalled, which Start and Stop use to agree
	// on who closes exited for a shard that never ran.
	lifecycleMu sync.Mutex
	startCalled bool
	stopOnce    sync.Once
	// quit is closed when Stop begins; it releases Calls blocked on a
	// full inbox.
	quit chan struct{}
	// sealed is closed once stopped is set: the loop drains and exits.
	sealed chan struct{}
	// exited is closed when the loop has returned.
	exited chan struct{}
	// wake nudges an idle loop (new timer); capacity 1.
	wake chan struct{}

	timers timerSet
	owner  ownerCheck

	// sleeper is poller when it is a Sleeper. The loop sleeps in it only
	// after announcing so in sleeping and finding every announced task
	// taken: senders announce a task in posted before queueing it and
	// wake a sleeping loop after (the same protocol as runtime/iofs's
	// submitter), so a task never waits in the inbox of a sleeping loop.
	sleeper  Sleeper
	posted   atomic.Uint64
	taken    uint64 // loop-owned
	sleeping atomic.Bool
	// nudges counts wakeLoop calls (timer changes, Stop); seenNudges is
	// the count the loop last acted on.
	nudges     atomic.Uint64
	seenNudges uint64 // loop-owned
}

// New checks a configuration and returns a shard that is not yet running.
func New(config Config) (*Shard, error) {
	capacity := config.InboxCapacity
	if capacity == 0 {
		capacity = InboxCapacityDefault
	}
	if capacity < 1 || capacity > InboxCapacityMax {
		return nil, fmt.Errorf("%w: inbox capacity %d is outside 1..%d", ErrConfig, capacity, InboxCapacityMax)
	}
	interval := config.EventInterval
	if interval == 0 {
		interval = EventIntervalDefault
	}
	if interval < 1 || interval > EventIntervalMax {
		return nil, fmt.Errorf("%w: event interval %d is outside 1..%d", ErrConfig, interval, EventIntervalMax)
	}
	if config.ID < 0 || config.ID >= ShardCountMax {
		return nil, fmt.Errorf("%w: shard ID %d is outside 0..%d", ErrConfig, config.ID, ShardCountMax-1)
	}
	if config.Pin && config.Unlocked {
		return nil, fmt.Errorf("%w: a pinned shard must lock its thread (Pin and Unlocked both set)", ErrConfig)
	}
	if config.Pin && (config.CPU < 0 || config.CPU > CPUNumberMax) {
		return nil, fmt.Errorf("%w: CPU %d is outside 0..%d", ErrConfig, config.CPU, CPUNumberMax)
	}
	sleeper, _ := config.Poller.(Sleeper)
	return &Shard{
		sleeper:       sleeper,
		id:            config.ID,
		cpu:           config.CPU,
		pin:           config.Pin,
		unlocked:      config.Unlocked,
		eventInterval: interval,
		poller:        config.Poller,
		inbox:         make(chan func(), capacity),
		quit:          make(chan struct{}),
		sealed:        make(chan struct{}),
		exited:        make(chan struct{}),
		wake:          make(chan struct{}, 1),
	}, nil
}

// ID returns the shard's index.
func (s *Shard) ID() int { return s.id }

// CPU returns the CPU the shard is (or would be) pinned to.
func (s *Shard) CPU() int { return s.cpu }

// Pinned reports whether the shard pins its thread.
func (s *Shard) Pinned() bool { return s.pin }

// Done is closed when the shard's loop has exited.
func (s *Shard) Done() <-chan struct{} { return s.exited }

// Start launches the loop goroutine, locks it to its OS thread, pins the
// thread when configured, and returns once that is done. A pinning failure
// is returned (wrapping ErrAffinity) and the shard does not run. Start may
// be called once; later calls return ErrStopped.
func (s *Shard) Start() error {
	s.lifecycleMu.Lock()
	if s.startCalled {
		s.lifecycleMu.Unlock()
		return ErrStopped
	}
	s.startCalled = true
	s.lifecycleMu.Unlock()
	started := make(chan error, 1)
	go s.run(started)
	if err := <-started; err != nil {
		s.Stop()
		return err
	}
	return nil
}

// Submit queues a task to run on the shard without waiting for it. It
// returns ErrInboxFull when the inbox is at capacity and ErrStopped once
// the shard is stopping; in both cases the task will not run. A task
// accepted before Stop always runs. A nil task is a caller bug and panics.
func (s *Shard) Submit(task func()) error {
	if task == nil {
		panic("shard: Submit of a nil task")
	}
	s.sendMu.RLock()
	defer s.sendMu.RUnlock()
	if s.stopped {
		return ErrStopped
	}
	s.posted.Add(1)
	select {
	case s.inbox <- task:
		s.wakeSleeper()
		return nil
	default:
		s.posted.Add(^uint64(0)) // not queued after all
		return ErrInboxFull
	}
}

// Call runs a task on the shard and waits for it to finish, waiting for
// inbox space if needed. It returns ErrStopped, without running the task,
// if the shard stops first. A task running on the shard must not Call its
// own shard (that deadlocks; the invariants build panics instead).
func (s *Shard) Call(task func()) error {
	if task == nil {
		panic("shard: Call of a nil task")
	}
	s.owner.assertNotOwner("Call from the shard's own goroutine")
	c := callPool.Get().(*pendingCall)
	c.task = task
	defer c.release()
	wrapped, done := c.runFn, c.done
	s.sendMu.RLock()
	if s.stopped {
		s.sendMu.RUnlock()
		return ErrStopped
	}
	s.posted.Add(1)
	select {
	case s.inbox <- wrapped:
	case <-s.quit:
		s.posted.Add(^uint64(0)) // not queued after all
		s.sendMu.RUnlock()
		return ErrStopped
	}
	s.sendMu.RUnlock()
	s.wakeSleeper()
	<-done
	return nil
}

// Stop stops accepting tasks, lets the loop run every task already
// accepted and wait for in-flight IO, and returns when the loop has
// exited. It is idempotent and safe from any goroutine except the shard's
// own.
func (s *Shard) Stop() {
	s.owner.assertNotOwner("Stop from the shard's own goroutine")
	s.stopOnce.Do(func() {
		close(s.quit)
		s.sendMu.Lock()
		s.stopped = true
		s.sendMu.Unlock()
		close(s.sealed)
		s.wakeLoop()
		s.lifecycleMu.Lock()
		if !s.startCalled { // never started: nobody else will close exited
			s.startCalled = true
			close(s.exited)
		}
		s.lifecycleMu.Unlock()
	})
	<-s.exited
}

// pendingCall carries one Call's task to the loop and its completion back;
// it is reused (callPool) so that a Call allocates nothing of its own.
type pendingCall struct {
	task  func()
	done  chan struct{} // capacity 1: the loop never blocks on it
	runFn func()        // c.run, bound once
}

// callPool holds idle pendingCalls.
var callPool = sync.Pool{New: func() any {
	c := &pendingCall{done: make(chan struct{}, 1)}
	c.runFn = c.run
	return c
}}

// run is the task the loop runs for a Call.
func (c *pendingCall) run() {
	c.task()
	c.done <- struct{}{}
}

// release returns c to the pool once its Call has returned: either its
// task ran and its done token was taken, or it never entered the inbox.
func (c *pendingCall) release() {
	c.task = nil
	callPool.Put(c)
}

// QueueDepth is the number of tasks waiting in the inbox (a metric; the
// value may be stale by the time the caller reads it).
func (s *Shard) QueueDepth() int { return len(s.inbox) }

// AssertOwner panics, in the invariants build, unless called from the
// shard's own loop goroutine. State owned by a shard (its partitions)
// calls it on every access; release builds compile it to nothing.
func (s *Shard) AssertOwner() { s.owner.assertOwner() }

// wakeLoop nudges the loop out of an idle wait without blocking.
func (s *Shard) wakeLoop() {
	s.nudges.Add(1)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	s.wakeSleeper()
}

// wakeSleeper wakes a loop asleep in its Sleeper. Callers have announced
// their task (posted) or state change before: either the loop sees that
// and does not sleep, or it announced its sleep first and is woken here.
func (s *Shard) wakeSleeper() {
	if s.sleeper != nil && s.sleeping.Load() && s.sleeping.Swap(false) {
		s.sleeper.Wake()
	}
}
