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

// request is one operation handed from a caller to the submitter loop. It
// comes from a pool, so a call allocates nothing; its callback is bound
// once when the request is made.
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
	done     chan struct{}
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

// engine owns one ring and its submitter goroutine.
//
// Lock order: mu only; it guards closed against concurrent sends and is
// never held while waiting for a completion.
type engine struct {
	requests chan *request
	pool     sync.Pool

	mu     sync.RWMutex
	closed bool // Invariant: once true, requests is closed

	// Wake-up protocol between callers and a loop asleep in
	// io_uring_enter (see wake and sleep).
	posted   atomic.Uint64 // requests announced by callers
	sleeping atomic.Bool
	wakeFD   int

	stopped chan struct{}
	loopErr error // written by the loop before stopped closes

	// Owned by the loop goroutine.
	ring      *uring.Ring
	interval  int
	taken     uint64 // requests received; Invariant: taken <= posted
	wakeBuf   [8]byte
	wakeArmed bool
	stopping  bool
}

// engineEntriesMin is the smallest ring the engine runs: the wake-up read
// holds one entry permanently and callers need at least one more, or a
// caller's operation would wait for room forever.
const engineEntriesMin = 2

// newEngine sets up a ring and starts its loop.
func newEngine(cfg uring.Config) (*engine, error) {
	ring, err := uring.New(cfg)
	if err != nil {
		return nil, err
	}
	if ring.Capacity() < engineEntriesMin {
		return nil, errors.Join(fmt.Errorf("ring of %d entries, the io engine needs %d: %w", ring.Capacity(), engineEntriesMin, uring.ErrConfig), ring.Close())
	}
	wakeFD, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("eventfd: %w", err), ring.Close())
	}
	e := &engine{
		requests: make(chan *request, requestQueueMax),
		wakeFD:   wakeFD,
		stopped:  make(chan struct{}),
		ring:     ring,
		interval: ring.Config().EventInterval,
	}
	e.pool.New = newRequest
	if err := e.armWake(); err != nil {
		return nil, errors.Join(err, ring.Close(), unix.Close(wakeFD))
	}
	go e.loop()
	return e, nil
}

// do hands req to the loop and waits for its completion. It returns the
// CQE result, or 0 and the errno of a failed operation.
func (e *engine) do(req *request) (int32, error) {
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
	if req.err != nil {
		return 0, req.err
	}
	if req.res < 0 {
		return 0, syscall.Errno(-req.res)
	}
	return req.res, nil
}

func (e *engine) get() *request { return e.pool.Get().(*request) }

// put clears the references a request holds and returns it to the pool.
func (e *engine) put(r *request) {
	r.buf, r.iovs, r.path, r.err, r.res = nil, nil, "", nil, 0
	e.pool.Put(r)
}

// wake rouses a loop asleep in io_uring_enter by completing its pending
// eventfd read. The protocol, with sequentially consistent atomics: a
// caller increments posted before sending and swaps sleeping after; the
// loop stores sleeping before it compares posted with taken. Either the
// loop sees the increment (and does not sleep) or its store precedes the
// caller's swap (and the caller writes the eventfd).
func (e *engine) wake() {
	if !e.sleeping.Load() || !e.sleeping.Swap(false) {
		return
	}
	var one = [8]byte{1}
	for {
		_, err := unix.Write(e.wakeFD, one[:])
		if err != unix.EINTR {
			// EAGAIN means the counter is saturated: the loop is being
			// woken anyway. Other errors cannot happen on our eventfd.
			return
		}
	}
}

// armWake keeps a read of the eventfd in flight so a caller can interrupt
// the loop's wait.
func (e *engine) armWake() error {
	if err := e.ring.PrepareRead(e.wakeFD, e.wakeBuf[:], -1, 0, e.onWake); err != nil {
		return fmt.Errorf("arm wake-up read: %w", err)
	}
	e.wakeArmed = true
	return nil
}

func (e *engine) onWake(uring.Completion) {
	e.wakeArmed = false
	if !e.stopping {
		if err := e.armWake(); err != nil {
			panic(fmt.Sprintf("iofs: %v", err)) // only on a closed ring: a bug of ours
		}
	}
}

// busy is the number of caller operations in flight (the wake-up read
// excluded).
func (e *engine) busy() int {
	n := e.ring.InFlight()
	if e.wakeArmed {
		n--
	}
	return n
}
