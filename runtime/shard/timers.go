package shard

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Timer limits.
const (
	// timerCountMax bounds the timers of one shard.
	timerCountMax = 1024
	// TimerIntervalMin is the shortest accepted timer interval.
	TimerIntervalMin = 10 * time.Microsecond
)

// ErrTimer is wrapped by errors registering a timer.
var ErrTimer = errors.New("shard: invalid timer")

// TimerID names a registered timer for Cancel.
type TimerID uint64

// timer is one periodic callback.
type timer struct {
	id       TimerID
	interval time.Duration
	deadline time.Time
	callback func()
}

// timerSet holds a shard's timers. Registration and cancellation may come
// from any goroutine; only the loop fires them.
type timerSet struct {
	mu     sync.Mutex
	timers []*timer // guarded by mu; at most timerCountMax
	nextID TimerID  // guarded by mu
	// due is the loop's scratch list of timers to fire; loop-owned.
	due []*timer
}

// Every registers callback to run on the shard every interval, first one
// interval from now. Ticks missed while the shard was busy are skipped, not
// queued. It is safe from any goroutine, the shard's own included.
func (s *Shard) Every(interval time.Duration, callback func()) (TimerID, error) {
	if callback == nil {
		return 0, fmt.Errorf("%w: nil callback", ErrTimer)
	}
	if interval < TimerIntervalMin {
		return 0, fmt.Errorf("%w: interval %v is shorter than %v", ErrTimer, interval, TimerIntervalMin)
	}
	s.sendMu.RLock()
	stopped := s.stopped
	s.sendMu.RUnlock()
	if stopped {
		return 0, ErrStopped
	}
	set := &s.timers
	set.mu.Lock()
	if len(set.timers) >= timerCountMax {
		set.mu.Unlock()
		return 0, fmt.Errorf("%w: the shard already has %d timers", ErrTimer, timerCountMax)
	}
	set.nextID++
	id := set.nextID
	set.timers = append(set.timers, &timer{id: id, interval: interval, deadline: time.Now().Add(interval), callback: callback})
	set.mu.Unlock()
	s.wakeLoop()
	return id, nil
}

// Cancel removes a timer and reports whether it was registered. Called on
// the shard itself it guarantees the callback never runs again; from
// another goroutine a firing already under way may still complete.
func (s *Shard) Cancel(id TimerID) bool {
	set := &s.timers
	set.mu.Lock()
	defer set.mu.Unlock()
	for index, registered := range set.timers {
		if registered.id == id {
			set.timers = append(set.timers[:index], set.timers[index+1:]...)
			return true
		}
	}
	return false
}

// fire runs every timer due at now and returns the earliest remaining
// deadline. Only the loop calls it; callbacks run without the lock held.
func (set *timerSet) fire(now time.Time) (next time.Time, hasNext bool) {
	set.mu.Lock()
	set.due = set.due[:0]
	for _, registered := range set.timers {
		if !registered.deadline.After(now) {
			set.due = append(set.due, registered)
			registered.deadline = registered.deadline.Add(registered.interval)
			if !registered.deadline.After(now) {
				registered.deadline = now.Add(registered.interval)
			}
		}
	}
	set.mu.Unlock()
	for index, registered := range set.due {
		if set.registered(registered) {
			registered.callback()
		}
		set.due[index] = nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	for _, registered := range set.timers {
		if !hasNext || registered.deadline.Before(next) {
			next, hasNext = registered.deadline, true
		}
	}
	return next, hasNext
}

// registered reports whether a timer is still registered (a callback
// fired earlier in the same round may have cancelled it).
func (set *timerSet) registered(candidate *timer) bool {
	set.mu.Lock()
	defer set.mu.Unlock()
	for _, registered := range set.timers {
		if registered == candidate {
			return true
		}
	}
	return false
}
