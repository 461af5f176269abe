package server

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratabroker/strata/runtime/pool"
)

// errBudgetTimeout is returned when a request's buffer could not be lent
// within its read deadline ([message_bus] in_flight_bytes_max spent).
var errBudgetTimeout = errors.New("request budget spent until the read deadline")

// errConnClosing is returned when a connection closes while its reader
// waits for the request budget.
var errConnClosing = errors.New("connection closing")

// requestBudget bounds the bytes of request frames that do not fit their
// connection's own buffer and are held at once, all connections together
// ([message_bus] in_flight_bytes_max). Such a frame's buffer is lent by the
// memory pool once its header is read and charged at its capacity until
// the request is answered; a reader that does not fit waits, first come
// first served, and gives up at its read deadline. Memory a hostile or slow
// client can pin with large frames is therefore at most the budget,
// whatever the number of connections.
type requestBudget struct {
	// limitBytes is the budget; a frame of the largest size always fits
	// (config.Validate).
	limitBytes int64
	// pool lends the buffers; nil when the memory pool is disabled.
	pool *pool.Pool

	mu sync.Mutex
	// usedBytes is what lent buffers are charged, guarded by mu.
	// Invariant: usedBytes <= limitBytes.
	usedBytes int64
	// waiting is the FIFO of readers that did not fit, guarded by mu.
	waiting []*budgetWaiter

	// waits counts readers that had to wait.
	waits atomic.Uint64
	// plainReleasedBytes counts bytes of plain (not pooled) buffers
	// dropped since the memory releaser last took them.
	plainReleasedBytes atomic.Int64
}

// budgetWaiter is one reader waiting for bytes of the budget; granted is
// closed when they are charged to it.
type budgetWaiter struct {
	bytes   int64
	granted chan struct{}
}

// budgetBuffer is a buffer lent under the budget.
type budgetBuffer struct {
	data    []byte
	lent    *pool.Buffer
	charged int64
}

func newRequestBudget(limitBytes int64, p *pool.Pool) *requestBudget {
	return &requestBudget{limitBytes: limitBytes, pool: p}
}

// chargeFor is what a buffer of size bytes costs: its pool class, or the
// size itself for plain memory.
func (b *requestBudget) chargeFor(size int) int64 {
	if b.pool != nil {
		if index := pool.BucketFor(size); index >= 0 {
			return int64(pool.BucketSizes()[index])
		}
	}
	return int64(size)
}

// lend returns a buffer of at least size bytes once its charge fits in
// the budget, waiting until deadline or until done is closed.
func (b *requestBudget) lend(size int, deadline time.Time, done <-chan struct{}) (budgetBuffer, error) {
	charge := b.chargeFor(size)
	if err := b.acquire(charge, deadline, done); err != nil {
		return budgetBuffer{}, err
	}
	if b.pool == nil {
		return budgetBuffer{data: make([]byte, size), charged: charge}, nil
	}
	lent := b.pool.Get(size)
	return budgetBuffer{data: lent.Bytes(), lent: lent, charged: charge}, nil
}

// giveBack returns a lent buffer and its charge.
func (b *requestBudget) giveBack(buffer *budgetBuffer) {
	if buffer.charged == 0 {
		return
	}
	if buffer.lent != nil {
		b.pool.Put(buffer.lent)
	} else {
		b.plainReleasedBytes.Add(buffer.charged)
	}
	b.release(buffer.charged)
	*buffer = budgetBuffer{}
}

// acquire charges bytes, waiting in FIFO order while they do not fit.
func (b *requestBudget) acquire(bytes int64, deadline time.Time, done <-chan struct{}) error {
	b.mu.Lock()
	if len(b.waiting) == 0 && b.usedBytes+bytes <= b.limitBytes {
		b.usedBytes += bytes
		b.mu.Unlock()
		return nil
	}
	waiter := &budgetWaiter{bytes: bytes, granted: make(chan struct{})}
	b.waiting = append(b.waiting, waiter)
	b.mu.Unlock()
	b.waits.Add(1)

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var err error
	select {
	case <-waiter.granted:
		return nil
	case <-timer.C:
		err = errBudgetTimeout
	case <-done:
		err = errConnClosing
	}
	b.mu.Lock()
	for i, w := range b.waiting {
		if w == waiter {
			b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
			// The head leaving may let the next readers in.
			b.grantLocked()
			b.mu.Unlock()
			return err
		}
	}
	b.mu.Unlock()
	// Granted while giving up: hand the bytes back.
	b.release(bytes)
	return err
}

// release gives bytes back and lets waiting readers in.
func (b *requestBudget) release(bytes int64) {
	b.mu.Lock()
	b.usedBytes -= bytes
	if b.usedBytes < 0 {
		panic("server: request budget released more than it lent")
	}
	b.grantLocked()
	b.mu.Unlock()
}

// grantLocked charges waiting readers in order while the first one fits.
func (b *requestBudget) grantLocked() {
	for len(b.waiting) > 0 && b.usedBytes+b.waiting[0].bytes <= b.limitBytes {
		head := b.waiting[0]
		b.waiting[0] = nil
		b.waiting = b.waiting[1:]
		b.usedBytes += head.bytes
		close(head.granted)
	}
}

// waitingCount returns how many readers wait.
func (b *requestBudget) waitingCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiting)
}

// inUseBytes returns the bytes charged now.
func (b *requestBudget) inUseBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.usedBytes
}
