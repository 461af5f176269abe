package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Ring is one io_uring instance: its shared queues, the table of
// operations in flight and the callbacks waiting for them. One goroutine
// owns a Ring and makes every call on it; callbacks run on that goroutine
// inside Reap, Submit, SubmitAndWait, Prepare* (when they wait for room)
// and Close.
type Ring struct {
	fd     int
	config Config

	// Mapped regions. cqMem aliases sqMem under IORING_FEAT_SINGLE_MMAP.
	sqMem, cqMem, sqeMem []byte

	// Shared words, pointing into the mapped regions.
	sqHead *uint32 // written by the kernel
	sqTail *uint32 // written by us
	cqHead *uint32 // written by us
	cqTail *uint32 // written by the kernel
	sqMask uint32
	cqMask uint32

	sqes []sqe // the SQE array
	cqes []cqe // the CQE array

	// sqeTail is the next SQE slot to fill; slots in [published, sqeTail)
	// are filled but their tail is not yet stored.
	// Invariant: published <= sqeTail, sqeTail - *sqHead <= len(sqes).
	sqeTail   uint32
	published uint32

	pending pendingTable
	stats   Stats
	closed  bool
}

// Stats counts a ring's activity; read it with Ring.Stats.
type Stats struct {
	Submitted     uint64 // SQEs the kernel consumed
	Completed     uint64 // CQEs reaped
	Enters        uint64 // io_uring_enter calls
	FullWaits     uint64 // times a Prepare waited for room (back-pressure)
	Resubmissions uint64 // partial writes resubmitted by WritevFull
	InFlightMax   int    // most operations in flight at once
}

// New sets up a ring sized by cfg. It returns an error wrapping
// ErrUnavailable when the kernel refuses io_uring, and ErrConfig for a bad
// cfg.
func New(cfg Config) (*Ring, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	entries := cfg.roundedEntries()
	p := params{flags: setupCQSize, cqEntries: uint32(2 * entries)}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, setupError(errno)
	}
	r := &Ring{fd: int(fd), config: cfg}
	if err := r.mapRings(&p); err != nil {
		return nil, errors.Join(err, r.unmap(), unix.Close(r.fd))
	}
	if p.features&featureNoDrop == 0 {
		// Without NODROP an overflowing CQ loses completions; the table
		// bound below prevents overflow, but refuse such old kernels so
		// the guarantee never rests on one mechanism only.
		return nil, errors.Join(fmt.Errorf("kernel lacks IORING_FEAT_NODROP: %w", ErrUnavailable), r.unmap(), unix.Close(r.fd))
	}
	// At most one operation per SQ entry is in flight, and the CQ holds
	// twice that, so completions never overflow the CQ.
	r.pending.init(int(p.sqEntries))
	return r, nil
}

// setupError explains why io_uring_setup failed.
func setupError(errno unix.Errno) error {
	switch errno {
	case unix.ENOSYS:
		return fmt.Errorf("io_uring_setup: kernel has no io_uring (ENOSYS: older than 5.1 or built without it): %w", ErrUnavailable)
	case unix.EPERM, unix.EACCES:
		return fmt.Errorf("io_uring_setup: %v (refused by seccomp or sysctl kernel.io_uring_disabled=%s): %w: %w", errno, ioUringDisabledSysctl(), ErrUnavailable, errno)
	case unix.EINVAL:
		return fmt.Errorf("io_uring_setup: %v (kernel too old for the flags used): %w: %w", errno, ErrUnavailable, errno)
	default:
		return fmt.Errorf("io_uring_setup: %w: %w", ErrUnavailable, errno)
	}
}

// mapRings maps the SQ ring, the CQ ring and the SQE array and points the
// ring's fields into them.
func (r *Ring) mapRings(p *params) error {
	sqSize := int(p.sqOff.array) + int(p.sqEntries)*4
	cqSize := int(p.cqOff.cqes) + int(p.cqEntries)*int(unsafe.Sizeof(cqe{}))
	single := p.features&featureSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sqMem, err = mmapRegion(r.fd, offSQRing, sqSize); err != nil {
		return fmt.Errorf("mmap SQ ring: %w", err)
	}
	if single {
		r.cqMem = r.sqMem
	} else if r.cqMem, err = mmapRegion(r.fd, offCQRing, cqSize); err != nil {
		return fmt.Errorf("mmap CQ ring: %w", err)
	}
	sqeSize := int(p.sqEntries) * int(unsafe.Sizeof(sqe{}))
	if r.sqeMem, err = mmapRegion(r.fd, offSQEs, sqeSize); err != nil {
		return fmt.Errorf("mmap SQEs: %w", err)
	}
	r.sqHead = word(r.sqMem, p.sqOff.head)
	r.sqTail = word(r.sqMem, p.sqOff.tail)
	r.sqMask = *word(r.sqMem, p.sqOff.ringMask)
	r.cqHead = word(r.cqMem, p.cqOff.head)
	r.cqTail = word(r.cqMem, p.cqOff.tail)
	r.cqMask = *word(r.cqMem, p.cqOff.ringMask)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&r.cqMem[p.cqOff.cqes])), p.cqEntries)
	// The identity index map: SQ slot i submits SQE i. Written before any
	// tail store, so the kernel sees it (see the package comment).
	array := unsafe.Slice((*uint32)(unsafe.Pointer(&r.sqMem[p.sqOff.array])), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.sqeTail = atomic.LoadUint32(r.sqTail)
	r.published = r.sqeTail
	return nil
}

func mmapRegion(fd int, offset int64, size int) ([]byte, error) {
	return unix.Mmap(fd, offset, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
}

// word points at the uint32 at byte offset off of region.
func word(region []byte, off uint32) *uint32 {
	return (*uint32)(unsafe.Pointer(&region[off]))
}

// unmap releases whatever regions are mapped.
func (r *Ring) unmap() error {
	var errs []error
	if r.sqeMem != nil {
		errs = append(errs, unix.Munmap(r.sqeMem))
	}
	if r.cqMem != nil && (r.sqMem == nil || &r.cqMem[0] != &r.sqMem[0]) {
		errs = append(errs, unix.Munmap(r.cqMem))
	}
	if r.sqMem != nil {
		errs = append(errs, unix.Munmap(r.sqMem))
	}
	r.sqeMem, r.cqMem, r.sqMem = nil, nil, nil
	r.sqes, r.cqes = nil, nil
	return errors.Join(errs...)
}

// Config returns the ring's configuration, defaults filled in.
func (r *Ring) Config() Config { return r.config }

// Capacity is the most operations the ring holds in flight.
func (r *Ring) Capacity() int { return r.pending.capacity() }

// InFlight is the number of operations prepared and not yet completed.
func (r *Ring) InFlight() int { return r.pending.used }

// Stats returns the ring's counters.
func (r *Ring) Stats() Stats { return r.stats }

// Close submits what is queued, waits for every operation in flight to
// complete (running their callbacks), then unmaps the queues and closes
// the ring. Waiting first guarantees the kernel is done with every buffer
// before the table releases it.
func (r *Ring) Close() error {
	if r.closed {
		return ErrClosed
	}
	err := r.Drain()
	r.closed = true
	return errors.Join(err, r.unmap(), unix.Close(r.fd))
}

// Drain submits what is queued and waits until nothing is in flight.
func (r *Ring) Drain() error {
	if _, err := r.Submit(); err != nil {
		return err
	}
	for r.pending.used > 0 {
		if err := r.SubmitAndWait(1); err != nil {
			return err
		}
	}
	return nil
}
