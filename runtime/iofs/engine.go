package iofs

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/runtime/uring"
)

// requestQueueMax bounds the channel between callers and the submitter
// loop; callers beyond it block in the send (back-pressure).
const requestQueueMax = 1024

// Sentinel errors of the package.
var (
	// ErrClosed: the FS (or the File) has been closed.
	ErrClosed = errors.New("iofs: closed")
	// ErrUnknownEngine: Select got an engine name it does not know.
	ErrUnknownEngine = errors.New("iofs: unknown io engine")
)

// opKind names what a request asks the ring to do.
type opKind uint8

const (
	kindRead opKind = iota
	kindWrite
	kindWritev
	kindDataSync
	kindFallocate
	kindOpen
	kindClose
)

// engine runs file operations on a ring for an FS. Two implement it:
// loopEngine (New: a submitter goroutine, safe for concurrent callers) and
// directEngine (NewDirect: the caller's goroutine drives the ring, one
// goroutine at a time).
type engine interface {
	// get returns a cleared request for one operation.
	get() *request
	// do runs req to completion and returns the CQE result, or 0 and the
	// errno of a failed operation (ErrClosed once the engine is closed).
	do(req *request) (int32, error)
	// put returns req, dropping the references it holds.
	put(req *request)
	// poll reaps finished operations without blocking and returns how
	// many are still in flight (shard.Poller).
	poll() int
	// close finishes what is in flight and tears the ring down.
	close() error
}

// request is one file operation for a ring. The loop engine hands it to
// the submitter loop and takes it from a pool, so a call allocates
// nothing; the direct engine owns a single one. Its callback is bound once
// when the request is made.
type request struct {
	kind      opKind
	fd        int
	buf       []byte
	iovs      []unix.Iovec
	off       int64
	length    int64
	mode      uint32
	openFlags int
	path      string

	callback uring.Callback
	done     chan struct{} // loop engine: signalled on completion
	finished bool          // direct engine: set on completion
	res      int32
	err      error // set when the operation could not be queued
}

func newRequest() any {
	r := &request{done: make(chan struct{}, 1)}
	r.callback = r.complete
	return r
}

// complete runs on the submitter loop when the operation's CQE arrives.
func (r *request) complete(c uring.Completion) {
	r.res = c.Res
	r.done <- struct{}{}
}

// fail finishes a request that never reached the ring.
func (r *request) fail(err error) {
	r.err = err
	r.done <- struct{}{}
}

// clear drops the references a finished request holds.
func (r *request) clear() {
	r.buf, r.iovs, r.path, r.err, r.res, r.finished = nil, nil, "", nil, 0, false
}

// result turns a finished request into do's results.
func (r *request) result() (int32, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.res < 0 {
		return 0, syscall.Errno(-r.res)
	}
	return r.res, nil
}

// prepareRequest queues req's operation on ring with req's callback; both
// engines use it. An error means nothing was queued.
func prepareRequest(ring *uring.Ring, req *request) error {
	switch req.kind {
	case kindRead:
		return ring.PrepareRead(req.fd, req.buf, req.off, 0, req.callback)
	case kindWrite:
		return ring.PrepareWrite(req.fd, req.buf, req.off, 0, req.callback)
	case kindWritev:
		return ring.PrepareWritev(req.fd, req.iovs, req.off, 0, req.callback)
	case kindDataSync:
		return ring.PrepareFsync(req.fd, true, 0, req.callback)
	case kindFallocate:
		return ring.PrepareFallocate(req.fd, req.mode, req.off, req.length, 0, req.callback)
	case kindOpen:
		return ring.PrepareOpenat(unix.AT_FDCWD, req.path, req.openFlags, req.mode, 0, req.callback)
	case kindClose:
		return ring.PrepareClose(req.fd, 0, req.callback)
	default:
		return fmt.Errorf("request kind %d: %w", req.kind, uring.ErrConfig)
	}
}

