// Package pool is Strata's memory pool (DESIGN.md decision 11): page-aligned
// byte buffers in 28 size classes from 4 KiB to 512 MiB, reused through
// per-bucket free lists, with a byte budget on what the pool owns and
// read-only sharing of frozen buffers by reference count.
//
// Size classes. Decision 11 and the architecture seed ask for 28 buckets
// spanning 4 KiB to 512 MiB. Pure powers of two give only 18 classes over
// that span (2^12 .. 2^29), so the pool follows Iggy's own table: powers of
// two up to 512 KiB, then the intermediate 1.5x steps (768 KiB, 1.5 MiB, 6
// MiB, 24 MiB, 48 MiB, 96 MiB, 192 MiB, 384 MiB) and 10/12 MiB between 8 and
// 16 MiB. Every class is a multiple of the 4 KiB page, which is what
// alignment and direct IO need; BucketSizes lists them.
//
// Memory source. Buffers come from the Go heap, not from anonymous mmap.
// A 4 GiB budget with 8192 buffers in each of 28 buckets would need up to
// 229,376 mappings, far over the kernel's default vm.max_map_count (65,530),
// and an mmap'd buffer that a caller forgets to return leaks for the life of
// the process, while a heap buffer is reclaimed by the collector. Go's
// allocator already places objects of these sizes on 4 KiB boundaries (the
// 4-32 KiB size classes live in spans whose object size divides the span
// alignment; larger objects start on runtime pages), so the pool asks for
// exactly the class size, checks the address, and only when the runtime did
// not align it over-allocates by one page and slices at the boundary
// (counted in Stats.AlignmentFallbacks).
//
// Ownership. Get hands out a Buffer owned by the caller, who may write it.
// Put returns it. Freeze turns it read-only and shareable: each holder
// calls Retain to take a reference and Release to drop it; the buffer goes
// back to its bucket when the last reference is released. Releasing a
// buffer that has no references left is a bug: with the `invariants` build
// tag it panics, otherwise it is counted in Stats.DoubleReleases and
// ignored.
//
// Budget. The pool owns the buffers it has handed out and the buffers cached
// in its buckets, and their total stays within the budget. A miss that would
// cross the budget first drops cached buffers of other sizes; if that is not
// enough, the buffer is allocated outside the pool (Stats.OutsideAllocations)
// and simply dropped when released. Requests over the largest class are
// always outside (Stats.OversizeAllocations counts them too).
//
// Idle release. A bucket keeps what is returned to it, so without more the
// buffers of one burst (a flood of large frames, a backlog of unflushed
// batches) would stay cached, and resident, for the life of the process.
// ReleaseIdle, run on a timer by the owner, drops what each bucket did not
// need since the previous run: the shortest its free list has been in
// between. A bucket in steady use keeps its working set; a burst's buffers
// are gone after two runs and the collector returns their memory.
//
// Concurrency. Every method is safe for concurrent use. Each bucket has its
// own mutex over an intrusive free list (no allocation on Put or Get of a
// cached buffer); counters are atomics. A lock-free Treiber stack was
// rejected: buffers are reused, so a pop racing a pop-and-push of the same
// buffer would suffer ABA. BenchmarkGetPutParallel measures the contention.
package pool
