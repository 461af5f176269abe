// Package uring is Strata's io_uring binding, written from the kernel ABI
// over golang.org/x/sys/unix without cgo (DESIGN.md decision 10).
//
// A Ring is a submission queue (SQ) and a completion queue (CQ) shared
// with the kernel through three mmapped regions: the SQ ring (head, tail,
// mask and the index array), the CQ ring (head, tail, mask and the CQEs)
// and the array of 64-byte SQEs. One goroutine owns a Ring: it prepares
// SQEs (PrepareRead, PrepareWritev, ...), publishes them with one
// io_uring_enter (Submit, SubmitAndWait), and reaps completions (Reap),
// which runs each operation's Callback on the owning goroutine. A Ring is
// not safe for concurrent use; runtime/iofs puts one behind a submitter
// goroutine for concurrent callers.
//
// # Memory ordering
//
// The rings are single-producer single-consumer queues between this
// goroutine and the kernel, synchronised only through their head and tail
// words:
//
//   - SQ: we produce, the kernel consumes. We write whole SQEs with plain
//     stores, then store the SQ tail with atomic.StoreUint32. The kernel
//     reads the tail with smp_load_acquire, so our store must be a release:
//     every SQE store before it must be visible before the new tail is. Go's
//     atomic stores are sequentially consistent, which is stronger than
//     release (on amd64 an XCHG, on arm64 STLR), so the plain SQE stores
//     cannot be reordered after it. We read the SQ head (advanced by the
//     kernel with smp_store_release once it has consumed SQEs) with
//     atomic.LoadUint32, an acquire, before reusing those slots.
//   - CQ: the kernel produces, we consume. The kernel writes a CQE, then
//     publishes the CQ tail with smp_store_release. We load the tail with
//     atomic.LoadUint32 (acquire) before reading any CQE below it, so the
//     CQE contents are visible. After copying a CQE out we store the CQ
//     head with atomic.StoreUint32 (release), so the kernel, which loads
//     the head with acquire, never overwrites a CQE we are still reading.
//   - The SQ index array is filled once at setup with the identity map
//     (slot i names SQE i) before any tail store, so it needs no further
//     ordering.
//
// # Buffer lifetimes
//
// An SQE carries buffer addresses as plain integers, which the garbage
// collector does not see. Every Prepare method therefore stores the Go
// values the kernel will touch (the byte slice, the iovec array, whose
// Base pointers in turn keep the buffers alive, or the NUL-terminated
// path) in the operation's slot of the pending table, and clears the slot
// only after the operation's CQE has been reaped. Go's heap objects do not
// move, and anything stored in the table has escaped to the heap, so the
// addresses stay valid for exactly as long as the kernel may use them.
// Synchronous helpers that wait for their own completion also call
// runtime.KeepAlive on their arguments after the wait, which documents the
// rule at the call site.
//
// # Back-pressure
//
// The pending table holds at most Config.Entries operations and the CQ has
// twice as many slots, so the CQ never overflows. A Prepare call that finds
// the SQ or the pending table full submits what is queued and waits for
// completions (running their callbacks) until there is room: work is
// delayed, never dropped.
package uring