// mustEnter stops on an io_uring_enter failure of either engine. The
// binding already retries EINTR, EAGAIN and EBUSY; anything else on a ring
// we own means a bug, and with operations in flight whose completions (and
// pinned buffers) would never be released there is no safe way on.
func mustEnter(ring *uring.Ring, err error) {
	if err != nil {
		panic(fmt.Sprintf("iofs: io_uring_enter failed with %d operations in flight: %v", ring.InFlight(), err))
	}
}

// loopEngine owns one ring and its submitter goroutine.
//
// Lock order: mu only; it guards closed against concurrent sends and is
// never held while waiting for a completion.
type loopEngine struct {
	requests chan *request
	pool     sync.Pool

	mu     sync.RWMutex
	closed bool // Invariant: once true, requests is closed

	// Wake-up protocol between callers and a loop asleep in
	// io_uring_enter (see wake and sleep).
	posted   atomic.Uint64 // requests announced by callers
	sleeping atomic.Bool

	stopped chan struct{}
	loopErr error // written by the loop before stopped closes

	// Owned by the loop goroutine (waker's fd is read by callers too).
	ring     *uring.Ring
	interval int
	taken    uint64 // requests received; Invariant: taken <= posted
	waker    wakeRead
	stopping bool
}

// engineEntriesMin is the smallest ring the engine runs: the wake-up read
// holds one entry permanently and callers need at least one more, or a
// caller's operation would wait for room forever.
const engineEntriesMin = 2

// newLoopEngine sets up a ring and starts its loop.
func newLoopEngine(cfg uring.Config) (*loopEngine, error) {
	ring, err := uring.New(cfg)
	if err != nil {
		return nil, err
	}
	if ring.Capacity() < engineEntriesMin {
		return nil, errors.Join(fmt.Errorf("ring of %d entries, the io engine needs %d: %w", ring.Capacity(), engineEntriesMin, uring.ErrConfig), ring.Close())
	}
	e := &loopEngine{
		requests: make(chan *request, requestQueueMax),
		stopped:  make(chan struct{}),
		ring:     ring,
		interval: ring.Config().EventInterval,
	}
	if err := e.waker.init(e.onWake); err != nil {
		return nil, errors.Join(err, ring.Close())
	}
	e.pool.New = newRequest
	if err := e.waker.arm(ring); err != nil {
		return nil, errors.Join(err, ring.Close(), unix.Close(e.waker.fd))
	}
	go e.loop()
	return e, nil
}

// do hands req to the loop and waits for its completion. It returns the
// CQE result, or 0 and the errno of a failed operation.
func (e *loopEngine) do(req *request) (int32, error) {
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return 0, ErrClosed
	}
	e.posted.Add(1)
	e.requests <- req
	e.mu.RUnlock()
	e.wake()
	<-req.done
	return req.result()
}

func (e *loopEngine) get() *request { return e.pool.Get().(*request) }

// put clears the references a request holds and returns it to the pool.
func (e *loopEngine) put(r *request) {
	r.clear()
	e.pool.Put(r)
}

// poll reports 0: the loop goroutine, not the caller, reaps this ring.
func (e *loopEngine) poll() int { return 0 }

// wake rouses a loop asleep in io_uring_enter by completing its pending
// eventfd read. The protocol, with sequentially consistent atomics: a
// caller increments posted before sending and swaps sleeping after; the
// loop stores sleeping before it compares posted with taken. Either the
// loop sees the increment (and does not sleep) or its store precedes the
// caller's swap (and the caller writes the eventfd).
func (e *loopEngine) wake() {
	if !e.sleeping.Load() || !e.sleeping.Swap(false) {
		return
	}
	// Errors cannot happen on our eventfd (a saturated counter would
	// block, and means the loop is being woken anyway).
	_ = e.waker.signal()
}

// onWake keeps a read of the eventfd in flight, so a caller can interrupt
// the loop's wait, until shutdown retires it.
func (e *loopEngine) onWake(uring.Completion) {
	e.waker.complete()
	if !e.stopping {
		if err := e.waker.arm(e.ring); err != nil {
			panic(fmt.Sprintf("iofs: %v", err)) // only on a closed ring: a bug of ours
		}
	}
}

// busy is the number of caller operations in flight (the wake-up read
// excluded).
func (e *loopEngine) busy() int { return e.waker.others(e.ring) }
