package shard

import (
	"runtime"
	"time"
)

// run is the shard's goroutine: lock the thread (unless Unlocked), pin it
// (if Pin), then loop until stopped and drained. The thread stays locked
// when run returns, so the Go runtime terminates it instead of reusing a
// pinned thread.
func (s *Shard) run(started chan<- error) {
	if !s.unlocked {
		runtime.LockOSThread()
	}
	if s.pin {
		if err := Pin(s.cpu); err != nil {
			close(s.exited)
			started <- err
			return
		}
	}
	s.owner.claim()
	defer close(s.exited)
	started <- nil

	idle := time.NewTimer(time.Hour)
	idle.Stop()
	sealed := s.sealed
	stopping := false
	for {
		ran := s.runTasks()
		inFlight := 0
		if s.poller != nil {
			inFlight = s.poller.Poll()
		}
		next, hasNext := s.timers.fire(time.Now())
		if stopping && ran == 0 && len(s.inbox) == 0 && inFlight == 0 {
			return
		}
		if ran > 0 {
			continue
		}
		if inFlight > 0 && !hasNext && s.sleeper != nil && !stopping && s.sleepInEngine() {
			// Operations were in flight and nothing else was due: the
			// loop slept in the IO engine until one completed or a task
			// arrived.
			continue
		}
		wait, hasWait := time.Duration(0), false
		if hasNext {
			wait, hasWait = max(time.Until(next), 0), true
		}
		if inFlight > 0 && (!hasWait || wait > pollIdleWait) {
			wait, hasWait = pollIdleWait, true
		}
		if hasWait {
			idle.Reset(wait)
		}
		select {
		case task := <-s.inbox:
			s.taken++
			task()
		case <-s.wake:
		case <-idle.C:
		case <-sealed:
			stopping, sealed = true, nil
		}
		if hasWait {
			idle.Stop()
		}
	}
}

// runTasks runs up to eventInterval queued tasks without blocking and
// returns how many ran.
func (s *Shard) runTasks() int {
	for ran := 0; ran < s.eventInterval; ran++ {
		select {
		case task := <-s.inbox:
			s.taken++
			task()
		default:
			return ran
		}
	}
	return s.eventInterval
}

// sleepInEngine sleeps in the Sleeper unless a task was announced or the
// loop nudged since the loop last looked, and reports whether it slept. It
// announces the sleep first, so a sender that comes later sees it and
// wakes the engine (wakeSleeper). When it does not sleep, the loop waits
// on its inbox as usual (a task announced but not queued yet is on its
// way).
func (s *Shard) sleepInEngine() bool {
	s.sleeping.Store(true)
	nudges := s.nudges.Load()
	if s.posted.Load() != s.taken || nudges != s.seenNudges {
		s.seenNudges = nudges
		s.sleeping.Store(false)
		return false
	}
	s.sleeper.Sleep()
	s.sleeping.Store(false)
	return true
}
